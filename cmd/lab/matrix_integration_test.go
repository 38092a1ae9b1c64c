package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"lab/internal/labtest"
	"lab/results"
	"lab/results/matrix"
)

// itMatrixFile writes a matrix file into a temp dir and returns its path.
func itMatrixFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "matrix.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func itLabBin(t *testing.T) string {
	t.Helper()
	b := filepath.Join(labtest.LibDir(), "lab")
	if _, err := os.Stat(b); err != nil {
		labtest.Unavailable(t, "%s missing: run `make build`", b)
	}
	return b
}

// TestIntegrationMatrixResume: Ctrl-C in the middle of a matrix keeps the
// cells that finished; the same command again runs only the others, and
// the JUnit XML then has every cell.
func TestIntegrationMatrixResume(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)
	file := itMatrixFile(t, `name: resume
cells:
  - plugin: forkbench
    experiment: forktime
    profiles: [celeron-2.4]
    params: {n: [20, 21, 600]}
    repeat: 12
`)
	out := filepath.Join(t.TempDir(), "out")
	// One at a time, in ID order: n=20, n=21, then n=600 (12 repeats of
	// 600 forks, some 10 s: long enough to be interrupted).
	cmd, _, stderr, done := itStartLab(t, itLabBin(t), "matrix", file, "--out", out, "--parallel", "1")
	itAwait(t, stderr, "[2/3]", 3*time.Minute)
	time.Sleep(3 * time.Second) // the third cell is measuring
	itInterrupt(t, cmd, done, stderr)
	if !strings.Contains(stderr.String(), "run the same command again to resume") {
		t.Errorf("an interrupted matrix does not say how to resume:\n%s", stderr.String())
	}
	st, ok, err := matrix.LoadState(out)
	if err != nil || !ok {
		t.Fatalf("no matrix state after Ctrl-C: %v", err)
	}
	first := map[string]string{}
	for _, c := range st.Cells {
		first[c.ID] = c.Result
		if strings.HasSuffix(c.ID, "n=600") == c.Done() {
			t.Errorf("after Ctrl-C: cell %s status %s done=%v", c.ID, c.Status, c.Done())
		}
	}
	// Again: the two finished cells are kept, the third runs.
	cmd, _, stderr, done = itStartLab(t, itLabBin(t), "matrix", file, "--out", out, "--parallel", "1")
	select {
	case err := <-done:
		if err != nil || !strings.Contains(stderr.String(), "2 already done") || !strings.Contains(stderr.String(), "running 1,") {
			t.Fatalf("resumed matrix: %v, want success and 2 cells kept:\n%s", err, stderr.String())
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("resumed matrix still running:\n%s", stderr.String())
	}
	st, _, _ = matrix.LoadState(out)
	for _, c := range st.Cells {
		if !c.Done() || c.Status != "ok" {
			t.Errorf("after resuming: cell %s is %s", c.ID, c.Status)
		}
		if !strings.HasSuffix(c.ID, "n=600") && c.Result != first[c.ID] {
			t.Errorf("cell %s ran again (result %s, was %s)", c.ID, c.Result, first[c.ID])
		}
	}
	junit, err := os.ReadFile(filepath.Join(out, "junit.xml"))
	// The cells' suite, then the claims judged from the matrix's results.
	cells, claims, found := strings.Cut(string(junit), `<testsuite name="lab matrix resume claims"`)
	if err != nil || !found || strings.Count(cells, "<testcase ") != 3 || strings.Contains(cells, "<failure") ||
		!strings.Contains(claims, `<testcase name="E2.1c" classname="claims.forkbench.forktime"`) {
		t.Errorf("junit.xml: %v\n%s", err, junit)
	}

	// A cell adding repeats to a run of the matrix's results (add_to,
	// what lab reproduce's later rounds write): its run names that run.
	var n20 string
	for id, res := range first {
		if strings.HasSuffix(id, "n=20") {
			n20 = res
		}
	}
	more := itMatrixFile(t, "name: more\ncells:\n  - plugin: forkbench\n    experiment: forktime\n    profiles: [celeron-2.4]\n"+
		"    params: {n: 20}\n    repeat: 2\n    add_to: "+n20+"\n")
	out2 := filepath.Join(t.TempDir(), "out")
	prev, err := results.Load(filepath.Join(results.StoreDir(out), n20+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Save(results.StoreDir(out2), prev); err != nil {
		t.Fatal(err)
	}
	itMust(t, 5*time.Minute, nil, "matrix", more, "--out", out2)
	st, _, _ = matrix.LoadState(out2)
	if len(st.Cells) != 1 || st.Cells[0].Status != "ok" {
		t.Fatalf("add_to matrix: cells %+v", st.Cells)
	}
	res, err := results.Load(filepath.Join(results.StoreDir(out2), st.Cells[0].Result+".json"))
	if err != nil || res.AddTo != n20 || res.Parameters["repeat"] != "2" || res.Parameters["n"] != "20" {
		t.Errorf("the add_to cell's run: %v; adds to %q, want %s; parameters %v", err, res.AddTo, n20, res.Parameters)
	}
}

// TestIntegrationMatrixRetriesDeadVM: a cell whose VM dies mid-run (its
// QEMU killed) is run once more, and the matrix records both attempts.
func TestIntegrationMatrixRetriesDeadVM(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)
	file := itMatrixFile(t, `name: retry
cells:
  - plugin: forkbench
    experiment: forktime
    profiles: [celeron-2.4]
    params: {n: 1000}
    repeat: 6
`)
	out := filepath.Join(t.TempDir(), "out")
	cmd, _, stderr, done := itStartLab(t, itLabBin(t), "matrix", file, "--out", out)
	logPath := filepath.Join(out, "logs", "celeron-2.4_forkbench_forktime_n-1000.log")
	deadline := time.Now().Add(2 * time.Minute)
	killed := 0
	for killed == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the cell's plugin never started:\n%s", stderr.String())
		}
		if b, _ := os.ReadFile(logPath); strings.Contains(string(b), "plugin forkbench started") {
			es, err := testRoots(t).vm.List()
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				if strings.HasPrefix(e.Name, "celeron-2.4-run-") && e.State != nil && e.State.QEMUPID > 0 {
					if err := syscall.Kill(e.State.QEMUPID, syscall.SIGKILL); err == nil {
						killed = e.State.QEMUPID
					}
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("killed the cell's QEMU, pid %d", killed)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("lab matrix after a retry: %v\n%s", err, stderr.String())
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("lab matrix still running:\n%s", stderr.String())
	}
	_ = cmd
	st, _, _ := matrix.LoadState(out)
	c := st.Cells[0]
	if c.Attempts != 2 || c.Status != "ok" || !strings.Contains(c.Retried, "guest died") {
		t.Errorf("cell after its VM died: attempts %d status %s retried %q, want 2, ok and why", c.Attempts, c.Status, c.Retried)
	}
	if !strings.Contains(stderr.String(), "running it once more") {
		t.Errorf("lab matrix did not say it retried:\n%s", stderr.String())
	}
}

// TestIntegrationMatrixWarmsAlone: two VMs at a time on a profile with no
// booted snapshot yet: one VM boots alone first, running nothing, to make
// it, and both cells then restore it; a second matrix finds it and boots
// nothing alone. The profile is celeron-2.4 with a kernel command line of
// this test's own, so its snapshot is new, and the test removes it.
func TestIntegrationMatrixWarmsAlone(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)
	name := fmt.Sprintf("it-warm-%d", time.Now().UnixNano()%1000000)
	file := itProfileFile(t, name, "lab.test="+name)
	snaps := filepath.Join(string(envCache(t)), "snapshots")
	before := map[string]bool{}
	if es, err := os.ReadDir(snaps); err == nil {
		for _, e := range es {
			before[e.Name()] = true
		}
	}
	t.Cleanup(func() {
		// The snapshot this test's profile made, and nothing else.
		es, _ := os.ReadDir(snaps)
		for _, e := range es {
			if !before[e.Name()] {
				os.Remove(filepath.Join(snaps, e.Name()))
			}
		}
	})
	mf := itMatrixFile(t, `name: warm
clock: icount:0
parallel: 2
cells:
  - plugin: forkbench
    experiment: forktime
    profiles: [`+name+`]
    params: {n: [20, 21]}
    repeat: 1
`)
	for i, want := range []int{1, 0} {
		out := filepath.Join(t.TempDir(), "out")
		r := itMust(t, 5*time.Minute, nil, "matrix", mf, "--out", out, "--profile-file", file)
		if got := strings.Count(r.stderr, "has no booted snapshot yet: booting it alone first"); got != want {
			t.Errorf("matrix %d: %d boots alone, want %d:\n%s", i+1, got, want, r.stderr)
		}
		if want == 1 && !strings.Contains(r.stderr, name+" (icount:0): snapshot made in") {
			t.Errorf("matrix %d does not say the snapshot was made:\n%s", i+1, r.stderr)
		}
		st, _, err := matrix.LoadState(out)
		if err != nil || len(st.Cells) != 2 {
			t.Fatalf("matrix %d: state %v, %v", i+1, st, err)
		}
		for _, c := range st.Cells {
			res, err := results.Load(filepath.Join(out, "results", c.Result+".json"))
			if err != nil {
				t.Fatalf("cell %s: %v", c.ID, err)
			}
			if !strings.Contains(res.Machine.Boot, "restored") {
				t.Errorf("matrix %d: cell %s booted %q, want restored from the snapshot", i+1, c.ID, res.Machine.Boot)
			}
		}
	}
}
