package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/internal/labtest"
)

// TestIntegrationGoBenchExport: two real runs of one cell, exported with
// `lab results show ID --format gobench`, are read by the real benchstat
// (golang.org/x/perf/cmd/benchstat, built from the module cache at the
// version go.mod requires) as two columns of one table, a row per metric,
// times in sec/op.
func TestIntegrationGoBenchExport(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)
	benchstat := itBuildBenchstat(t)
	store := itResultsDir(t)
	dir := t.TempDir()
	for _, file := range []string{"old.txt", "new.txt"} {
		res, _ := itRunJSON(t, 0, "forkbench", "--profile", p.Name, "--clock", "icount:0", "-e", "forktime", "-p", "n=200", "--repeat", "4")
		r := itMust(t, itCallTimeout, nil, "results", "show", res.ID, "--results", store, "--format", "gobench")
		if n := strings.Count(r.stdout, "\nBenchmark"); n != len(res.Samples) {
			t.Errorf("%s: %d benchmark lines for %d samples:\n%s", res.ID, n, len(res.Samples), r.stdout)
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(benchstat, "old.txt", "new.txt")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("benchstat old.txt new.txt:\n%s", out)
	if err != nil {
		t.Fatalf("benchstat old.txt new.txt: %v", err)
	}
	text := string(out)
	for _, want := range []string{"pkg: lab/forkbench", "goarch: 386", "old.txt", "new.txt", "sec/op", "x/op",
		"Forkbench/forktime/profile=celeron-2.4/clock=icount:0/n=200/metric=fork_wait_us",
		"Forkbench/forktime/profile=celeron-2.4/clock=icount:0/n=200/metric=thread_create_join_us"} {
		if !strings.Contains(text, want) {
			t.Errorf("benchstat's output lacks %q", want)
		}
	}
	// One table per unit, each with both files' columns: benchstat found
	// the rows of one cell in both files, with their 4 samples.
	var rows int
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "metric=fork_wait_us") {
			rows++
			if f := strings.Fields(line); len(f) < 5 || !strings.Contains(line, "n=4") {
				t.Errorf("benchstat row %q: want old and new values with n=4", line)
			}
		}
	}
	if rows != 1 {
		t.Errorf("benchstat shows fork_wait_us in %d rows, want 1 (one table, both columns)", rows)
	}
	if strings.Contains(text, "benchmark set differs") {
		t.Errorf("benchstat says the two exports hold different benchmarks")
	}
}

// itBuildBenchstat builds golang.org/x/perf/cmd/benchstat from the module
// (go.mod requires x/perf, go.sum pins it) and returns its path.
func itBuildBenchstat(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		labtest.Unavailable(t, "go not on $PATH: needed to build benchstat")
	}
	repo, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "benchstat")
	cmd := exec.Command(goBin, "build", "-o", bin, "golang.org/x/perf/cmd/benchstat")
	cmd.Dir = repo
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build golang.org/x/perf/cmd/benchstat: %v\n%s", err, out)
	}
	t.Logf("benchstat built in %.1fs", time.Since(start).Seconds())
	return bin
}
