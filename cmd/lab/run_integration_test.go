package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"lab/internal/labtest"
	"lab/plugins/host"
	"lab/results"
)

const itRunTimeout = 5 * time.Minute

// itTestPlugins builds the test plugins with `lab plugin build` into a
// directory on $LAB_PLUGIN_PATH, plus "wrongarch": labtest whose i386 build
// is really the x86_64 binary.
func itTestPlugins(t *testing.T) string {
	t.Helper()
	root, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, p := range []string{"labtest", "badshake"} {
		itMust(t, 5*time.Minute, nil, "plugin", "build", "--out", dir, filepath.Join(root, "internal", "testplugins", p))
	}
	for _, arch := range []string{"i386", "x86_64"} {
		if err := os.MkdirAll(filepath.Join(dir, "wrongarch", arch), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Both arch directories get the x86_64 build.
	b, err := os.ReadFile(filepath.Join(dir, "labtest", "x86_64", "labtest"))
	if err != nil {
		t.Fatal(err)
	}
	desc, err := host.ReadRecord(filepath.Join(dir, "labtest", "x86_64"), "labtest")
	if err != nil {
		t.Fatal(err)
	}
	desc.Name = "wrongarch"
	for _, arch := range []string{"i386", "x86_64"} {
		adir := filepath.Join(dir, "wrongarch", arch)
		if err := os.WriteFile(filepath.Join(adir, "wrongarch"), b, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := host.WriteRecord(adir, desc); err != nil {
			t.Fatal(err)
		}
	}
	setEnv(t, "LAB_PLUGIN_PATH", dir)
	return dir
}

// itRunJSON runs `lab run ... --json` and decodes the result document.
func itRunJSON(t *testing.T, wantCode int, args ...string) (*results.Result, labResult) {
	t.Helper()
	r := itLab(t, itRunTimeout, nil, append([]string{"run", "--json", "--out", itResultsDir(t)}, args...)...)
	if r.code != wantCode {
		t.Fatalf("lab run %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, wantCode, r.stdout, r.stderr)
	}
	var res results.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("lab run --json output does not parse: %v\n%s", err, r.stdout)
	}
	// The document printed is the one saved.
	if !strings.Contains(r.stderr, "result: ") {
		t.Fatalf("lab run did not print the result path:\n%s", r.stderr)
	}
	path := strings.TrimSpace(r.stderr[strings.LastIndex(r.stderr, "result: ")+len("result: "):])
	path, _, _ = strings.Cut(path, "\n")
	saved, err := results.Load(path)
	if err != nil {
		t.Fatalf("result %s: %v", path, err)
	}
	if saved.ID != res.ID || len(saved.Samples) != len(res.Samples) {
		t.Errorf("saved result %s differs from the printed one", path)
	}
	return &res, r
}

var itResultsOnce sync.Map

func itResultsDir(t *testing.T) string {
	if d, ok := itResultsOnce.Load(t.Name()); ok {
		return d.(string)
	}
	d := t.TempDir()
	itResultsOnce.Store(t.Name(), d)
	return d
}

func itMedian(t *testing.T, res *results.Result, metric string) float64 {
	t.Helper()
	for _, s := range res.Summary {
		if s.Metric == metric && len(s.Labels) == 0 {
			return s.Median
		}
	}
	t.Fatalf("result has no summary for %s: %+v", metric, res.Summary)
	return 0
}

// TestIntegrationRunForkbench runs both forkbench experiments (small N)
// through the real plugin path on an i386 and the x86_64 profile.
func TestIntegrationRunForkbench(t *testing.T) {
	for _, profile := range []string{"celeron-2.4", "modern-x86_64"} {
		t.Run(profile, func(t *testing.T) {
			p := itProfile(t, profile)
			itBootEnv(t, p)
			st := itUp(t, profile, profile)

			res, _ := itRunJSON(t, 0, "forkbench", "--vm", profile, "-e", "forktime", "-p", "n=200", "--repeat", "2")
			if res.Outcome.Status != "ok" {
				t.Fatalf("forktime outcome %+v", res.Outcome)
			}
			fork, thread := itMedian(t, res, "fork_wait_us"), itMedian(t, res, "thread_create_join_us")
			t.Logf("%s forktime: fork+wait %.1f µs, pthread_create+join %.1f µs", profile, fork, thread)
			if !(fork > thread && thread > 0) {
				t.Errorf("fork+wait %.1f µs should cost more than pthread_create+join %.1f µs", fork, thread)
			}
			if res.Plugin != "forkbench" || res.Experiment != "forktime" || res.Parameters["n"] != "200" || res.Parameters["repeat"] != "2" {
				t.Errorf("provenance: plugin %q experiment %q params %v", res.Plugin, res.Experiment, res.Parameters)
			}
			if res.Machine.Accelerator != "tcg" || res.Machine.KernelSHA256 != st.KernelSHA256 || len(res.Machine.QEMUArgv) == 0 || res.Machine.QEMUVersion == "" {
				t.Errorf("machine provenance incomplete: %+v", res.Machine)
			}
			if !strings.HasPrefix(res.Guest.Libc, "glibc-") || res.Guest.CPUModel != st.Guest.CPUModel || res.Guest.KernelRelease == "" {
				t.Errorf("guest env: %+v", res.Guest)
			}
			if n := len(res.Samples); n < 2*3 {
				t.Errorf("%d samples, want at least 2 repeats x 3 metrics", n)
			}

			res, _ = itRunJSON(t, 0, "forkbench", "--vm", profile, "-e", "create", "-p", "m=300")
			proc, thr := itMedian(t, res, "process_ms"), itMedian(t, res, "thread_ms")
			t.Logf("%s create: process %.3f ms, thread %.3f ms", profile, proc, thr)
			if !(proc > thr && thr > 0) {
				t.Errorf("process create+destroy %.3f ms should cost more than thread %.3f ms", proc, thr)
			}
		})
	}
}

// TestIntegrationRunBadInput: what can be checked without a guest is, and
// the error lists what is valid.
func TestIntegrationRunBadInput(t *testing.T) {
	labtest.RequireBoot(t)
	itTestPlugins(t)
	stateRoot(t)
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"nosuch"}, []string{`unknown plugin "nosuch"`, "forkbench", "labtest"}},
		{[]string{"forkbench", "-e", "nosuch"}, []string{"nosuch", "forktime", "create"}},
		{[]string{"forkbench", "-p", "iterations=5"}, []string{"iterations", "n (int, default 2000"}},
		{[]string{"forkbench", "-p", "n=0"}, []string{"n", "1..1000000"}},
		{[]string{"forkbench", "-p", "n=many"}, []string{"n", "many"}},
		{[]string{"forkbench", "-p", "n"}, []string{"KEY=VALUE"}},
		{[]string{"forkbench", "--repeat", "0"}, []string{"--repeat"}},
		{[]string{"forkbench"}, []string{"no VMs are up"}},
	}
	for _, c := range cases {
		r := itLab(t, time.Minute, nil, append([]string{"run"}, c.args...)...)
		if r.code == 0 {
			t.Errorf("lab run %v: exit 0, want an error", c.args)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("lab run %v: error %q does not mention %q", c.args, strings.TrimSpace(r.stderr), w)
			}
		}
	}
}

// TestIntegrationRunFailures drives the failure paths of a run in one
// guest: a crash, a hang, two runs at once, a wrong-arch build, and last the
// guest dying mid-run. After each (but the last) the VM must still work.
func TestIntegrationRunFailures(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itTestPlugins(t)
	itBootEnv(t, p)
	st := itUp(t, p.Name, "fail")

	okRun := func(t *testing.T) {
		t.Helper()
		res, _ := itRunJSON(t, 0, "labtest", "-e", "ok", "--repeat", "2")
		if res.Outcome.Status != "ok" || len(res.Samples) != 2 {
			t.Fatalf("the VM is not usable after the failure: %+v, %d samples", res.Outcome, len(res.Samples))
		}
	}

	t.Run("crash", func(t *testing.T) {
		res, r := itRunJSON(t, 1, "labtest", "-e", "crash")
		if res.Outcome.Status != "failed" || !strings.Contains(res.Outcome.Reason, "crashed") {
			t.Errorf("outcome %+v, want failed: the plugin crashed", res.Outcome)
		}
		if !strings.Contains(res.Outcome.StderrTail, "crashing on purpose") {
			t.Errorf("stderr tail %q lacks the plugin's last words", res.Outcome.StderrTail)
		}
		if len(res.Samples) != 1 {
			t.Errorf("%d samples kept, want the 1 reported before the crash", len(res.Samples))
		}
		if !strings.Contains(r.stderr, "crashing on purpose") {
			t.Errorf("lab run's error does not quote the plugin's stderr:\n%s", r.stderr)
		}
		okRun(t)
	})

	t.Run("hang", func(t *testing.T) {
		start := time.Now()
		res, _ := itRunJSON(t, 1, "labtest", "-e", "hang", "--timeout", "20s")
		if took := time.Since(start); took > 45*time.Second {
			t.Errorf("--timeout 20s took %v to end the run", took)
		}
		if !strings.Contains(res.Outcome.Reason, "timed out") {
			t.Errorf("outcome %+v, want timed out", res.Outcome)
		}
		if left := itGuestProcs(t, "labtest"); left != "" {
			t.Errorf("the hung plugin still runs in the guest: %s", left)
		}
		okRun(t)
	})

	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		out := make([]*results.Result, 2)
		errs := make([]string, 2)
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := itLab(t, itRunTimeout, nil, "run", "--json", "--out", t.TempDir(), "labtest", "-e", "slow", "-p", "seconds=3")
				var res results.Result
				if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil {
					errs[i] = r.stderr
					return
				}
				out[i] = &res
				errs[i] = r.stderr
			}()
		}
		wg.Wait()
		if out[0] == nil || out[1] == nil {
			t.Fatalf("concurrent runs failed:\n%s\n---\n%s", errs[0], errs[1])
		}
		a, b := out[0], out[1]
		if a.Started.After(b.Started) {
			a, b = b, a
		}
		if b.Started.Before(a.Finished) {
			t.Errorf("runs interleaved: %v..%v and %v..%v", a.Started, a.Finished, b.Started, b.Finished)
		}
		if !strings.Contains(errs[0]+errs[1], "waiting for it to finish") {
			t.Errorf("neither run said it waited its turn:\n%s\n---\n%s", errs[0], errs[1])
		}
	})

	t.Run("bad handshake", func(t *testing.T) {
		r := itLab(t, time.Minute, nil, "run", "badshake")
		for _, w := range []string{"badshake", "did not start", "version"} {
			if r.code == 0 || !strings.Contains(r.stderr, w) {
				t.Errorf("plugin with the wrong handshake: exit %d, stderr %q does not mention %q", r.code, r.stderr, w)
			}
		}
		okRun(t)
	})

	t.Run("wrong arch", func(t *testing.T) {
		r := itLab(t, time.Minute, nil, "run", "wrongarch")
		if r.code == 0 || !strings.Contains(r.stderr, "built for x86_64, the guest is i386") {
			t.Errorf("wrong-arch plugin: exit %d, stderr %q", r.code, r.stderr)
		}
	})

	t.Run("guest dies", func(t *testing.T) {
		type done struct {
			res *results.Result
			r   labResult
		}
		// The ticks file of an earlier run must not count.
		itMust(t, itCallTimeout, nil, "exec", "--", "rm", "-f", "/tmp/labtest.ticks")
		ch := make(chan done, 1)
		go func() {
			r := itLab(t, itRunTimeout, nil, "run", "--json", "--out", t.TempDir(), "labtest", "-e", "slow", "-p", "seconds=120")
			var res results.Result
			_ = json.Unmarshal([]byte(r.stdout), &res)
			ch <- done{&res, r}
		}()
		// Wait until the plugin has reported a few samples (it counts them
		// in a file in the guest), then kill the machine under it.
		deadline := time.Now().Add(2 * time.Minute)
		for {
			// --no-wait: a plain exec would wait for the run to end.
			r := itLab(t, itCallTimeout, nil, "exec", "--no-wait", "--", "cat", "/tmp/labtest.ticks")
			if n, err := strconv.Atoi(strings.TrimSpace(r.stdout)); err == nil && n >= 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the plugin never reported 3 samples")
			}
			time.Sleep(time.Second)
		}
		killed := time.Now()
		if err := syscall.Kill(st.QEMUPID, syscall.SIGKILL); err != nil {
			t.Fatalf("killing qemu: %v", err)
		}
		var d done
		select {
		case d = <-ch:
		case <-time.After(time.Minute):
			t.Fatal("lab run did not notice the guest died within a minute")
		}
		t.Logf("run ended %.1fs after the guest died", time.Since(killed).Seconds())
		t.Logf("lab run stderr:\n%s", d.r.stderr)
		if d.r.code == 0 || d.res.Outcome.Status != "failed" {
			t.Fatalf("exit %d, outcome %+v; want a failed run\n%s", d.r.code, d.res.Outcome, d.r.stderr)
		}
		if !strings.Contains(d.res.Outcome.Reason, "guest died") {
			t.Errorf("reason %q does not say the guest died", d.res.Outcome.Reason)
		}
		if len(d.res.Samples) < 2 {
			t.Errorf("%d samples kept, want those gathered before the guest died", len(d.res.Samples))
		}
		// The supervisor notices its QEMU is gone and removes the VM's
		// state on its own time, which can be after lab run has ended.
		gone := time.Now().Add(15 * time.Second)
		for {
			if _, err := testRoots(t).vm.Open("fail"); err != nil {
				t.Logf("vm fail gone %.1fs after its QEMU died", time.Since(killed).Seconds())
				break
			}
			if time.Now().After(gone) {
				t.Errorf("vm fail still listed as up 15 s after its QEMU died")
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		// Its supervisor exits just after it removes the state (CI once
		// found it still running when the test ended at once after).
		if procs := labtest.WaitNoProcs(getenvFor(t)("LAB_STATE_DIR"), 10*time.Second); len(procs) > 0 {
			t.Errorf("the supervisor of vm fail still runs 10 s after its state went: %v", procs)
		}
	})
}

// itGuestProcs returns the guest's process lines mentioning name.
func itGuestProcs(t *testing.T, name string) string {
	t.Helper()
	r := itLab(t, itCallTimeout, nil, "exec", "--", "sh", "-c", "ps -o pid,args | grep '[/]"+name+"' || true")
	return strings.TrimSpace(r.stdout)
}

// TestIntegrationRunExternalPlugin: a plugin living outside lab's module
// (examples/syscallbench), built with `lab plugin build`, run with
// --profile on a throwaway VM that is powered off afterwards.
func TestIntegrationRunExternalPlugin(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	root := itBootEnv(t, p)
	repo, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	itMust(t, 5*time.Minute, nil, "plugin", "build", "--out", dir, filepath.Join(repo, "examples", "syscallbench"))
	setEnv(t, "LAB_PLUGIN_PATH", dir)
	if r := itMust(t, time.Minute, nil, "plugins"); !strings.Contains(r.stdout, "syscallbench") {
		t.Errorf("lab plugins does not list the plugin on LAB_PLUGIN_PATH:\n%s", r.stdout)
	}
	res, _ := itRunJSON(t, 0, "syscallbench", "--profile", p.Name, "-p", "n=2000", "--repeat", "2")
	if v := itMedian(t, res, "syscall_ns"); v <= 0 {
		t.Errorf("syscall_ns median %v", v)
	}
	if res.Guest.CPUModel != p.CPU.ModelID {
		t.Errorf("ran on %q, want the %s guest", res.Guest.CPUModel, p.Name)
	}
	if r := itMust(t, itCallTimeout, nil, "status", "--json"); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("the throwaway VM is still listed:\n%s", r.stdout)
	}
	if procs := labtest.WaitNoProcs(root, 5*time.Second); len(procs) > 0 {
		t.Errorf("the throwaway VM left processes: %v", procs)
	}
}
