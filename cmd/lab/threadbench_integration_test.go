package main

import (
	"strings"
	"testing"
	"time"

	"lab/results"
)

// itSeries is the samples of metric whose labels include want.
func itSeries(res *results.Result, metric string, want map[string]string) []float64 {
	var out []float64
next:
	for _, s := range res.Samples {
		if s.Metric != metric {
			continue
		}
		for k, v := range want {
			if s.Labels[k] != v {
				continue next
			}
		}
		out = append(out, s.Value)
	}
	return out
}

// itVerdict is the verdict on claim id in res.
func itVerdict(t *testing.T, res *results.Result, id string) results.Verdict {
	t.Helper()
	for _, v := range res.Verdicts {
		if v.Claim == id {
			t.Logf("%s %s: %s", v.Claim, v.Verdict, v.Reason)
			return v
		}
	}
	t.Fatalf("result %s has no verdict on %s: %+v", res.ID, id, res.Verdicts)
	return results.Verdict{}
}

// TestIntegrationThreadbench runs each threadbench experiment with small
// sizes through the real plugin path in one celeron-2.4 guest.
func TestIntegrationThreadbench(t *testing.T) {
	const profile = "celeron-2.4"
	itBootEnv(t, itProfile(t, profile))
	itUp(t, profile, "tb")

	t.Run("hello", func(t *testing.T) {
		res, _ := itRunJSON(t, 0, "threadbench", "--vm", "tb", "-e", "hello", "-p", "workers=8", "-p", "count=20", "--repeat", "2")
		if res.Outcome.Status != "ok" || res.Parameters["stdout"] != "pty" || res.Parameters["mode"] != "both" {
			t.Fatalf("outcome %+v, parameters %v; want ok with stdout=pty, mode=both", res.Outcome, res.Parameters)
		}
		for _, mode := range []string{"process", "thread"} {
			for _, m := range []string{"real_s", "user_s", "sys_s"} {
				if got := itSeries(res, m, map[string]string{"mode": mode}); len(got) != 2 {
					t.Errorf("%s at mode=%s: %v, want 2 samples", m, mode, got)
				}
			}
		}
		// E1's claims are decided only by their own parameters (255 workers, a sweep).
		if v := itVerdict(t, res, "E1.1"); v.Verdict != results.NotRun || !strings.Contains(v.Reason, "workers=8") {
			t.Errorf("E1.1 on 8 workers: %+v, want not run naming workers", v)
		}
		// E1's estimator (5 runs, drop min and max, average) is in every summary.
		for _, s := range res.Summary {
			if s.Metric == "real_s" && (s.TrimmedMean <= 0 || s.N != 2) {
				t.Errorf("summary %+v: want 2 samples and E1's trimmed mean", s)
			}
		}
	})

	t.Run("hello to the serial console", func(t *testing.T) {
		res, _ := itRunJSON(t, 0, "threadbench", "--vm", "tb", "-e", "hello", "-p", "workers=2", "-p", "count=3",
			"-p", "stdout=serial", "-p", "mode=thread", "-p", "line_bytes=40")
		if res.Outcome.Status != "ok" || len(itSeries(res, "real_s", map[string]string{"mode": "thread"})) != 1 {
			t.Fatalf("outcome %+v, samples %+v", res.Outcome, res.Samples)
		}
		r := itMust(t, itCallTimeout, nil, "console", "tb")
		if !strings.Contains(r.stdout, "hello linux............................") {
			t.Errorf("the serial console does not show the workers' 40-byte lines:\n%s", tailText(r.stdout, 2000))
		}
	})

	t.Run("limit", func(t *testing.T) {
		res, _ := itRunJSON(t, 0, "threadbench", "--vm", "tb", "-e", "limit", "-p", "stack_kb=1024", "-p", "max_threads=200")
		if got := itSeries(res, "max_threads", map[string]string{"stack_kb": "1024"}); len(got) != 1 || got[0] != 200 {
			t.Errorf("max_threads at stack_kb=1024 with a cap of 200: %v, want [200]", got)
		}
		if v := itVerdict(t, res, "E1.4"); v.Verdict != results.Inconclusive {
			t.Errorf("E1.4 from one capped repeat: %+v, want inconclusive (too few samples)", v)
		}
	})

	t.Run("requests", func(t *testing.T) {
		res, _ := itRunJSON(t, 0, "threadbench", "--vm", "tb", "-e", "requests", "-p", "requests=50", "--repeat", "4")
		if res.Outcome.Status != "ok" {
			t.Fatalf("outcome %+v", res.Outcome)
		}
		// 50 sleeps of 2 ms take at least 100 ms, one at a time or under the lock.
		for _, m := range []string{"serial_ms", "threaded_ms"} {
			for _, v := range itSeries(res, m, nil) {
				if v < 100 {
					t.Errorf("%s = %v, want >= 100 ms", m, v)
				}
			}
		}
		if got := itSeries(res, "committed_per_thread_kb", nil); len(got) != 4 || got[0] < 64 {
			t.Errorf("committed_per_thread_kb = %v, want 4 samples of at least the 64 KB stack", got)
		}
		// Under the host clock the absolute times are not comparable; the ratio is decided.
		if v := itVerdict(t, res, "E4.2"); v.Verdict != results.NotComparable {
			t.Errorf("E4.2 under the host clock: %+v, want not comparable", v)
		}
		if v := itVerdict(t, res, "E4.4"); !v.Decided() || v.Verdict == results.NotComparable {
			t.Errorf("E4.4, a ratio of one run's times: %+v, want decided", v)
		}
	})

	// More processes than the guest can hold: in this 256 MB guest the
	// kernel's threads-max (about 3700 tasks) stops fork with EAGAIN, or
	// memory runs out first. The run ends, says what failed, and the VM
	// stays usable.
	t.Run("too many processes", func(t *testing.T) {
		start := time.Now()
		res, r := itRunJSON(t, 1, "threadbench", "--vm", "tb", "-e", "hello", "-p", "workers=5000", "-p", "count=1000",
			"-p", "mode=process", "--timeout", "4m")
		// Which limit comes first depends on what else the guest holds
		// (the preloaded plugin bundles are in its RAM): fork's EAGAIN at
		// threads-max, or the OOM killer, which takes a workload process
		// and never the plugin (plugins.protectFromOOM).
		forkFailed := strings.Contains(res.Outcome.Reason, "fork worker") &&
			strings.Contains(res.Outcome.Reason, "of 5000") && strings.Contains(res.Outcome.Reason, "Resource temporarily unavailable")
		oom := strings.Contains(res.Outcome.Reason, "the guest ran out of memory during workload hello: the kernel's OOM killer killed")
		if res.Outcome.Status != "failed" || !(forkFailed || oom) {
			t.Errorf("outcome %+v, want failed naming the fork that failed and why, or the OOM kill", res.Outcome)
		}
		t.Logf("outcome: %s", res.Outcome.Reason)
		if !strings.Contains(r.stderr, "run failed") {
			t.Errorf("lab run does not say the run failed:\n%s", r.stderr)
		}
		t.Logf("the failed run took %v", time.Since(start).Round(time.Second))
		// The VM is usable afterwards.
		itMust(t, itCallTimeout, nil, "exec", "tb", "--", "true")
		res, _ = itRunJSON(t, 0, "threadbench", "--vm", "tb", "-e", "hello", "-p", "workers=4", "-p", "count=5")
		if res.Outcome.Status != "ok" {
			t.Errorf("a run after the failure: %+v", res.Outcome)
		}
	})
}

func tailText(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// TestIntegrationThreadbenchSplit: on the 3G/1G profile with 8 MB stacks
// one process makes a few threads fewer than 3 GB / 8 MB = 384, and the
// original program, past that, ends in SIGSEGV, recorded as data.
func TestIntegrationThreadbenchSplit(t *testing.T) {
	const profile = "split-3g1g"
	itBootEnv(t, itProfile(t, profile))
	itUp(t, profile, "split")

	res, _ := itRunJSON(t, 0, "threadbench", "--vm", "split", "-e", "limit", "--repeat", "2")
	got := itSeries(res, "max_threads", map[string]string{"stack_kb": "8192"})
	if len(got) != 2 {
		t.Fatalf("max_threads at stack_kb=8192: %v, want 2 samples (outcome %+v)", got, res.Outcome)
	}
	for _, n := range got {
		if n < 370 || n > 384 {
			t.Errorf("max_threads = %v, want 370..384", n)
		}
	}

	res, _ = itRunJSON(t, 0, "threadbench", "--vm", "split", "-e", "limit", "-p", "faithful=true", "-p", "workers=500")
	if res.Outcome.Status != "expected-crash" || !strings.Contains(res.Outcome.Reason, "SIGSEGV") {
		t.Fatalf("faithful run: outcome %+v, want expected-crash naming SIGSEGV", res.Outcome)
	}
	if n := itSeries(res, "max_threads", nil); len(n) != 1 || n[0] < 370 || n[0] > 384 {
		t.Errorf("faithful run made %v threads before crashing, want one count in 370..384", n)
	}
	if v := itVerdict(t, res, "E1.3"); v.Verdict != results.Reproduced || v.Note != "" {
		t.Errorf("E1.3 at workers=500 on split-3g1g: %+v, want reproduced without a note", v)
	}
	// Below the limit the original program runs to the end.
	res, _ = itRunJSON(t, 0, "threadbench", "--vm", "split", "-e", "limit", "-p", "faithful=true", "-p", "workers=300")
	if res.Outcome.Status != "ok" {
		t.Errorf("faithful run of 300 threads: %+v, want ok", res.Outcome)
	}
}
