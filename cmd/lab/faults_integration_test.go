package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"lab/internal/labtest"
	"lab/results"
	"lab/vm"
)

// TestIntegrationQEMUKilled: a VM whose QEMU dies is not forgotten in
// silence. `lab status` says once that it died and why, and `lab console`
// still shows its console log (issue 22, item 7: before, `lab status` said
// "no VMs are up" and the supervisor removed the log).
func TestIntegrationQEMUKilled(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	root := itBootEnv(t, p)
	st := itUp(t, p.Name, "doomed")
	// `lab exec NAME` without "--" (issue 22, item 12: it ran NAME in the
	// guest, "command not found", with no hint).
	for _, args := range [][]string{{"exec", "doomed"}, {"exec", "doomed", "uname", "-a"}} {
		r := itLab(t, itCallTimeout, nil, args...)
		if r.code == 0 || r.code == 127 || !strings.Contains(r.stderr, "lab exec doomed -- ") {
			t.Errorf("lab %s: exit %d, want a refusal showing `lab exec doomed -- CMD`:\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if err := syscall.Kill(st.QEMUPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The supervisor notices, records why and goes.
	deadline := time.Now().Add(20 * time.Second)
	for labtest.PIDAlive(st.SupervisorPID) {
		if time.Now().After(deadline) {
			t.Fatalf("supervisor (pid %d) still running 20 s after its QEMU was killed", st.SupervisorPID)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r := itMust(t, itCallTimeout, nil, "status")
	if !strings.Contains(r.stdout, "doomed") || !strings.Contains(r.stdout, "died") || !strings.Contains(r.stdout, "qemu killed by SIGKILL") {
		t.Errorf("lab status does not say doomed died of SIGKILL:\n%s", r.stdout)
	}
	r = itMust(t, itCallTimeout, nil, "console", "doomed")
	if !strings.Contains(r.stdout, "lab-agent: ready") {
		t.Errorf("lab console doomed after its death does not show the kept console log:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "died") {
		t.Errorf("lab console doomed does not say the VM died:\n%s", r.stderr)
	}
	// Once: the next status no longer lists it.
	r = itMust(t, itCallTimeout, nil, "status", "--json")
	var rows []vm.Summary
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("lab status --json: %v\n%s", err, r.stdout)
	}
	if len(rows) != 0 {
		t.Errorf("second lab status still lists %+v", rows)
	}
	// A new VM of the same name forgets the old one's death.
	itUp(t, p.Name, "doomed")
	if _, err := os.Stat(filepath.Join(root, ".ended", "doomed.json")); !os.IsNotExist(err) {
		t.Errorf("the record of the old doomed survives a new lab up (stat: %v)", err)
	}
	itMust(t, itCallTimeout, nil, "down", "doomed")
	r = itMust(t, itCallTimeout, nil, "status")
	if strings.Contains(r.stdout, "doomed") {
		t.Errorf("an orderly lab down is reported by lab status:\n%s", r.stdout)
	}
}

// TestIntegrationDownDuringRun: `lab down` does not silently kill a VM a
// `lab run` is measuring on; --force does, and the run says the VM was
// taken down by `lab down` (issue 22, item 6: before, the VM went in 0.2 s
// and the run said "the plugin crashed (exit status 143)").
func TestIntegrationDownDuringRun(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)
	itUp(t, p.Name, "busy")
	done := make(chan labResult, 1)
	go func() {
		done <- itLab(t, itRunTimeout, nil, "run", "--json", "--out", t.TempDir(), "--vm", "busy", "forkbench", "-e", "create", "-p", "m=100000", "--repeat", "20")
	}()
	// Wait until the run holds the lock.
	h, err := testRoots(t).vm.Open("busy")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for h.RunHolder() == nil {
		if time.Now().After(deadline) {
			t.Fatal("no run seen holding busy's run lock within a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
	r := itLab(t, itCallTimeout, nil, "down", "busy")
	if r.code == 0 || !strings.Contains(r.stderr, "lab run") || !strings.Contains(r.stderr, "--force") || !strings.Contains(r.stderr, "forkbench") {
		t.Errorf("lab down during a run: exit %d, want a refusal naming the run and --force:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := testRoots(t).vm.Open("busy"); err != nil {
		t.Fatalf("busy is gone after a refused lab down: %v", err)
	}
	itMust(t, itCallTimeout, nil, "down", "--force", "busy")
	var run labResult
	select {
	case run = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("lab run still going 2 minutes after lab down --force")
	}
	if run.code != exitRunFailed {
		t.Errorf("lab run after lab down --force: exit %d, want %d\n%s", run.code, exitRunFailed, run.stderr)
	}
	var res results.Result
	if err := json.Unmarshal([]byte(run.stdout), &res); err != nil {
		t.Fatalf("lab run --json: %v\n%s\n%s", err, run.stdout, run.stderr)
	}
	if !strings.Contains(res.Outcome.Reason, "taken down by `lab down`") || strings.Contains(res.Outcome.Reason, "crashed") {
		t.Errorf("run outcome after lab down --force: %q, want the VM taken down by `lab down`", res.Outcome.Reason)
	}
}
