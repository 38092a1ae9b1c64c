package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lab/results"
	"lab/results/matrix"
)

// lab reproduce without a guest: its plan, and what it refuses.

func TestCLIReproducePlan(t *testing.T) {
	cliEnv(t)
	r := cliRun(t, "reproduce", "E1.6", "E1.7", "E2.1", "--dry-run", "--out", t.TempDir())
	wantOutput(t, r, "reproduce E1.6 E1.7 E2.1 --dry-run", 0, "stdout",
		"5 claims, 7 runs", "celeron-2.4     forkbench/create    build=dynamic-O0 m=2000", "E1.6 E1.7", "rockhopper-2.4  forkbench/forktime", "host",
		"not run: E2.1c: untestable here", "estimate: about")
	r = cliRun(t, "reproduce", "E1", "--dry-run", "--json", "--out", t.TempDir())
	var plan struct {
		Claims []string `json:"claims"`
		Runs   []struct {
			Profile  string   `json:"profile"`
			Repeat   int      `json:"repeat"`
			Claims   []string `json:"claims"`
			Estimate float64  `json:"estimate_seconds"`
		} `json:"runs"`
		Estimate float64 `json:"estimate_seconds"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &plan); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if len(plan.Claims) < 10 || len(plan.Runs) == 0 || plan.Estimate <= 0 {
		t.Errorf("E1's plan: %+v", plan)
	}
	// Each run carries the estimate the table prints for it, and the
	// first round's is no less than the longest run's.
	longest := 0.0
	for _, run := range plan.Runs {
		if run.Estimate <= 0 {
			t.Errorf("E1's run on %s: estimate %v s; want it above 0", run.Profile, run.Estimate)
		}
		longest = max(longest, run.Estimate)
		for _, id := range run.Claims {
			if !strings.HasPrefix(id, "E1.") {
				t.Errorf("E1's plan runs %s on %s", id, run.Profile)
			}
		}
	}
	if plan.Estimate < longest {
		t.Errorf("E1's plan: estimate %v s, below its longest run's %v s", plan.Estimate, longest)
	}
}

func TestCLIReproduceRefuses(t *testing.T) {
	cliEnv(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "lab reproduce needs what to decide"},
		{[]string{"E9.9"}, `no claim "E9.9"`},
		{[]string{"E1.6", "--matrix", "icount"}, "--matrix prints a matrix file and needs --dry-run"},
		{[]string{"E1.6", "--dry-run", "--matrix", "tsc"}, "--matrix tsc: want icount or host"},
		{[]string{"E1.6", "--parallel", "99"}, "--parallel 99: want 1..16"},
		{[]string{"E1.6", "--budget", "-5m"}, "--budget -5m0s: want a positive duration"},
	} {
		r := cliRun(t, append([]string{"reproduce", "--out", t.TempDir()}, tt.args...)...)
		wantOutput(t, r, strings.Join(tt.args, " "), 1, "stderr", tt.want)
	}
}

// TestCLIOneWriterPerOut: while one lab reproduce or lab matrix holds an
// --out, another into it is refused before it runs anything, naming the
// first (issue 31: two ran the same cell twice at once).
func TestCLIOneWriterPerOut(t *testing.T) {
	cliEnv(t)
	out := t.TempDir()
	release, err := results.LockDir(out, "lab reproduce E1.6 --out "+out)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	r := cliRun(t, "reproduce", "E1.6", "--out", out)
	wantOutput(t, r, "reproduce E1.6 --out (held)", 1, "stderr", out+" is in use by `lab reproduce E1.6 --out "+out+"` (pid ", "give another --out")
	file := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(file, []byte("name: one\ncells:\n  - plugin: forkbench\n    experiment: forktime\n    profiles: [celeron-2.4]\n    params: {n: 20}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = cliRun(t, "matrix", file, "--out", out)
	wantOutput(t, r, "matrix --out (held)", 1, "stderr", out+" is in use by `lab reproduce E1.6", "give another --out")
	if st, ok, _ := matrix.LoadState(out); ok {
		t.Errorf("the refused matrix wrote its state: %+v", st)
	}
}
