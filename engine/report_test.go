package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/results"
	"lab/results/history"
)

// fakeStore runs forkbench's create (m=2000, 5 repeats) on the Celeron
// on fake VMs into a fresh store, runs times, and returns the store and
// the build.
func fakeStore(t *testing.T, runs int) (store string, roots Roots) {
	t.Helper()
	store = t.TempDir()
	roots = Roots{Plugins: fakeBuild(t, "forkbench"), TempDir: t.TempDir(), Profiles: t.TempDir()}
	for i := 0; i < runs; i++ {
		req := Request{Plugin: "forkbench", Experiment: "create", Params: map[string]string{"m": "2000"}, Repeat: 5, Timeout: time.Minute,
			Profiles: []string{"celeron-2.4"}, Out: store, Roots: roots}
		if _, err := Do(context.Background(), req, Options{machines: &fakeMachines{}}); err != nil {
			t.Fatal(err)
		}
	}
	return store, roots
}

// TestClaimStatusesFromStore: every installed claim, each judged from the
// store: E1.6 from the fake runs (their process/thread ratio is 10),
// the others not run; a torn file is a warning, not a failure.
func TestClaimStatusesFromStore(t *testing.T) {
	store, roots := fakeStore(t, 1)
	if err := os.WriteFile(filepath.Join(store, "torn.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	sts, warnings := ClaimStatuses(roots.Plugins, roots.Profiles, store, false)
	if len(sts) == 0 {
		t.Fatal("no claims")
	}
	var e16 string
	notRun := 0
	for _, s := range sts {
		if s.Claim.ID == "E1.6" {
			e16 = s.Verdict
		}
		if s.Verdict == results.NotRun {
			notRun++
		}
	}
	if e16 == "" || e16 == results.NotRun || notRun == 0 {
		t.Errorf("E1.6 %q, %d not run: want E1.6 judged from the run, the other experiments' claims not run", e16, notRun)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "torn.json") {
		t.Errorf("warnings %v, want the torn file", warnings)
	}
	// An empty store: no claim reproduced or not (some are not
	// comparable, or untestable, whatever runs), no warning.
	sts, warnings = ClaimStatuses(roots.Plugins, roots.Profiles, t.TempDir(), false)
	for _, s := range sts {
		if s.Verdict == results.Reproduced || s.Verdict == results.NotReproduced {
			t.Errorf("empty store: %s %s", s.Claim.ID, s.Verdict)
		}
	}
	if len(warnings) != 0 {
		t.Errorf("empty store: warnings %v", warnings)
	}
}

// TestReportInput: the report's experiments are those the filter picks,
// its runs those it passes, its claims judged from them, the torn file
// named on the page.
func TestReportInput(t *testing.T) {
	store, roots := fakeStore(t, 2)
	if err := os.WriteFile(filepath.Join(store, "torn.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, warnings, skipped := Report(ReportRequest{Store: store, Filter: results.Filter{Plugin: "forkbench", Experiment: "create"}, Plugins: roots.Plugins,
		ProfileDir: roots.Profiles, Version: "lab test", Generated: time.Now()})
	if len(warnings) != 0 {
		t.Errorf("warnings %v", warnings)
	}
	if len(skipped) != 1 || len(in.Skipped) != 1 || !strings.Contains(in.Skipped[0], "torn.json") {
		t.Errorf("skipped %v / %v, want the torn file", skipped, in.Skipped)
	}
	if len(in.Experiments) != 1 || in.Experiments[0].Name != "create" || len(in.Runs) != 2 {
		t.Fatalf("%d experiments, %d runs; want create and its 2 runs", len(in.Experiments), len(in.Runs))
	}
	for _, c := range in.Claims {
		if c.Claim.Bench != "create" {
			t.Errorf("claim %s of %s on a page filtered to create", c.Claim.ID, c.Claim.Bench)
		}
	}
	if len(in.Claims) == 0 {
		t.Error("no claims judged")
	}
}

// TestHistoryOfNights: two nights' stores, each night's claims judged from
// its runs alone.
func TestHistoryOfNights(t *testing.T) {
	first, roots := fakeStore(t, 1)
	second, _ := fakeStore(t, 1)
	h, warnings, skipped, err := History(HistoryRequest{Nights: []string{first, second}, Plugins: roots.Plugins, ProfileDir: roots.Profiles, Options: history.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 || len(skipped) != 0 {
		t.Errorf("warnings %v, skipped %v", warnings, skipped)
	}
	if len(h.Nights) != 2 || len(h.Claims) == 0 {
		t.Fatalf("%d nights, %d claims", len(h.Nights), len(h.Claims))
	}
	if _, _, _, err := History(HistoryRequest{Plugins: roots.Plugins}); err == nil || !strings.Contains(err.Error(), "no nights given") {
		t.Errorf("no nights: %v", err)
	}
}
