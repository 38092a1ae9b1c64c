package main

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestNotifyContext: SIGINT, SIGTERM and SIGHUP each cancel the CLI's
// context, and lab exec can tell which one came (it forwards that one).
func TestNotifyContext(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
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
