package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestIntegrationRunRefusesImplausible: what a plugin returns is checked
// in the host before it is saved (issue 31): a negative time, or a
// sample at a repeat index past the run's repeats, fails the run, naming
// the metric and the repeat; the plausible samples are kept, a signed
// metric's negative values among them, and nothing refused is judged.
func TestIntegrationRunRefusesImplausible(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itTestPlugins(t)
	itBootEnv(t, p)
	itUp(t, p.Name, "liar")
	for _, tc := range []struct{ lie, want string }{
		{"negative", "2 sample(s) with a negative value of a metric that is not signed (a difference the plugin declares \"signed\" may be negative), first metric took_ms repeat 0: -1 ms"},
		{"repeat", "2 sample(s) with a repeat index outside the run's 2 repeat(s) (0 to 1), first metric took_ms repeat 2"},
	} {
		t.Run(tc.lie, func(t *testing.T) {
			res, _ := itRunJSON(t, 1, "labtest", "-e", "liar", "-p", "lie="+tc.lie, "--repeat", "2")
			if res.Outcome.Status != "failed" || !strings.Contains(res.Outcome.Reason, "samples refused, not measurements of this run: "+tc.want) {
				t.Errorf("outcome %+v, want failed, saying %q", res.Outcome, tc.want)
			}
			if got := itSeries(res, "took_ms", nil); len(got) != 0 {
				t.Errorf("took_ms kept: %v", got)
			}
			if got := itSeries(res, "delta_ms", nil); len(got) != 2 || got[0] != -1 {
				t.Errorf("delta_ms (signed) = %v, want its two -1 samples kept", got)
			}
		})
	}
}

// TestIntegrationRunOutputFlood: a plugin that floods its stdout or
// stderr (go-plugin's, or the process's own descriptor with no newline,
// what a child process inherits) does not hold lab: the run ends with
// its sample, saying what of the output was dropped; one that floods for
// longer than --timeout is ended by it, saved as timed out, and the VM
// is free at once (issue 31: 200 MiB to fd 1 hung `lab run` for ever,
// past --timeout and SIGTERM, with the VM's run lock held).
func TestIntegrationRunOutputFlood(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itTestPlugins(t)
	itBootEnv(t, p)
	itUp(t, p.Name, "flood")
	for _, stream := range []string{"stdout", "stderr", "fd1", "fd2"} {
		t.Run(stream, func(t *testing.T) {
			start := time.Now()
			res, _ := itRunJSON(t, 0, "labtest", "-e", "flood", "-p", "mib=64", "-p", "stream="+stream, "--timeout", "90s")
			if res.Outcome.Status != "ok" || len(itSeries(res, "tick", nil)) != 1 {
				t.Errorf("outcome %+v, samples %v; want ok with its one sample", res.Outcome, res.Samples)
			}
			t.Logf("64 MiB to %s: %v, dropped %v", stream, time.Since(start).Round(time.Millisecond), res.Harness.OutputDropped)
		})
	}
	t.Run("past the timeout", func(t *testing.T) {
		start := time.Now()
		res, r := itRunJSON(t, 1, "labtest", "-e", "flood", "-p", "mib=4096", "-p", "stream=fd1", "--timeout", "10s")
		if took := time.Since(start); took > 40*time.Second {
			t.Errorf("a run with --timeout 10s took %v", took)
		}
		if !strings.Contains(res.Outcome.Reason, "timed out after 10s") || !strings.Contains(r.stderr, "timed out") {
			t.Errorf("outcome %+v, stderr %q; want timed out", res.Outcome, r.stderr)
		}
		start = time.Now()
		itMust(t, itCallTimeout, nil, "exec", "flood", "--", "true")
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("lab exec after the timed-out run waited %v for the VM", took)
		}
	})
}

// TestIntegrationRunLeavesGuestClean: a plugin that starts a process in
// a session of its own (out of its process group) and leaves a file in
// its temporary directory does not leave them in the guest: the process
// is killed, the directory removed, and the result says both (issue 31:
// the process outlived the run, unreported).
func TestIntegrationRunLeavesGuestClean(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itTestPlugins(t)
	itBootEnv(t, p)
	itUp(t, p.Name, "leave")
	res, r := itRunJSON(t, 0, "labtest", "-e", "leave")
	left := strings.Join(res.Harness.LeftBehind, "\n")
	if !strings.Contains(left, "killed 1 process(es) the plugin left running outside its process group: ") || !strings.Contains(left, "(sleep)") ||
		!strings.Contains(left, "removed what the plugin left in its temporary directory /tmp/lab-exec-") {
		t.Errorf("harness.left_behind = %q, want the sleep killed and the directory removed", res.Harness.LeftBehind)
	}
	if !strings.Contains(r.stderr, "killed 1 process(es)") {
		t.Errorf("lab run did not warn about what it cleaned up:\n%s", r.stderr)
	}
	ps := itMust(t, itCallTimeout, nil, "exec", "leave", "--", "ps")
	if strings.Contains(ps.stdout, "sleep 600") {
		t.Errorf("the plugin's sleep outlived the run:\n%s", ps.stdout)
	}
	ls := itMust(t, itCallTimeout, nil, "exec", "leave", "--", "ls", "/tmp")
	if strings.Contains(ls.stdout, "lab-exec-") || strings.Contains(ls.stdout, "plugin") {
		t.Errorf("the guest's /tmp holds what a run left: %q", ls.stdout)
	}
	// A plugin that leaves nothing gets no such note.
	ok, _ := itRunJSON(t, 0, "labtest", "-e", "ok")
	if len(ok.Harness.LeftBehind) != 0 {
		t.Errorf("a clean run's left_behind = %q, want none", ok.Harness.LeftBehind)
	}
}

// TestIntegrationDownWaitsForCopy: lab down lets a `lab cp` in flight
// finish before it powers the guest off, saying it waits (issue 31: the
// copy failed with "broken pipe").
func TestIntegrationDownWaitsForCopy(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)
	itUp(t, p.Name, "downcp")
	// A source that takes 3 s to end: a FIFO fed slowly.
	itMust(t, itCallTimeout, nil, "exec", "downcp", "--", "sh", "-c",
		"rm -f /tmp/slow; mkfifo /tmp/slow || exit; { for i in $(seq 1 30); do echo line $i; sleep 0.1; done >/tmp/slow; } </dev/null >/dev/null 2>&1 &")
	out := filepath.Join(t.TempDir(), "slow")
	cp := make(chan labResult, 1)
	go func() { cp <- itLab(t, itCallTimeout, nil, "cp", "downcp:/tmp/slow", out) }()
	// Down once the copy holds the VM: its lock is shared while it runs.
	time.Sleep(1500 * time.Millisecond)
	down := itMust(t, itUpTimeout, nil, "down", "downcp")
	if !strings.Contains(down.stderr, "waiting for the `lab exec`/`lab cp` using it to finish") {
		t.Errorf("lab down did not say it waits for the copy: %q", down.stderr)
	}
	r := <-cp
	b, err := os.ReadFile(out)
	if r.code != 0 || err != nil || !strings.HasSuffix(string(b), "line 30\n") {
		t.Errorf("lab cp under lab down: exit %d, stderr %q, copied %q (%v); want the whole file", r.code, r.stderr, b, err)
	}
}
