package vm

// The run lock without a VM: a Handle is only a name and a state dir here.

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"
)

func lockHandle(t *testing.T) *Handle {
	t.Helper()
	return &Handle{Name: "locktest", Dir: t.TempDir()}
}

// returned runs f in a goroutine and returns a channel closed when f
// returns.
func returned(f func()) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		f()
	}()
	return ch
}

func wantBlocked(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s did not wait", what)
	case <-time.After(5 * lockPoll):
	}
}

func wantReturned(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still waiting 10s after the lock was free", what)
	}
}

func TestLockSharedWaitsForRun(t *testing.T) {
	h := lockHandle(t)
	ctx := context.Background()
	runCmd := []string{"lab", "run", "forkbench"}
	before := time.Now()
	unlock, err := h.LockRun(ctx, runCmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	type call struct {
		holder  RunHolder
		waiting bool
	}
	calls := make(chan call, 4)
	var release func()
	var lerr error
	done := returned(func() {
		release, lerr = h.LockShared(ctx, []string{"lab", "exec", "--", "true"}, false, func(holder RunHolder, waiting bool) {
			calls <- call{holder, waiting}
		})
	})
	wantBlocked(t, done, "lab exec during a run")
	select {
	case c := <-calls:
		if !c.waiting || c.holder.PID != os.Getpid() || !slices.Equal(c.holder.Command, runCmd) || c.holder.Started.Before(before.Add(-time.Second)) {
			t.Errorf("busy(%+v, waiting %v), want the run holding the lock, waiting", c.holder, c.waiting)
		}
	default:
		t.Error("busy was not called while waiting")
	}
	unlock()
	wantReturned(t, done, "lab exec")
	if lerr != nil {
		t.Fatal(lerr)
	}
	defer release()
	if n := len(calls); n != 0 {
		t.Errorf("busy called %d more times, want once", n)
	}
	// Nothing went ahead, so nothing is recorded.
	if recs, err := h.Interference(before, time.Now()); err != nil || len(recs) != 0 {
		t.Errorf("Interference = %+v, %v; want none", recs, err)
	}
}

func TestLockRunWaitsForSharedAndRun(t *testing.T) {
	h := lockHandle(t)
	ctx := context.Background()
	// Two commands share the guest at once.
	rel1, err := h.LockShared(ctx, []string{"lab", "exec"}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	rel2, err := h.LockShared(ctx, []string{"lab", "cp"}, false, nil)
	if err != nil {
		t.Fatalf("a second shared lock: %v", err)
	}
	// A run waits for both, told that commands (not a run) hold it.
	holders := make(chan *RunHolder, 2)
	var unlock func()
	done := returned(func() {
		unlock, err = h.LockRun(ctx, []string{"lab", "run", "a"}, func(holder *RunHolder) { holders <- holder })
	})
	wantBlocked(t, done, "lab run while exec/cp use the guest")
	rel1()
	wantBlocked(t, done, "lab run while one cp uses the guest")
	rel2()
	wantReturned(t, done, "lab run")
	if err != nil {
		t.Fatal(err)
	}
	if got := <-holders; got != nil {
		t.Errorf("waiting(%+v), want nil: exec/cp held the lock", got)
	}
	// A second run waits for the first and is told which.
	var unlock2 func()
	var err2 error
	done2 := returned(func() {
		unlock2, err2 = h.LockRun(ctx, []string{"lab", "run", "b"}, func(holder *RunHolder) { holders <- holder })
	})
	wantBlocked(t, done2, "a second lab run")
	if got := <-holders; got == nil || !slices.Equal(got.Command, []string{"lab", "run", "a"}) {
		t.Errorf("waiting(%+v), want the first run", got)
	}
	unlock()
	wantReturned(t, done2, "the second lab run")
	if err2 != nil {
		t.Fatal(err2)
	}
	unlock2()
}

func TestLockSharedNoWaitRecordsInterference(t *testing.T) {
	h := lockHandle(t)
	ctx := context.Background()
	// Without a run, --no-wait is an ordinary shared lock: no record.
	release, err := h.LockShared(ctx, []string{"lab", "exec", "--no-wait", "--", "early"}, true, func(RunHolder, bool) {
		t.Error("busy called with no run holding the lock")
	})
	if err != nil {
		t.Fatal(err)
	}
	release()

	from := time.Now()
	unlock, err := h.LockRun(ctx, []string{"lab", "run", "x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := []string{"lab", "exec", "--no-wait", "--", "true"}
	var busyWaiting []bool
	start := time.Now()
	release, err = h.LockShared(ctx, cmd, true, func(holder RunHolder, waiting bool) {
		busyWaiting = append(busyWaiting, waiting)
		if !slices.Equal(holder.Command, []string{"lab", "run", "x"}) {
			t.Errorf("busy holder %+v, want the run", holder)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*lockPoll {
		t.Errorf("--no-wait took %v during a run, want it to go ahead at once", took)
	}
	release()
	if !slices.Equal(busyWaiting, []bool{false}) {
		t.Errorf("busy called with waiting %v, want once with false", busyWaiting)
	}
	to := time.Now()
	unlock()

	recs, err := h.Interference(from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || !slices.Equal(recs[0].Command, cmd) || recs[0].PID != os.Getpid() || recs[0].Time.Before(from) || recs[0].Time.After(to) {
		t.Fatalf("Interference(run window) = %+v, want the one --no-wait command", recs)
	}
	// Another run's window does not see it.
	if recs, _ := h.Interference(to.Add(time.Nanosecond), time.Now().Add(time.Hour)); len(recs) != 0 {
		t.Errorf("Interference after the run = %+v, want none", recs)
	}
}

func TestLockSharedWaitIsCancellable(t *testing.T) {
	h := lockHandle(t)
	unlock, err := h.LockRun(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 3*lockPoll)
	defer cancel()
	start := time.Now()
	_, err = h.LockShared(ctx, []string{"lab", "cp"}, false, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("LockShared = %v, want the context's error", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("cancelled wait took %v", took)
	}
}

func TestInterferenceLogMissingOrTorn(t *testing.T) {
	h := lockHandle(t)
	if recs, err := h.Interference(time.Time{}, time.Now()); err != nil || recs != nil {
		t.Errorf("no log: %+v, %v; want nothing", recs, err)
	}
	now := time.Now()
	if err := h.recordInterference(Interference{Time: now, Command: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(h.Dir+"/"+interferenceFile, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time": "not`)
	f.Close()
	recs, err := h.Interference(now.Add(-time.Second), now.Add(time.Second))
	if err != nil || len(recs) != 1 {
		t.Errorf("log with a torn line: %+v, %v; want the one whole record", recs, err)
	}
}

// A command that went ahead during one run holds the lock shared once that
// run ends, so the next run waits for it instead of being disturbed
// unrecorded.
func TestLockSharedNoWaitHoldsForNextRun(t *testing.T) {
	h := lockHandle(t)
	ctx := context.Background()
	unlockA, err := h.LockRun(ctx, []string{"lab", "run", "a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	release, err := h.LockShared(ctx, []string{"lab", "exec", "--no-wait", "--", "sleep", "60"}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	unlockA()
	time.Sleep(2 * lockPoll) // the command takes the freed lock
	holders := make(chan *RunHolder, 1)
	var unlockB func()
	done := returned(func() {
		unlockB, err = h.LockRun(ctx, []string{"lab", "run", "b"}, func(holder *RunHolder) { holders <- holder })
	})
	wantBlocked(t, done, "the next run while the --no-wait command still uses the guest")
	release()
	wantReturned(t, done, "the next run")
	if err != nil {
		t.Fatal(err)
	}
	unlockB()
	if got := <-holders; got != nil {
		t.Errorf("the next run was told %+v holds the lock, want exec/cp (nil)", got)
	}
}
