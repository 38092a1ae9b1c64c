package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"lab/plugins"
	"lab/results"
	"lab/vm"
)

// Kind is why a run failed. A Kind is an error, so that
// errors.Is(err, engine.GuestDied) holds for a *Failure of that kind.
type Kind string

// The kinds of failure a run can end in.
const (
	// Interrupted: the caller's context was cancelled (Ctrl-C); what was
	// measured is kept.
	Interrupted Kind = "interrupted"
	// TimedOut: the run took longer than Request.Timeout; the plugin was
	// killed, the VM stays usable.
	TimedOut Kind = "timed out"
	// PluginCrashed: the plugin exited mid-run.
	PluginCrashed Kind = "plugin crashed"
	// GuestDied: the guest (its QEMU or supervisor) went away mid-run.
	GuestDied Kind = "guest died"
	// VMDown: the VM was taken down under the run (`lab down --force`):
	// its supervisor recorded so (vm.EndDown) before powering it off.
	VMDown Kind = "vm taken down"
	// WorkloadFailed: the plugin ran and reported a failed outcome (a
	// workload that failed, sweep points that failed), or the result
	// could not be kept whole (values JSON cannot carry).
	WorkloadFailed Kind = "workload failed"
	// Broken: the run broke otherwise (the plugin did not start, the
	// link failed...); the reason is the error as it is.
	Broken Kind = "broken"
)

func (k Kind) Error() string { return string(k) }

// Failure is a run that started and failed; what it measured is in the
// result, saved all the same. Decide on it with errors.Is(err, Kind) or
// errors.As(err, **Failure).
type Failure struct {
	Kind Kind
	// Reason is the result's Outcome.Reason.
	Reason string
	// VM is the VM the run used.
	VM string
	// ExitStatus is the plugin's, for PluginCrashed and VMDown.
	ExitStatus int
	// Err is the error the run broke with, if any.
	Err error
}

func (f *Failure) Error() string { return f.Reason }

// Unwrap gives the error the run broke with.
func (f *Failure) Unwrap() error { return f.Err }

// Is makes errors.Is(err, k) hold for the failure's kind k.
func (f *Failure) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == f.Kind
}

// brokenRun is a Run call (or the plugin's start) that broke: its
// outcome and its kind.
type brokenRun struct {
	outcome results.Outcome
	failure *Failure
}

// classify turns a run error into a failure a user can act on:
// interrupted, timed out, the VM taken down by `lab down`, or the error
// as it is.
func classify(ctx, runCtx context.Context, m machine, err error, timeout time.Duration) *Failure {
	switch {
	case ctx.Err() != nil:
		return &Failure{Kind: Interrupted, Reason: "interrupted (" + InterruptedBy(ctx) + ")", VM: m.Name(), Err: err}
	case errors.Is(runCtx.Err(), context.DeadlineExceeded), status.Code(err) == codes.DeadlineExceeded:
		// The call's only deadline is the run's: gRPC carries it to the
		// plugin, whose clock (the guest's) may end it first.
		return &Failure{Kind: TimedOut, Reason: fmt.Sprintf("timed out after %v (--timeout); the plugin was killed", timeout), VM: m.Name(), Err: err}
	}
	if down := m.TakenDown(); down != "" {
		return &Failure{Kind: VMDown, Reason: down + ": " + err.Error(), VM: m.Name(), Err: err}
	}
	return &Failure{Kind: Broken, Reason: err.Error(), VM: m.Name(), Err: err}
}

// takenDown is the reason of a run whose VM `lab down --force` took down
// under it ("" if it was not): the plugin then dies of the guest's
// shutdown, which must not read as a crash. The supervisor records why
// before it powers the guest off, and a new VM of the name forgets an
// older record.
func takenDown(h *vm.Handle) string {
	en, err := vm.Root(filepath.Dir(h.Dir)).ReadEnded(h.Name)
	if err != nil || en.Cause != vm.EndDown {
		return ""
	}
	return fmt.Sprintf("the VM was %s mid-run", en.Reason)
}

// runFailure is the outcome of a Run call that broke: interrupted, timed
// out, the plugin crashed, the guest died, or the error as it is.
func runFailure(ctx, runCtx context.Context, m machine, sess pluginSession, err error, timeout time.Duration) brokenRun {
	f := classify(ctx, runCtx, m, err, timeout)
	var rerr *plugins.RunError
	if f.Kind == Broken && !errors.As(err, &rerr) {
		// The exit frame may trail the broken connection a little.
		code, exited, linkErr := sess.Exit(3 * time.Second)
		switch {
		case exited && linkErr == nil:
			f.Kind, f.ExitStatus = PluginCrashed, code
			f.Reason = fmt.Sprintf("the plugin crashed (exit status %d): %v", code, err)
		case exited || m.Gone(3*time.Second):
			f.Kind = GuestDied
			f.Reason = fmt.Sprintf("the guest died mid-run (vm %s is gone): %v", m.Name(), err)
		}
	}
	return brokenRun{outcome: results.Outcome{Status: failedOrInterrupted(ctx), Reason: f.Reason, StderrTail: sess.StderrTail()}, failure: f}
}

// failedOrInterrupted is the status of a run that broke: interrupted if
// the user stopped it (Ctrl-C: what finished is kept), else failed.
func failedOrInterrupted(ctx context.Context) string {
	if ctx.Err() != nil {
		return results.StatusInterrupted
	}
	return results.StatusFailed
}

// guestGone says whether the VM went away (its QEMU or supervisor died),
// waiting up to d for the supervisor to notice.
func guestGone(h *vm.Handle, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if _, err := vm.Root(filepath.Dir(h.Dir)).Open(h.Name); err != nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// failRun marks res failed with reason, keeping an earlier reason.
func failRun(res *results.Result, reason string) {
	if res.Outcome.Status == results.StatusFailed && res.Outcome.Reason != "" {
		reason = res.Outcome.Reason + "; " + reason
	}
	res.Outcome.Status, res.Outcome.Reason = results.StatusFailed, reason
}

// failureOf is the failure a finished result stands for (nil if it did
// not fail), of kind k when the run broke, else decided by its outcome.
func failureOf(res *results.Result, broke *Failure) *Failure {
	switch res.Outcome.Status {
	case results.StatusFailed, results.StatusInterrupted:
	default:
		return nil
	}
	f := &Failure{Kind: WorkloadFailed, VM: res.Machine.Name}
	if res.Outcome.Status == results.StatusInterrupted {
		f.Kind = Interrupted
	}
	if broke != nil {
		*f = *broke
	}
	f.Reason = res.Outcome.Reason
	return f
}

// InterruptedBy names what cancelled ctx for a reason: "Ctrl-C" for
// SIGINT (or a cancellation that names no signal), else the signal
// ("SIGTERM", "SIGHUP"), or lab reproduce's budget (BudgetEnded).
func InterruptedBy(ctx context.Context) string {
	var sig interface{ Signal() syscall.Signal }
	var budget BudgetEnded
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &budget):
		return budget.Error()
	case errors.As(cause, &sig) && sig.Signal() != syscall.SIGINT:
		return unix.SignalName(sig.Signal())
	}
	return "Ctrl-C"
}

// BudgetEnded is the cause of lab reproduce's context ending at its
// budget: what was running then is stopped, and says so.
type BudgetEnded struct{ Budget time.Duration }

func (b BudgetEnded) Error() string {
	return fmt.Sprintf("lab reproduce's budget of %v ended", b.Budget)
}
