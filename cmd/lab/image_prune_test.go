package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestImagePruneRemovesStaleSnapshotTemps: a snapshot save cut short
// (lab killed) leaves KEY.state.tmp-PID, 13 MB or more; prune removes it
// once its process is gone, and keeps one a live save is writing.
func TestImagePruneRemovesStaleSnapshotTemps(t *testing.T) {
	cliEnv(t)
	dir := filepath.Join(string(envCache(t)), "snapshots")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, fmt.Sprintf("k.state.tmp-%d", deadPID(t)))
	live := filepath.Join(dir, fmt.Sprintf("k.state.tmp-%d", os.Getpid()))
	for _, p := range []string{stale, stale + ".sha256", live} {
		if err := os.WriteFile(p, make([]byte, 4096), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := cliRun(t, "image", "prune")
	wantOutput(t, r, "image prune", 0, "stdout", "removed 2 files")
	for _, p := range []string{stale, stale + ".sha256"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("prune kept %s, the temp file of a save whose process is gone", filepath.Base(p))
		}
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("prune removed %s, which a live process is writing: %v", filepath.Base(live), err)
	}
}
