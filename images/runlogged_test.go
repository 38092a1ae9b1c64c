package images

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunLoggedCancelKillsChildren: a build step stopped by its context
// (Ctrl-C during `lab image build`) takes the whole process group with it,
// as make -j's compilers are: nothing is left running.
func TestRunLoggedCancelKillsChildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		var out bytes.Buffer
		done <- runLogged(ctx, "", &out, "sh", "-c", `sleep 300 & echo $! > `+pidFile+`; wait`)
	}()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; {
		if data, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(data), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a cancelled step reported success")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("runLogged did not return after its context ended")
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		if syscall.Kill(pid, 0) != nil {
			break // gone
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the step's child %d is still running after the step was stopped", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
