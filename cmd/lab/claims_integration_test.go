package main

import (
	"encoding/json"
	"strings"
	"testing"

	"lab/results"
	rclaims "lab/results/claims"
)

// TestIntegrationClaims runs forkbench's create experiment in a real
// celeron-2.4 guest at the size E1.6 and E1.7 are scoped to, with enough
// repeats for E1.6's test, and forktime there too, which is out of E2.1's
// scope (E2's machines are the Pentium 4 and Rockhopper). E1.6 gets a
// verdict other than not run, in the result and in `lab claims`; E1.7 (an
// absolute time, icount only), E2.1a and E2.1b are not run, each listing
// the run out of its scope, and E2.1c is untestable here; the summary
// leads with the claims.
func TestIntegrationClaims(t *testing.T) {
	const profile = "celeron-2.4"
	p := itProfile(t, profile)
	itBootEnv(t, p)
	itUp(t, profile, profile)
	dir := itResultsDir(t)

	res, _ := itRunJSON(t, 0, "forkbench", "--vm", profile, "-e", "create", "-p", "m=2000", "--repeat", "5", "--out", dir)
	if res.Schema != results.SchemaVersion {
		t.Errorf("result schema %d, want %d", res.Schema, results.SchemaVersion)
	}
	verdicts := map[string]results.Verdict{}
	for _, v := range res.Verdicts {
		t.Logf("%s %s: %s", v.Claim, v.Verdict, v.Reason)
		verdicts[v.Claim] = v
	}
	if v := verdicts["E1.6"]; !v.Judged() || len(v.Runs) != 1 || v.Runs[0] != res.ID || len(v.Numbers) == 0 || len(v.Strata) != 1 {
		t.Errorf("E1.6: %+v, want a verdict from this run with its numbers and one stratum", v)
	}
	// E1.7, an absolute time, is scoped to icount: under the host clock
	// the run is out of its scope, and the verdict says why; its band is
	// narrower than its calibration, so it is not comparable up front.
	if v := verdicts["E1.7"]; v.Verdict != results.NotComparable || !strings.Contains(v.Reason, "can never be reproduced") ||
		len(v.OutOfScope) != 1 || !strings.Contains(v.OutOfScope[0].Reason, "clock host not in scope") {
		t.Errorf("E1.7 under the host clock: %+v, want not comparable before any run, out of scope for the clock", v)
	}

	// The article's own build (gcc -o forkcreat forkcreat.c: dynamically
	// linked, -O0) runs against the guest's shared libc, and is a stratum
	// of its own.
	dyn, _ := itRunJSON(t, 0, "forkbench", "--vm", profile, "-e", "create", "-p", "m=2000", "-p", "build=dynamic-O0", "--repeat", "5", "--out", dir)
	if dyn.Outcome.Status != "ok" || dyn.Parameters["build"] != "dynamic-O0" || len(itSeries(dyn, "process_ms", nil)) != 5 {
		t.Fatalf("create built dynamic-O0: outcome %+v, parameters %v", dyn.Outcome, dyn.Parameters)
	}
	var e16 results.Verdict
	for _, v := range dyn.Verdicts {
		if v.Claim == "E1.6" {
			e16 = v
		}
	}
	if len(e16.Strata) != 1 || e16.Strata[0].Build != "dynamic-O0" || !e16.Judged() {
		t.Errorf("E1.6 from the dynamic build: %+v, want a verdict of its build-dynamic-O0 stratum", e16)
	}

	// Two repeats more of the dynamic build's cell (issue 33): taken from
	// the stored run, named in the new result, judged with it.
	more, _ := itRunJSON(t, 0, "forkbench", "--vm", profile, "--add-to", dyn.ID, "--repeat", "2", "--out", dir)
	if more.AddTo != dyn.ID || more.Experiment != "create" || more.Parameters["build"] != "dynamic-O0" || more.Parameters["m"] != "2000" ||
		more.Parameters["repeat"] != "2" || len(itSeries(more, "process_ms", nil)) != 2 {
		t.Errorf("--add-to %s: adds to %q, experiment %s, parameters %v", dyn.ID, more.AddTo, more.Experiment, more.Parameters)
	}
	for _, v := range more.Verdicts {
		if v.Claim == "E1.6" && (len(v.Runs) != 2 || !strings.Contains(v.Reason, "7 pairs")) {
			t.Errorf("E1.6 of the added repeats: %s (runs %v), want both runs' 7 pairs", v.Reason, v.Runs)
		}
	}
	// Another cell is refused before anything runs, naming what differs.
	before, _ := results.List(dir)
	r := itLab(t, itCallTimeout, nil, "run", "forkbench", "--vm", profile, "--add-to", dyn.ID, "-e", "create", "-p", "m=3000", "--repeat", "2", "--out", dir)
	if after, _ := results.List(dir); r.code == 0 || !strings.Contains(r.stderr, "m=2000, not 3000") || len(after) != len(before) {
		t.Errorf("--add-to a run of another cell: exit %d, %d results before, %d after:\n%s", r.code, len(before), len(after), r.stderr)
	}

	// The summary leads with the claims; forktime on the Celeron is out
	// of E2.1a's scope, and E2.1c is a property of Solaris.
	r = itMust(t, itRunTimeout, nil, "run", "forkbench", "--vm", profile, "-e", "forktime", "-p", "n=100", "--out", dir)
	if !strings.HasPrefix(r.stdout, "claims of forkbench/forktime, run on celeron-2.4") || !strings.Contains(r.stdout, "E2.1c  untestable here") ||
		!strings.Contains(r.stdout, "profile celeron-2.4 not in scope") {
		t.Errorf("lab run summary does not lead with the claims (E2.1a out of scope, E2.1c untestable):\n%s", r.stdout)
	}

	r = itMust(t, itCallTimeout, nil, "claims", "--json", "--results", dir)
	var sts []rclaims.ClaimStatus
	if err := json.Unmarshal([]byte(r.stdout), &sts); err != nil {
		t.Fatalf("lab claims --json: %v\n%s", err, r.stdout)
	}
	byID := map[string]rclaims.ClaimStatus{}
	for _, s := range sts {
		if s.Claim.Plugin == "forkbench" {
			byID[s.Claim.ID] = s
		}
	}
	if s := byID["E1.6"]; s.Verdict == results.NotRun || len(s.Judged.Strata) != 2 || s.Judged.Strata[0].Profile != profile ||
		s.Judged.Strata[0].Build != "dynamic-O0" || s.Judged.Strata[1].Build != "static-O2" {
		t.Errorf("lab claims: E1.6 is %q (strata %+v), want a verdict from the %s runs, a stratum a build", s.Verdict, s.Judged.Strata, profile)
	} else if runs := s.Judged.Strata[0].Runs; len(runs) != 2 || !strings.Contains(s.Judged.Strata[0].Reason, "7 pairs") {
		t.Errorf("lab claims: E1.6's dynamic-O0 stratum is decided by %v (%s), want the run and the one adding to it", runs, s.Judged.Strata[0].Reason)
	}
	if s := byID["E1.7"]; s.Verdict != results.NotComparable || len(s.Judged.OutOfScope) != 3 {
		t.Errorf("lab claims: E1.7 is %q (out of scope %+v), want not comparable with the three host-clock create runs out of scope", s.Verdict, s.Judged.OutOfScope)
	}
	if s := byID["E2.1a"]; s.Verdict != results.NotRun || len(s.Judged.OutOfScope) != 1 {
		t.Errorf("lab claims: E2.1a = %q, out of scope %+v; want not run with the forktime run out of scope", s.Verdict, s.Judged.OutOfScope)
	}
	if s := byID["E2.1c"]; s.Verdict != results.Untestable {
		t.Errorf("lab claims: E2.1c = %q, want untestable here", s.Verdict)
	}
	if len(byID) != 7 {
		t.Errorf("lab claims lists forkbench claims %v, want E1.6, E1.7, E1.10, E1.11, E2.1a, E2.1b, E2.1c", byID)
	}
}
