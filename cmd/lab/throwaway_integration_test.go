package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
