package vm

import (
	"os/exec"
	"testing"
	"time"
)

// TestWatchPID: the wait returns when the process ends, not before; at
// once for a process that is not there.
func TestWatchPID(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	wait, err := watchPID(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
		t.Fatal("the wait returned while the process runs")
	case <-time.After(200 * time.Millisecond):
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the wait did not return 5 s after the process ended")
	}
	// Gone already (reaped): the wait returns at once.
	wait, err = watchPID(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	wait()
}
