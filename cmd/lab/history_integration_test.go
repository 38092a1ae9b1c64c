package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/internal/labtest"
	"lab/results"
	"lab/results/history"
)

// itSlowedSyscallbench builds examples/syscallbench twice into dirs of
// their own: as it is, and with its workload made slower (two getppid()
// calls for each one it times, a regression in the plugin's C code), the
// same plugin name and version. It returns both plugin directories.
func itSlowedSyscallbench(t *testing.T) (normal, slowed string) {
	t.Helper()
	repo, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "syscallbench")
	for _, f := range []string{"description.json", "go.mod", "go.sum", "main.go", "workload/getppid.c"} {
		b, err := os.ReadFile(filepath.Join(repo, "examples", "syscallbench", f))
		if err != nil {
			t.Fatal(err)
		}
		switch f {
		case "go.mod":
			b = []byte(strings.Replace(string(b), "replace lab => ../..", "replace lab => "+repo, 1))
		case "workload/getppid.c":
			loop := "syscall(SYS_getppid); /* not the libc wrapper: it must enter the kernel */"
			if !strings.Contains(string(b), loop) {
				t.Fatalf("getppid.c has no %q to slow down", loop)
			}
			// The loop's body is that one statement: a block of two.
			b = []byte(strings.Replace(string(b), loop, "{ syscall(SYS_getppid); syscall(SYS_getppid); } /* the regression */", 1))
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	normal, slowed = t.TempDir(), t.TempDir()
	itMust(t, 5*time.Minute, nil, "plugin", "build", "--out", normal, filepath.Join(repo, "examples", "syscallbench"))
	itMust(t, 5*time.Minute, nil, "plugin", "build", "--out", slowed, src)
	return normal, slowed
}

// TestIntegrationHistoryNights: six nights of a small nightly matrix
// under icount:0 (syscallbench's getppid and forkbench's forktime on
// celeron-2.4, and the cell that decides E1.3b on split-3g1g), real
// runs, the workload of syscallbench made slower from the fourth night
// on. lab history finds that change, on that night, and no other;
// --fail-on-change fails on it; E1.3b has a verdict every night and
// does not flip.
func TestIntegrationHistoryNights(t *testing.T) {
	itBootEnv(t, itProfile(t, "celeron-2.4"), itProfile(t, "split-3g1g"))
	normal, slowed := itSlowedSyscallbench(t)
	file := itMatrixFile(t, `name: nightly
clock: icount:0
cells:
  - plugin: syscallbench
    experiment: getppid
    profiles: [celeron-2.4]
    params: {n: 2000}
    repeat: 3
  - plugin: forkbench
    experiment: forktime
    profiles: [celeron-2.4]
    params: {n: 100}
    repeat: 3
  # E1.3b, as examples/ci/nightly.yaml has it
  - plugin: threadbench
    experiment: limit
    profiles: [split-3g1g]
    params: {faithful: true, stack_kb: 8192}
    sweep: {workers: [255, 350, 500]}
    repeat: 3
`)
	nights := t.TempDir()
	start := time.Now()
	for i := 1; i <= 6; i++ {
		dir := normal
		if i >= 4 {
			dir = slowed
		}
		setEnv(t, "LAB_PLUGIN_PATH", dir)
		itMust(t, 5*time.Minute, nil, "matrix", file, "--out", filepath.Join(nights, fmt.Sprintf("night-%d", i)), "--parallel", "1")
	}
	t.Logf("6 nights of 3 cells in %.0f s", time.Since(start).Seconds())

	text := itMust(t, itCallTimeout, nil, "history", nights).stdout
	t.Logf("lab history NIGHTS:\n%s", text)
	var h history.History
	if err := json.Unmarshal([]byte(itMust(t, itCallTimeout, nil, "history", nights, "--json").stdout), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Nights) != 6 {
		t.Fatalf("%d nights, want 6", len(h.Nights))
	}
	found := 0
	for _, s := range h.Series {
		if len(s.Points) != 6 {
			t.Errorf("%s %s: %d nights, want 6", s.Cell, s.Name(), len(s.Points))
		}
		if s.Cell == "celeron-2.4/syscallbench/getppid/n=2000 (clock icount:0)" && s.Metric == "syscall_ns" {
			found++
			if len(s.Changes) != 1 || s.Changes[0].Night != 3 || !s.Changes[0].Worse || s.Changes[0].Change < 20 {
				t.Errorf("syscall_ns: change points %+v, want one, worse by 20%% or more, at the 4th night", s.Changes)
			}
			continue
		}
		if len(s.Changes) > 0 {
			t.Errorf("%s %s: change points %+v, want none", s.Cell, s.Name(), s.Changes)
		}
	}
	if found != 1 {
		t.Errorf("no syscall_ns series of syscallbench in the history")
	}
	e13b := false
	for _, c := range h.Claims {
		if c.ID != "E1.3b" {
			continue
		}
		e13b = true
		if c.Verdicts[0] == results.NotRun || len(c.Flips) > 0 {
			t.Errorf("E1.3b: verdicts %v, flips %+v; want a verdict every night, the same", c.Verdicts, c.Flips)
		}
	}
	if !e13b {
		t.Errorf("no history of claim E1.3b")
	}
	r := itLab(t, itCallTimeout, nil, "history", nights, "--fail-on-change")
	if r.code != 1 || !strings.Contains(r.stderr, "syscall_ns") || !strings.Contains(r.stderr, "from night-4") {
		t.Errorf("lab history --fail-on-change: exit %d, want 1 naming syscall_ns from night-4:\n%s", r.code, r.stderr)
	}
	r = itLab(t, itCallTimeout, nil, "history", nights, "--fail-on-change", "--last", "2")
	if r.code != 0 {
		t.Errorf("lab history --fail-on-change --last 2: exit %d, want 0 (the change began 3 nights ago):\n%s", r.code, r.stderr)
	}
}
