package main

// lab exec / lab cp against a `lab run` holding the VM's run lock, without
// a VM: the lock and the interference log live in the VM's state dir only.

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"lab/engine"
	"lab/internal/labtest"
	"lab/vm"
)

func TestSplitNoWait(t *testing.T) {
	tests := []struct {
		args     []string
		want     []string
		wantFlag bool
	}{
		{[]string{"lab", "exec", "--no-wait", "--", "true"}, []string{"lab", "exec", "--", "true"}, true},
		{[]string{"lab", "exec", "vm1", "--no-wait", "--", "true"}, []string{"lab", "exec", "vm1", "--", "true"}, true},
		{[]string{"lab", "exec", "--no-wait", "vm1", "--", "true"}, []string{"lab", "exec", "vm1", "--", "true"}, true},
		// After the -- it belongs to the guest command.
		{[]string{"lab", "exec", "--", "prog", "--no-wait"}, []string{"lab", "exec", "--", "prog", "--no-wait"}, false},
		{[]string{"lab", "exec", "vm1", "--", "--no-wait"}, []string{"lab", "exec", "vm1", "--", "--no-wait"}, false},
		// Without a --, every word is the guest's.
		{[]string{"lab", "exec", "--no-wait", "true"}, []string{"lab", "exec", "--no-wait", "true"}, false},
		// Other commands parse their flags themselves.
		{[]string{"lab", "cp", "--no-wait", "a", "vm:/b"}, []string{"lab", "cp", "--no-wait", "a", "vm:/b"}, false},
		{[]string{"lab"}, []string{"lab"}, false},
	}
	for _, tt := range tests {
		got, flag := splitNoWait(tt.args)
		if !slices.Equal(got, tt.want) || flag != tt.wantFlag {
			t.Errorf("splitNoWait(%q) = %q, %v; want %q, %v", tt.args, got, flag, tt.want, tt.wantFlag)
		}
	}
}

// --no-wait is accepted by exec (before --) and cp: they get as far as
// looking for the VM.
func TestCLINoWaitAccepted(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"exec", "--no-wait", "--", "uname"}, "no VMs are up"},
		{[]string{"exec", "ghost", "--no-wait", "--", "ls"}, `vm "ghost" is not up`},
		{[]string{"exec", "--no-wait", "ghost", "--", "ls"}, `vm "ghost" is not up`},
		{[]string{"cp", "--no-wait", "./f", "ghost:/root/"}, `vm "ghost" is not up`},
		{[]string{"cp", "ghost:/etc/passwd", ".", "--no-wait"}, `vm "ghost" is not up`},
	}
	for _, tt := range tests {
		cliEnv(t)
		r := cliRun(t, tt.args...)
		wantOutput(t, r, strings.Join(tt.args, " "), 1, "stderr", tt.want)
	}
	for _, cmd := range []string{"exec", "cp"} {
		r := cliRun(t, cmd, "--help")
		wantOutput(t, r, cmd+" --help", 0, "stdout", "--no-wait", "interference")
	}
}

func TestLockGuestWaitsAndSays(t *testing.T) {
	h := &vm.Handle{Name: "celeron", Dir: t.TempDir()}
	ctx := context.Background()
	var runMsgs []string
	unlock, err := h.LockRun(ctx, []string{"lab", "run", "forkbench"}, func(holder *vm.RunHolder) {
		runMsgs = append(runMsgs, engine.Waiting{VM: h.Name, Holder: holder}.String())
	})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	var stderr labtest.SyncBuffer
	done := make(chan error, 1)
	go func() {
		release, err := lockShared(ctx, h, []string{"lab", "exec", "--", "true"}, false, &stderr)
		if err == nil {
			release()
		}
		done <- err
	}()
	want := "vm celeron is busy with a `lab run` (started " + started.Format("15:04:05")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(stderr.String(), "waiting...") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := stderr.String()
	if !strings.HasPrefix(got, want) && !strings.HasPrefix(got, "vm celeron is busy with a `lab run` (started "+started.Add(-time.Second).Format("15:04:05")) {
		t.Errorf("waiting message %q, want it to start %q", got, want)
	}
	for _, w := range []string{"waiting...", "use --no-wait to go ahead anyway", "recorded in the run's result as interference"} {
		if !strings.Contains(got, w) {
			t.Errorf("waiting message %q lacks %q", got, w)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("lab exec went ahead during the run (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}

	// --no-wait goes ahead at once, says so, and is recorded.
	var nw bytes.Buffer
	cmd := []string{"lab", "exec", "--no-wait", "--", "true"}
	release, err := lockShared(ctx, h, cmd, true, &nw)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if !strings.Contains(nw.String(), "going ahead (--no-wait)") || !strings.Contains(nw.String(), "interference") {
		t.Errorf("--no-wait message %q", nw.String())
	}
	recs, err := h.Interference(started.Add(-time.Second), time.Now())
	if err != nil || len(recs) != 1 || !slices.Equal(recs[0].Command, cmd) {
		t.Errorf("interference records %+v, %v; want the --no-wait command", recs, err)
	}

	unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("lab exec still waiting after the run ended")
	}
	if n := strings.Count(stderr.String(), "\n"); n != 1 {
		t.Errorf("waiting message printed %d times, want once:\n%s", n, stderr.String())
	}

	// A run waiting for exec/cp says what it waits for.
	rel, err := lockShared(ctx, h, []string{"lab", "cp"}, false, &nw)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		rel()
	}()
	unlock2, err := h.LockRun(ctx, nil, func(holder *vm.RunHolder) {
		runMsgs = append(runMsgs, engine.Waiting{VM: h.Name, Holder: holder}.String())
	})
	if err != nil {
		t.Fatal(err)
	}
	unlock2()
	if !slices.Equal(runMsgs, []string{"vm celeron is busy with `lab exec`/`lab cp`; waiting for it to finish..."}) {
		t.Errorf("lab run said %q", runMsgs)
	}
}
