package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lab/internal/labtest"
)

// TestIntegrationRunThrowawayKilled: a `lab run --profile` killed with
// SIGKILL (no chance to clean up) takes its throwaway VM with it: the
// supervisor sees its owner pipe close and discards the VM, so no QEMU,
// supervisor or state directory is left.
func TestIntegrationRunThrowawayKilled(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	root := itBootEnv(t, p)
	labBin := filepath.Join(labtest.LibDir(), "lab")
	if _, err := os.Stat(labBin); err != nil {
		labtest.Unavailable(t, "%s missing: run `make build`", labBin)
	}
	// n=200000 forks take minutes under TCG: the run is going when the
	// kill lands.
	cmd := exec.Command(labBin, "run", "forkbench", "--profile", p.Name, "-e", "forktime", "-p", "n=200000", "--out", t.TempDir())
	cmd.Env = environFor(t)
	out := newWatchedBuffer()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	out.await(t, "plugin forkbench started", 3*time.Minute)
	if len(labtest.Procs(root)) == 0 {
		t.Fatalf("no VM process runs under %s during the run\n%s", root, out.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	start := time.Now()
	if procs := labtest.WaitNoProcs(root, 15*time.Second); len(procs) > 0 {
		t.Fatalf("15 s after lab run was killed, its throwaway VM still runs: %v\n%s", procs, out.String())
	}
	t.Logf("throwaway VM gone %v after lab run was killed", time.Since(start).Round(10*time.Millisecond))
	for i := 0; i < 50; i++ {
		des, _ := os.ReadDir(root)
		if len(des) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	des, _ := os.ReadDir(root)
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	t.Errorf("state left in %s: %v", root, names)
}

// TestIntegrationOwnerGone: a VM booted with $LAB_OWNER_PID set ends
// with that process, however it ends: a test binary killed by go test's
// timeout leaves no VM running (one was found running 1 h 33 min after
// its test). And a bad $LAB_OWNER_PID boots nothing and says so.
func TestIntegrationOwnerGone(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	root := itBootEnv(t, p)
	owner := exec.Command("sleep", "600")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = owner.Process.Kill(); _ = owner.Wait() })
	setEnv(t, ownerEnv, strconv.Itoa(owner.Process.Pid))
	st := itUp(t, p.Name, "owned")
	if st.OwnerPID != owner.Process.Pid {
		t.Errorf("state's owner %d, want %d", st.OwnerPID, owner.Process.Pid)
	}
	// The VM outlives the lab up that booted it, as always.
	itMust(t, itCallTimeout, nil, "exec", "owned", "--", "true")
	if err := owner.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = owner.Wait()
	start := time.Now()
	if procs := labtest.WaitNoProcs(root, 15*time.Second); len(procs) > 0 {
		t.Fatalf("15 s after its owner was killed, the VM still runs: %v", procs)
	}
	t.Logf("VM gone %v after its owner was killed", time.Since(start).Round(10*time.Millisecond))
	itNoneLeft(t, root, "owned")

	setEnv(t, ownerEnv, "me")
	r := itLab(t, itCallTimeout, nil, "up", "--name", "bad", p.Name)
	if r.code == 0 || !strings.Contains(r.stderr, `$LAB_OWNER_PID="me": want the id of the process the VMs end with`) {
		t.Errorf("lab up with LAB_OWNER_PID=me: exit %d\n%s", r.code, r.stderr)
	}
}
