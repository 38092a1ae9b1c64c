package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/results"
)

// storedRun saves a forkbench run started at start with params into dir
// and returns it: enough of a result for lab results and lab compare.
func storedRun(t *testing.T, dir, id, experiment string, start time.Time, params map[string]string, vals ...float64) *results.Result {
	t.Helper()
	r := &results.Result{
		ID: id, Started: start, Finished: start.Add(time.Minute),
		Plugin: "forkbench", Experiment: experiment, Parameters: params,
		Machine: results.MachineRecord{Profile: map[string]any{"name": "celeron-2.4"}, Accelerator: "tcg", Clock: "host"},
		Outcome: results.Outcome{Status: "ok"},
	}
	for i, v := range vals {
		r.Samples = append(r.Samples, results.Sample{Metric: "real_s", Value: v, Unit: "s", Repeat: i})
	}
	if _, err := results.Save(dir, r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestCLIResultsNotAResult: a JSON file in the store that is not a run
// (`{}`, `null`) is no ghost row of lab results: it is named on stderr and
// skipped, and lab results show refuses it (issue 22 item 11).
func TestCLIResultsNotAResult(t *testing.T) {
	cliEnv(t)
	dir := t.TempDir()
	setEnv(t, "LAB_RESULTS_DIR", dir)
	run := storedRun(t, dir, "20260102T150405.000000Z-forkbench-forktime-abcdef", "forktime", time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC), nil, 1, 2, 3)
	for _, n := range []string{"empty.json", "null.json"} {
		doc := "{}"
		if n == "null.json" {
			doc = "null"
		}
		if err := os.WriteFile(filepath.Join(dir, n), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := cliRun(t, "results")
	wantOutput(t, r, "results", 0, "stdout", run.ID)
	wantOutput(t, r, "results", 0, "stderr", "empty.json", "null.json", "not a result", "skipped")
	if strings.Contains(r.stdout, "0001-01-01") || strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("lab results lists more than the one run:\n%s", r.stdout)
	}
	r = cliRun(t, "results", "show", filepath.Join(dir, "empty.json"))
	wantOutput(t, r, "results show empty.json", 1, "stderr", "not a result")
}

// TestCLILatest: latest is the newest run by its recorded time among the
// files that load; an empty zero.json in the store (last by name) is named
// and skipped, not fatal to lab compare X latest (issue 22 item 10).
func TestCLILatest(t *testing.T) {
	cliEnv(t)
	dir := t.TempDir()
	setEnv(t, "LAB_RESULTS_DIR", dir)
	t0 := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	a := storedRun(t, dir, "20260102T150405.000000Z-forkbench-forktime-aaaaaa", "forktime", t0, nil, 1, 1.1, 0.9, 1, 1.05, 0.95)
	b := storedRun(t, dir, "20260102T160405.000000Z-forkbench-forktime-bbbbbb", "forktime", t0.Add(time.Hour), nil, 1, 1.1, 0.9, 1, 1.05, 0.95)
	if err := os.WriteFile(filepath.Join(dir, "zero.json"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := cliRun(t, "compare", a.ID, "latest", "--json")
	wantOutput(t, r, "compare A latest", 0, "stdout", b.ID)
	wantOutput(t, r, "compare A latest", 0, "stderr", "zero.json", "skipped")
	r = cliRun(t, "results", "show", "latest", "--json")
	wantOutput(t, r, "results show latest", 0, "stdout", b.ID)
}

// TestCLICompareUnlikeRuns: lab compare refuses runs of other parameters
// or another experiment, naming the difference, as it refuses other
// profiles and clocks; --force compares them anyway (issue 22 item 9).
func TestCLICompareUnlikeRuns(t *testing.T) {
	cliEnv(t)
	dir := t.TempDir()
	setEnv(t, "LAB_RESULTS_DIR", dir)
	t0 := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	n50 := storedRun(t, dir, "20260102T150405.000000Z-forkbench-forktime-aaaaaa", "forktime", t0, map[string]string{"n": "50", "repeat": "6"}, 1, 1.1, 0.9, 1, 1.05, 0.95)
	n400 := storedRun(t, dir, "20260102T160405.000000Z-forkbench-forktime-bbbbbb", "forktime", t0.Add(time.Hour), map[string]string{"n": "400", "repeat": "6"}, 8, 8.8, 7.2, 8, 8.4, 7.6)
	create := storedRun(t, dir, "20260102T170405.000000Z-forkbench-create-cccccc", "create", t0.Add(2*time.Hour), map[string]string{"n": "50", "repeat": "6"}, 8, 8.8, 7.2, 8, 8.4, 7.6)

	r := cliRun(t, "compare", n50.ID, n400.ID, "--fail-on-regression", "5")
	wantOutput(t, r, "compare n=50 n=400", 1, "stderr", "n=50", "n=400", "--force")
	if strings.Contains(r.stdout, "worse") {
		t.Errorf("lab compare n=50 n=400 printed a comparison:\n%s", r.stdout)
	}
	r = cliRun(t, "compare", n50.ID, create.ID)
	wantOutput(t, r, "compare forktime create", 1, "stderr", "forkbench/forktime", "forkbench/create", "--force")
	r = cliRun(t, "compare", "experiment=forktime", create.ID)
	wantOutput(t, r, "compare experiment=forktime (n=50 and n=400 pooled)", 1, "stderr", "n=50", "n=400", "--force")

	r = cliRun(t, "compare", n50.ID, n400.ID, "--force", "--fail-on-regression", "5")
	wantOutput(t, r, "compare n=50 n=400 --force", 1, "stdout", "real_s", "(worse)")
	wantOutput(t, r, "compare n=50 n=400 --force", 1, "stderr", "regression")

	// Stores compared cell by cell pair only like cells already.
	r = cliRun(t, "compare", n50.ID, n50.ID)
	wantOutput(t, r, "compare A A", 0, "stdout", "real_s")
}
