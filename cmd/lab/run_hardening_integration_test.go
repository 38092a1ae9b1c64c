package main

// lab run hardening in real guests: the profile's clock on --profile runs,
// exec/cp during a run (waiting, or --no-wait recorded as interference),
// and a save that fails after the run.

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"lab/results"
)

// TestIntegrationRunProfileClock: a profile whose clock is icount:0, run
// with `lab run --profile`, boots with that clock and the result says so;
// --clock overrides it as for `lab up`.
func TestIntegrationRunProfileClock(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)
	p.Name, p.Clock = "it-icount", "icount:0"
	b, err := yaml.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "it-icount.yaml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		extra []string
		want  string
	}{
		{nil, "icount:0"},
		{[]string{"--clock", "host"}, "host"},
	} {
		args := append([]string{"forkbench", "--profile", "it-icount", "--profile-file", file, "-e", "forktime", "-p", "n=50"}, tt.extra...)
		res, r := itRunJSON(t, 0, args...)
		if res.Machine.Clock != tt.want {
			t.Errorf("lab run %s: result clock %q, want %q", strings.Join(args, " "), res.Machine.Clock, tt.want)
		}
		if !strings.Contains(r.stderr, "clock "+tt.want) {
			t.Errorf("lab run %s: boot line does not say clock %s:\n%s", strings.Join(args, " "), tt.want, r.stderr)
		}
		if res.Outcome.Status != "ok" || len(res.Samples) == 0 {
			t.Errorf("outcome %+v, %d samples", res.Outcome, len(res.Samples))
		}
	}
}

// TestIntegrationRunInterference: during a `lab run`, a plain `lab exec`
// waits (saying so) until the run ends, and `lab exec --no-wait` /
// `lab cp --no-wait` go ahead and are listed in the result. Then a run
// whose results directory disappears mid-run still delivers its document.
func TestIntegrationRunInterference(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itTestPlugins(t)
	itBootEnv(t, p)
	itUp(t, p.Name, "busy")
	itMust(t, itCallTimeout, nil, "exec", "--", "rm", "-f", "/tmp/labtest.ticks")

	// waitTicks waits until the slow plugin has reported n samples, asking
	// with --no-wait (itself recorded as interference).
	waitTicks := func(t *testing.T, n int) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			r := itLab(t, itCallTimeout, nil, "exec", "--no-wait", "--", "cat", "/tmp/labtest.ticks")
			if got, err := strconv.Atoi(strings.TrimSpace(r.stdout)); err == nil && got >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the plugin never reported %d samples", n)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}

	t.Run("exec waits or is recorded", func(t *testing.T) {
		type runDone struct {
			res *results.Result
			r   labResult
		}
		runCh := make(chan runDone, 1)
		go func() {
			r := itLab(t, itRunTimeout, nil, "run", "--json", "--out", t.TempDir(), "labtest", "-e", "slow", "-p", "seconds=8")
			var res results.Result
			_ = json.Unmarshal([]byte(r.stdout), &res)
			runCh <- runDone{&res, r}
		}()
		waitTicks(t, 1)

		// A plain exec waits for the run.
		type execDone struct {
			r   labResult
			end time.Time
		}
		execCh := make(chan execDone, 1)
		go func() {
			r := itLab(t, itRunTimeout, nil, "exec", "--", "true")
			execCh <- execDone{r, time.Now()}
		}()
		// These go ahead while it measures.
		noWait := []string{"exec", "--no-wait", "--", "true"}
		start := time.Now()
		itMust(t, itCallTimeout, nil, noWait...)
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("lab exec --no-wait took %v during a run", took)
		}
		dst := filepath.Join(t.TempDir(), "ticks")
		cpNoWait := []string{"cp", "--no-wait", "busy:/tmp/labtest.ticks", dst}
		itMust(t, itCallTimeout, nil, cpNoWait...)

		var rd runDone
		select {
		case rd = <-runCh:
		case <-time.After(itRunTimeout):
			t.Fatal("the run did not end")
		}
		if rd.r.code != 0 || rd.res.Outcome.Status != "ok" {
			t.Fatalf("run: exit %d, outcome %+v\n%s", rd.r.code, rd.res.Outcome, rd.r.stderr)
		}
		var ed execDone
		select {
		case ed = <-execCh:
		case <-time.After(time.Minute):
			t.Fatal("the waiting lab exec did not finish within a minute of the run")
		}
		if ed.r.code != 0 {
			t.Errorf("waiting lab exec: exit %d\n%s", ed.r.code, ed.r.stderr)
		}
		if ed.end.Before(rd.res.Finished) {
			t.Errorf("plain lab exec ended at %v, before the run finished at %v: it did not wait", ed.end, rd.res.Finished)
		}
		for _, w := range []string{"vm busy is busy with a `lab run` (started ", "waiting...", "--no-wait"} {
			if !strings.Contains(ed.r.stderr, w) {
				t.Errorf("waiting lab exec's stderr %q lacks %q", ed.r.stderr, w)
			}
		}

		cmds := map[string]bool{}
		for _, in := range rd.res.Interference {
			cmds[strings.Join(in.Command, " ")] = true
			if in.Time.Before(rd.res.Started) || in.Time.After(rd.res.Finished) {
				t.Errorf("interference %+v outside the run %v..%v", in, rd.res.Started, rd.res.Finished)
			}
		}
		for _, want := range [][]string{noWait, cpNoWait, {"exec", "--no-wait", "--", "cat", "/tmp/labtest.ticks"}} {
			if !cmds[strings.Join(append([]string{"lab"}, want...), " ")] {
				t.Errorf("interference %v lacks lab %s", slices.Collect(maps.Keys(cmds)), strings.Join(want, " "))
			}
		}
		if cmds["lab exec -- true"] {
			t.Errorf("the plain lab exec, which waited, is listed as interference")
		}

		// A run with nothing else going on lists none.
		res, _ := itRunJSON(t, 0, "labtest", "-e", "ok")
		if len(res.Interference) != 0 {
			t.Errorf("a quiet run lists interference %+v", res.Interference)
		}
	})

	t.Run("save fails mid-run", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "results")
		// os.TempDir is where the fallback goes. Set only now (the boot
		// lock lives in the temp dir too), and short: the plugin's unix
		// sockets are made there.
		fallbackDir, err := os.MkdirTemp("/tmp", "lfb")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(fallbackDir) })
		setEnv(t, "TMPDIR", fallbackDir)
		// The ticks of the earlier run must not count.
		itMust(t, itCallTimeout, nil, "exec", "--", "rm", "-f", "/tmp/labtest.ticks")
		ch := make(chan labResult, 1)
		go func() {
			ch <- itLab(t, itRunTimeout, nil, "run", "--json", "--out", out, "labtest", "-e", "slow", "-p", "seconds=5")
		}()
		waitTicks(t, 1)
		// lab run made the directory when it checked it; now it goes, and
		// a file takes its place so it cannot be made again.
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, []byte("in the way\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var r labResult
		select {
		case r = <-ch:
		case <-time.After(itRunTimeout):
			t.Fatal("the run did not end")
		}
		if r.code != wantExitSaveFailed {
			t.Fatalf("exit %d, want %d (save failed)\n%s", r.code, wantExitSaveFailed, r.stderr)
		}
		var printed results.Result
		if err := json.Unmarshal([]byte(r.stdout), &printed); err != nil {
			t.Fatalf("stdout is not the result document: %v\n%s", err, r.stdout)
		}
		fallback := filepath.Join(fallbackDir, printed.ID+".json")
		for _, w := range []string{"result: " + fallback, "saving the result in " + out + " failed", "saved to " + fallback} {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
			}
		}
		saved, err := results.Load(fallback)
		if err != nil {
			t.Fatal(err)
		}
		if saved.Outcome.Status != "ok" || len(saved.Samples) != 5 || saved.ID != printed.ID {
			t.Errorf("fallback document: outcome %+v, %d samples; want the whole run (5 samples)", saved.Outcome, len(saved.Samples))
		}
	})
}
