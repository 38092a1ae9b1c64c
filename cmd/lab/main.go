// Command lab boots QEMU guests that emulate historical machines and runs
// benchmark plugins inside them. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := notifyContext(context.Background())
	code := run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// notifyContext returns a context cancelled by SIGINT, SIGTERM or SIGHUP
// (those not inherited ignored),
// whose cause (a *signalled) names the signal: lab exec forwards that one
// to the guest program. Later signals are ignored until stop: the first one
// already has everything winding down.
func notifyContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	// A signal lab inherited ignored stays ignored (Notify would undo
	// that): `nohup lab run` must outlive the terminal, and a background
	// job of a script must not take a Ctrl-C meant for the foreground.
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			signal.Notify(ch, sig)
		}
	}
	go func() {
		select {
		case s := <-ch:
			cancel(&signalled{sig: s.(syscall.Signal)})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// signalled is the cause of a context cancelled by a signal.
type signalled struct{ sig syscall.Signal }

func (s *signalled) Error() string { return s.sig.String() + " received" }

// Signal is the signal that ended the command (engine.InterruptedBy).
func (s *signalled) Signal() syscall.Signal { return s.sig }

// Is makes errors.Is(err, context.Canceled) hold, as for any cancellation.
func (s *signalled) Is(target error) bool { return target == context.Canceled }
