package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lab/results"
	"lab/results/compare"
	"lab/results/render"
)

// TestIntegrationResultsAndCompare makes real forkbench runs in a
// celeron-2.4 guest and reads them back with lab results and lab compare:
// forktime with n=50 and n=400 forks per repeat, so real_s (the whole
// loop) grows about eightfold while fork_wait_us (per fork) stays, within
// the noise of a shared host (compared with --force: other parameters are
// refused otherwise); a corrupt file in the store is named and skipped.
func TestIntegrationResultsAndCompare(t *testing.T) {
	const profile = "celeron-2.4"
	p := itProfile(t, profile)
	itBootEnv(t, p)
	itUp(t, profile, profile)
	dir := itResultsDir(t)
	a, _ := itRunJSON(t, 0, "forkbench", "--vm", profile, "-e", "forktime", "-p", "n=50", "--repeat", "6")
	b, _ := itRunJSON(t, 0, "forkbench", "--vm", profile, "-e", "forktime", "-p", "n=400", "--repeat", "6")
	// Another plugin's run, for the filters.
	c, _ := itRunJSON(t, 0, "forkbench", "--vm", profile, "-e", "create", "-p", "m=50")
	bad := filepath.Join(dir, "20260101T000000.000000Z-forkbench-forktime-bad000.json")
	if err := os.WriteFile(bad, []byte(`{"id": "20260101T000000.000000Z-forkbench-forktime-bad000", "samples": [`), 0o644); err != nil {
		t.Fatal(err)
	}

	r := itMust(t, itCallTimeout, nil, "results", "--results", dir)
	for _, id := range []string{a.ID, b.ID, c.ID} {
		if !strings.Contains(r.stdout, id) {
			t.Errorf("lab results does not list %s:\n%s", id, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "bad000.json") || !strings.Contains(r.stderr, "skipped") {
		t.Errorf("lab results does not name the corrupt file it skipped:\n%s", r.stderr)
	}
	r = itMust(t, itCallTimeout, nil, "results", "--results", dir, "--experiment", "create", "--json")
	var picked []results.Result
	if err := json.Unmarshal([]byte(r.stdout), &picked); err != nil || len(picked) != 1 || picked[0].ID != c.ID {
		t.Errorf("lab results --experiment create --json: %v, %d runs:\n%s", err, len(picked), r.stdout)
	}
	r = itMust(t, itCallTimeout, nil, "results", "--results", dir, "--plugin", "forkbench", "--format", "junit")
	var doc render.JUnitSuites
	if err := xml.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Suites) != 3 {
		t.Errorf("lab results --format junit: %v, %d suites:\n%s", err, len(doc.Suites), r.stdout)
	}
	r = itMust(t, itCallTimeout, nil, "results", "show", a.ID[:20], "--results", dir, "--format", "csv")
	if n := strings.Count(r.stdout, "\n"); n != len(a.Samples)+1 || !strings.HasPrefix(r.stdout, strings.Join(render.CSVHeader, ",")) {
		t.Errorf("lab results show --format csv: %d lines for %d samples:\n%s", n, len(a.Samples), r.stdout)
	}

	// n=50 against n=400 measures the parameter, not the code: refused,
	// naming it, unless --force.
	r = itLab(t, itCallTimeout, nil, "compare", a.ID, b.ID, "--results", dir)
	if r.code == 0 || !strings.Contains(r.stderr, "n=50") || !strings.Contains(r.stderr, "n=400") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("lab compare n=50 n=400: exit %d, want a refusal naming the parameters:\n%s", r.code, r.stderr)
	}
	r = itMust(t, itCallTimeout, nil, "compare", a.ID, b.ID, "--results", dir, "--json", "--force")
	t.Logf("lab compare A B --force:\n%s", itMust(t, itCallTimeout, nil, "compare", a.ID, b.ID, "--results", dir, "--force").stdout)
	var rep compare.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("lab compare --json: %v\n%s", err, r.stdout)
	}
	changes := map[string]compare.Change{}
	for _, ch := range rep.Changes {
		changes[ch.Metric] = ch
	}
	if rs := changes["real_s"]; !rs.Significant || !rs.Regression || rs.Percent < 200 || rs.A.N != 6 || rs.A.CI == "" {
		t.Errorf("real_s from 100 to 200 forks a repeat: %+v, want a significant rise of several times", rs)
	}
	if fw := changes["fork_wait_us"]; fw.Percent > 200 || fw.Percent < -67 {
		t.Errorf("fork_wait_us per fork changed %+.0f%% between n=50 and n=400", fw.Percent)
	}
	r = itLab(t, itCallTimeout, nil, "compare", a.ID, b.ID, "--results", dir, "--fail-on-regression", "150", "--force")
	if r.code != 1 || !strings.Contains(r.stderr, "real_s") || !strings.Contains(r.stderr, "regression") {
		t.Errorf("--fail-on-regression 150: exit %d, want 1 naming real_s:\n%s", r.code, r.stderr)
	}
	// Sets of runs by filter; the corrupt file is skipped, not fatal.
	r = itMust(t, itCallTimeout, nil, "compare", "experiment=forktime", b.ID, "--results", dir, "--json", "--force")
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.A.Runs) != 2 || !strings.Contains(r.stderr, "bad000.json") {
		t.Errorf("lab compare experiment=forktime B: %v, side A %v; stderr:\n%s", err, rep.A.Runs, r.stderr)
	}
	// Runs of two profiles are refused unless --force: b as if run on
	// another profile (the refusal is pure logic; TestCheckComparable
	// covers each field).
	other := *b
	other.ID = strings.Replace(b.ID, "forktime", "forktime-p4", 1)
	other.Machine.Profile = map[string]any{"name": "p4-2.4"}
	if _, err := results.Save(dir, &other); err != nil {
		t.Fatal(err)
	}
	r = itLab(t, itCallTimeout, nil, "compare", a.ID, other.ID, "--results", dir)
	if r.code == 0 || !strings.Contains(r.stderr, "p4-2.4") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("lab compare across profiles: exit %d:\n%s", r.code, r.stderr)
	}
	itMust(t, itCallTimeout, nil, "compare", a.ID, other.ID, "--results", dir, "--force")
}
