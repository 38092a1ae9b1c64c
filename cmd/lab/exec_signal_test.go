package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNotifyContext: SIGINT, SIGTERM and SIGHUP each cancel the CLI's
// context, and lab exec can tell which one came (it forwards that one).
func TestNotifyContext(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		if signal.Ignored(sig) {
			// Inherited ignored (nohup, a background job): lab keeps
			// ignoring it; TestNotifyContextKeepsIgnored covers that.
			continue
		}
		ctx, stop := notifyContext(context.Background())
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("%v did not cancel the context", sig)
		}
		if got := interruptSignal(ctx); got != sig {
			t.Errorf("after %v: interruptSignal = %v", sig, got)
		}
		if err := context.Cause(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("after %v: cause %v is not context.Canceled (lab exits 130 on those)", sig, err)
		}
		stop()
	}
	// Cancelled otherwise: Ctrl-C's signal.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := interruptSignal(ctx); got != syscall.SIGINT {
		t.Errorf("interruptSignal(cancelled) = %v, want SIGINT", got)
	}
}

// TestNotifyContextKeepsIgnored: a signal lab inherited ignored (SIGHUP
// under nohup, SIGINT in a background job of a script) stays ignored: a
// hangup must not stop a `nohup lab run` (issue 22 item 13, the host
// side). The test binary re-runs itself with SIGHUP and SIGINT ignored.
func TestNotifyContextKeepsIgnored(t *testing.T) {
	if os.Getenv("LAB_TEST_IGNORED_CHILD") != "" {
		ctx, stop := notifyContext(context.Background())
		defer stop()
		for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT} {
			_ = syscall.Kill(os.Getpid(), sig)
		}
		select {
		case <-ctx.Done():
			os.Stdout.WriteString("cancelled by " + context.Cause(ctx).Error() + "\n")
		case <-time.After(time.Second):
			os.Stdout.WriteString("still running\n")
		}
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `trap "" HUP INT; exec "$0" -test.run '^TestNotifyContextKeepsIgnored$'`, exe)
	cmd.Env = append(os.Environ(), "LAB_TEST_IGNORED_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "still running") {
		t.Errorf("with SIGHUP and SIGINT ignored, they still cancelled lab's context:\n%s", out)
	}
}
