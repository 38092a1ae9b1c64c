package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"lab/internal/labtest"
	"lab/results"
)

// TestIntegrationRunCtrlC: Ctrl-C in the middle of a plain run (no sweep)
// saves what the finished repeats measured with outcome interrupted, exits
// 130 as an interrupted sweep does, decides no claim on it, and leaves the
// VM usable with no plugin running.
func TestIntegrationRunCtrlC(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)
	labBin := filepath.Join(labtest.LibDir(), "lab")
	if _, err := os.Stat(labBin); err != nil {
		labtest.Unavailable(t, "%s missing: run `make build`", labBin)
	}
	itUp(t, p.Name, "ctrlc")
	// n=2000 takes a second or two per repeat under TCG.
	cmd, _, stderr, done := itStartLab(t, labBin, "run", "forkbench", "--vm", "ctrlc", "--out", t.TempDir(), "-e", "forktime", "-p", "n=2000", "--repeat", "100")
	itAwait(t, stderr, "[2/100]", 2*time.Minute)
	itInterrupt(t, cmd, done, stderr)
	saved, err := results.Load(itPrinted(t, stderr.String(), "result: "))
	if err != nil {
		t.Fatal(err)
	}
	if saved.Outcome.Status != results.StatusInterrupted || !strings.Contains(saved.Outcome.Reason, "Ctrl-C") {
		t.Errorf("outcome %+v, want interrupted (Ctrl-C)", saved.Outcome)
	}
	if n := len(itSeries(saved, "fork_wait_us", nil)); n < 2 {
		t.Errorf("%d fork_wait_us samples kept, want those of the 2 or more repeats that finished", n)
	}
	for _, v := range saved.Verdicts {
		if v.Verdict == results.Reproduced || v.Verdict == results.NotReproduced {
			t.Errorf("claim %s decided on an interrupted run: %+v", v.Claim, v)
		}
	}
	if left := itGuestProcs(t, "forkbench"); left != "" {
		t.Errorf("the plugin still runs in the guest after Ctrl-C: %s", left)
	}
	again, _ := itRunJSON(t, 0, "forkbench", "--vm", "ctrlc", "-e", "forktime", "-p", "n=50")
	if again.Outcome.Status != "ok" {
		t.Errorf("a run after the interrupted one: %+v", again.Outcome)
	}
}

// itStartLab starts labBin with args, returning its stdout and stderr as
// they fill and a channel that gets its Wait error; it is killed at the
// end of the test.
func itStartLab(t *testing.T, labBin string, args ...string) (*exec.Cmd, *bytes.Buffer, *labtest.SyncBuffer, <-chan error) {
	t.Helper()
	cmd := exec.Command(labBin, args...)
	cmd.Env = environFor(t)
	var stdout bytes.Buffer
	stderr := &labtest.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, &stdout, stderr, done
}

// itAwait waits up to d for stderr to say s.
func itAwait(t *testing.T, stderr *labtest.SyncBuffer, s string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(stderr.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("lab never said %q:\n%s", s, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// itInterrupt sends cmd SIGINT and checks it exits 130 within 45 s.
func itInterrupt(t *testing.T, cmd *exec.Cmd, done <-chan error, stderr *labtest.SyncBuffer) {
	t.Helper()
	itSignal(t, cmd, done, stderr, syscall.SIGINT, 45*time.Second)
}

// itSignal sends cmd sig and checks it exits 130 within d.
func itSignal(t *testing.T, cmd *exec.Cmd, done <-chan error, stderr *labtest.SyncBuffer, sig syscall.Signal, d time.Duration) {
	t.Helper()
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("lab run after %v: %v, want exit status 130\n%s", sig, err, stderr.String())
		}
	case <-time.After(d):
		t.Fatalf("lab run still running %v after %v\n%s", d, sig, stderr.String())
	}
	t.Logf("ended %.1fs after %v", time.Since(sent).Seconds(), sig)
}

// TestIntegrationRunSIGTERMFlood: SIGTERM ends a `lab run` whose plugin
// floods its own descriptor 1 and ignores everything, within a few
// seconds, saving what it has as interrupted, and frees the VM (issue 31:
// SIGTERM did nothing, only SIGKILL ended it, and the run lock stayed).
func TestIntegrationRunSIGTERMFlood(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itTestPlugins(t)
	itBootEnv(t, p)
	labBin := filepath.Join(labtest.LibDir(), "lab")
	if _, err := os.Stat(labBin); err != nil {
		labtest.Unavailable(t, "%s missing: run `make build`", labBin)
	}
	itUp(t, p.Name, "term")
	cmd, _, stderr, done := itStartLab(t, labBin, "run", "labtest", "--vm", "term", "--out", t.TempDir(), "-e", "flood", "-p", "mib=4096", "-p", "stream=fd1", "--timeout", "10m")
	itAwait(t, stderr, "plugin labtest started", 2*time.Minute)
	time.Sleep(2 * time.Second) // flooding by now
	itSignal(t, cmd, done, stderr, syscall.SIGTERM, 20*time.Second)
	saved, err := results.Load(itPrinted(t, stderr.String(), "result: "))
	if err != nil {
		t.Fatal(err)
	}
	if saved.Outcome.Status != results.StatusInterrupted || !strings.Contains(saved.Outcome.Reason, "interrupted (SIGTERM)") {
		t.Errorf("outcome %+v, want interrupted (SIGTERM)", saved.Outcome)
	}
	start := time.Now()
	itMust(t, itCallTimeout, nil, "exec", "term", "--", "true")
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("lab exec after the SIGTERM waited %v for the VM", took)
	}
}
