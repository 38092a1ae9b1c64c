package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lab/results"
	"lab/results/matrix"
)

// TestCLIMatrixInProcess: lab matrix runs its cells in this process, not
// as child `lab run`s: with $LAB_EXE (which named the child's binary) a
// script that would leave a mark, and the cell's VM unable to boot (no
// supervisor binary), the cell fails twice (no result: retried once),
// its log says why, and the script never ran.
func TestCLIMatrixInProcess(t *testing.T) {
	cliEnv(t)
	dir := t.TempDir()
	mark := filepath.Join(dir, "exec'd")
	exe := filepath.Join(dir, "lab")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\ntouch '"+mark+"'\nexit 99\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	setEnv(t, "LAB_EXE", exe)
	file := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(file, []byte("name: one\ncells:\n  - plugin: forkbench\n    experiment: forktime\n    profiles: [celeron-2.4]\n    params: {n: 20}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	r := cliRun(t, "matrix", file, "--out", out)
	wantOutput(t, r, "matrix", 1, "stderr", "matrix one: 1 cells; running 1, 1 at a time", "running it once more", "[1/1] celeron-2.4/forkbench/forktime/n=20: failed", "1 of 1 cells failed")
	if _, err := os.Stat(mark); err == nil {
		t.Errorf("$LAB_EXE ran: lab matrix started a child lab")
	}
	st, ok, err := matrix.LoadState(out)
	if err != nil || !ok || len(st.Cells) != 1 || st.Cells[0].Attempts != 2 || st.Cells[0].Status != "failed" {
		t.Fatalf("state %+v (%v, %v); want one failed cell, 2 attempts", st, ok, err)
	}
	log, err := os.ReadFile(filepath.Join(out, "logs", "celeron-2.4_forkbench_forktime_n-20.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(log), "== attempt") != 2 || !strings.Contains(string(log), "lab: ") || !strings.Contains(string(log), "lab run forkbench --profile celeron-2.4") {
		t.Errorf("cell log:\n%s", log)
	}
	if st.Cells[0].Error == "" || !strings.Contains(string(log), st.Cells[0].Error) {
		t.Errorf("cell error %q is not in its log:\n%s", st.Cells[0].Error, log)
	}
	// Results and the logs of the runs that made them are private, as
	// lab run's results are (issue 22 item 14).
	for p, want := range map[string]os.FileMode{
		results.StoreDir(out):      0o700,
		filepath.Join(out, "logs"): 0o700,
		filepath.Join(out, "logs", "celeron-2.4_forkbench_forktime_n-20.log"): 0o600,
	} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode().Perm(), err, want)
		}
	}
}

// TestCLIMatrixChecksCreateNothing: `lab matrix --dry-run` and a matrix
// that fails its checks leave no OUT/results behind (issue 22 item 12:
// planning each cell as a run created the store).
func TestCLIMatrixChecksCreateNothing(t *testing.T) {
	cliEnv(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	cell := "name: one\ncells:\n  - plugin: forkbench\n    experiment: forktime\n    profiles: [celeron-2.4]\n"
	if err := os.WriteFile(good, []byte(cell+"    params: {n: 20}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(cell+"    params: {n: -1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"matrix", good, "--dry-run"}, 0},
		{[]string{"matrix", bad}, 1},
	} {
		out := filepath.Join(dir, "out-"+filepath.Base(tt.args[1]))
		r := cliRun(t, append(tt.args, "--out", out)...)
		if r.code != tt.code {
			t.Errorf("lab %s: exit %d, want %d\n%s", strings.Join(tt.args, " "), r.code, tt.code, r.stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("lab %s left %s behind (stat: %v)", strings.Join(tt.args, " "), out, err)
		}
	}
}

// TestCLIMatrixEmptyShard: a shard of a matrix with fewer cells than
// shards says it has none and why (issue 31: it said nothing), and is
// not an error: a CI job's shard count is fixed.
func TestCLIMatrixEmptyShard(t *testing.T) {
	cliEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(file, []byte("name: one\ncells:\n  - plugin: forkbench\n    experiment: forktime\n    profiles: [celeron-2.4]\n    params: {n: 20}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cliRun(t, "matrix", file, "--shard", "3/4", "--dry-run", "--out", filepath.Join(dir, "out"))
	wantOutput(t, r, "matrix --shard 3/4 --dry-run", 0, "stderr", "shard 3/4 has no cells: the matrix has 1, fewer than its 4 shards")
}
