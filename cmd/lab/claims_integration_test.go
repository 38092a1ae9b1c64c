package main

import (
	"encoding/json"
	"strings"
	"testing"

	"lab/results"
	rclaims "lab/results/claims"
)

// TestIntegrationClaims runs both forkbench experiments in a real
// celeron-2.4 guest with enough repeats for the rank test and checks that
// each of forkbench's claims gets a verdict other than `not run`, in the
// result, in the summary (which leads with it) and in `lab claims`.
func TestIntegrationClaims(t *testing.T) {
	const profile = "celeron-2.4"
	p := itProfile(t, profile)
	itBootEnv(t, p)
	itUp(t, profile, profile)
	dir := itResultsDir(t)

	verdicts := map[string]results.Verdict{}
	for _, args := range [][]string{
		{"-e", "forktime", "-p", "n=200", "--repeat", "4"},
		{"-e", "create", "-p", "m=300", "--repeat", "4"},
	} {
		res, _ := itRunJSON(t, 0, append([]string{"forkbench", "--vm", profile}, args...)...)
		if res.Schema != results.SchemaVersion {
			t.Errorf("result schema %d, want %d", res.Schema, results.SchemaVersion)
		}
		for _, v := range res.Verdicts {
			t.Logf("%s %s: %s (%s)", v.Claim, v.Verdict, v.Reason, v.Note)
			verdicts[v.Claim] = v
			if len(v.Runs) != 1 || v.Runs[0] != res.ID || len(v.Numbers) == 0 {
				t.Errorf("verdict on %s does not carry its run and numbers: %+v", v.Claim, v)
			}
		}
	}
	for _, id := range []string{"E1.6", "E1.7", "E2.1"} {
		v, ok := verdicts[id]
		if !ok || !v.Decided() {
			t.Errorf("claim %s: verdict %+v, want one other than not run", id, v)
		}
	}
	// Under the host clock E1.7, an absolute time, is not comparable.
	if v := verdicts["E1.7"]; v.Verdict != results.NotComparable || !strings.Contains(v.Reason, "emulation speed") {
		t.Errorf("E1.7 under the host clock: %+v, want not comparable", v)
	}

	// The summary leads with the claims.
	r := itMust(t, itRunTimeout, nil, "run", "forkbench", "--vm", profile, "-e", "forktime", "-p", "n=100", "--out", dir)
	if !strings.HasPrefix(r.stdout, "claims of forkbench/forktime, run on celeron-2.4") || !strings.Contains(r.stdout, "E2.1  inconclusive") {
		t.Errorf("lab run summary does not lead with the claims (one repeat: E2.1 inconclusive):\n%s", r.stdout)
	}

	r = itMust(t, itCallTimeout, nil, "claims", "--json", "--results", dir)
	var sts []rclaims.ClaimStatus
	if err := json.Unmarshal([]byte(r.stdout), &sts); err != nil {
		t.Fatalf("lab claims --json: %v\n%s", err, r.stdout)
	}
	seen := map[string]bool{}
	for _, s := range sts {
		if s.Claim.Plugin != "forkbench" {
			continue
		}
		seen[s.Claim.ID] = true
		if s.Verdict == results.NotRun || len(s.Judged.Strata) == 0 || s.Judged.Strata[0].Profile != profile {
			t.Errorf("lab claims: %s is %q (strata %+v), want a verdict from a %s run", s.Claim.ID, s.Verdict, s.Judged.Strata, profile)
		}
	}
	if len(seen) != 3 {
		t.Errorf("lab claims lists forkbench claims %v, want E1.6, E1.7, E2.1", seen)
	}
}
