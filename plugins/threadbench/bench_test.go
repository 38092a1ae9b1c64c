package main

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"lab/plugins"
	"lab/plugins/plugintest"
)

// testBench is threadbench as main serves it.
func testBench() bench { return bench{desc: plugins.MustParseDescription(description)} }

var workloadNames = []string{"hello", "limit", "requests"}

// buildWorkloads compiles the C workloads with cc for the host, as `lab
// plugin build` does for the guests (plugintest.BuildWorkloads).
func buildWorkloads(t *testing.T, cc string) string {
	t.Helper()
	return plugintest.BuildWorkloads(t, cc, workloadNames)
}

func TestDescription(t *testing.T) {
	d, err := plugins.ParseDescription(description)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "threadbench" {
		t.Errorf("name = %q, want threadbench (the directory's)", d.Name)
	}
	var names []string
	for _, e := range d.Experiments {
		names = append(names, e.Name)
	}
	if !reflect.DeepEqual(names, workloadNames) {
		t.Errorf("experiments = %v, want %v (each runs its workload)", names, workloadNames)
	}
	// The claims of SEEDS.md threadbench decides, each with its experiment.
	want := map[string]struct{ exp, kind string }{
		"E1.1": {"hello", plugins.KindUntestable}, "E1.2a": {"hello", plugins.KindCrossover}, "E1.2b": {"hello", plugins.KindEquivalence},
		"E1.4b": {"hello", plugins.KindTrend}, "E1.5": {"hello", plugins.KindEquivalence},
		"E1.8a": {"hello", plugins.KindSpeedup}, "E1.8b": {"hello", plugins.KindEquivalence},
		"E1.3a": {"limit", plugins.KindRange}, "E1.3b": {"limit", plugins.KindCrash}, "E1.4a": {"limit", plugins.KindCrash},
		"E4.1": {"requests", plugins.KindUntestable}, "E4.2": {"requests", plugins.KindUntestable},
		"E4.3": {"requests", plugins.KindUntestable}, "E4.4": {"requests", plugins.KindEquivalence},
		"E4.5": {"requests", plugins.KindUntestable}, "E4.6": {"requests", plugins.KindRatio},
	}
	got := map[string]struct{ exp, kind string }{}
	for _, e := range d.Experiments {
		for _, c := range e.Claims {
			got[c.ID] = struct{ exp, kind string }{e.Name, c.Kind()}
			if c.Rationale == "" || c.Machine == "" || !strings.Contains(c.Rationale, `"`) {
				t.Errorf("claim %s does not quote the words its bounds come from, or what it was measured on", c.ID)
			}
			// Only values the experiment accepts: a claim restricted to a
			// value no run can have is never decided.
			if c.Scope == nil {
				continue
			}
			// In canonical form too: a run's parameters are compared as text.
			if _, params, err := d.Resolve(e.Name, c.Scope.Params); err != nil {
				t.Errorf("claim %s scope params %v: %v", c.ID, c.Scope.Params, err)
			} else {
				for k, v := range c.Scope.Params {
					if params[k] != v {
						t.Errorf("claim %s scope param %s=%s is not canonical (%s)", c.ID, k, v, params[k])
					}
				}
			}
			if sw := c.Scope.Sweep; sw != nil {
				for _, v := range sw.Points {
					if _, params, err := d.Resolve(e.Name, map[string]string{sw.Key: v}); err != nil || params[sw.Key] != v {
						t.Errorf("claim %s sweep point %s=%s: %v (canonical %q)", c.ID, sw.Key, v, err, params[sw.Key])
					}
				}
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("claims = %v, want %v", got, want)
	}
	for _, tc := range []struct{ exp, param, want string }{
		{"hello", "workers", "255"}, {"hello", "mode", "both"}, {"hello", "stdout", "pty"}, {"hello", "line_bytes", "12"},
		{"limit", "stack_kb", "8192"}, {"limit", "faithful", "false"},
		{"requests", "requests", "1200"}, {"requests", "delay_ms", "2"}, {"requests", "stack_kb", "64"},
	} {
		_, params, err := d.Resolve(tc.exp, nil)
		if err != nil || params[tc.param] != tc.want {
			t.Errorf("Resolve(%q, nil)[%s] = %q, %v; want %s", tc.exp, tc.param, params[tc.param], err, tc.want)
		}
	}
}

// Every claim says which runs decide it, where its bounds come from, what
// our machine cannot show and which word conventions it follows; one that
// is true by construction says so.
func TestClaimsScoped(t *testing.T) {
	// Claims whose words need no convention to read, and why.
	literal := map[string]string{"E1.4a": "the runs succeed at the article's points: no word to read"}
	byConstruction := []string{"E1.3a", "E1.4a", "E4.4"}
	d := testBench().desc
	for _, e := range d.Experiments {
		for _, c := range e.Claims {
			if c.Rationale == "" || c.Fidelity == "" || c.SourceWords+c.DigestWords == "" || c.Source == "" {
				t.Errorf("claim %s lacks a rationale, a fidelity note, source or source words", c.ID)
			}
			if len(c.Conventions) == 0 && literal[c.ID] == "" {
				t.Errorf("claim %s names no word convention", c.ID)
			}
			if c.Untestable == nil && (c.Scope == nil || len(c.Scope.Profiles) == 0) {
				t.Errorf("claim %s has no scope profiles: no run could decide it", c.ID)
			}
			if c.Scope != nil && len(c.Scope.Clocks) == 0 {
				t.Errorf("claim %s does not say which clocks decide it", c.ID)
			}
			if slices.Contains(byConstruction, c.ID) != (c.ByConstruction != "") {
				t.Errorf("claim %s by construction = %q; want it set for %v only", c.ID, c.ByConstruction, byConstruction)
			}
			// A crossover's band edges, and every point a rule needs, are
			// sweep points the scope requires.
			if x := c.Crossover; x != nil {
				sw := c.Scope.Sweep
				for _, edge := range []float64{x.BandStart, x.BandEnd} {
					p := strconv.FormatFloat(edge, 'f', -1, 64)
					if sw == nil || sw.Key != x.Sweep || !slices.Contains(sw.Required, p) {
						t.Errorf("claim %s: band edge %s=%s is not a required sweep point of its scope", c.ID, x.Sweep, p)
					}
				}
			}
			if x := c.Trend; x != nil && (c.Scope.Sweep == nil || c.Scope.Sweep.Key != x.Sweep || len(c.Scope.Sweep.Required) < 2) {
				t.Errorf("claim %s: a trend needs its sweep's smallest and largest points required", c.ID)
			}
			if x := c.Crash; x != nil && (c.Scope.Sweep == nil || c.Scope.Sweep.Key != x.Param || len(c.Scope.Sweep.Required) == 0) {
				t.Errorf("claim %s: a crash claim needs its bracket as required points of %s", c.ID, x.Param)
			}
			// E4's workload changed in 0.2.0 (the lock held while the
			// threads start, CPU from CLOCK_PROCESS_CPUTIME_ID): older
			// runs measured something else.
			if strings.HasPrefix(c.ID, "E4.") {
				if v := c.Scope.MinPluginVersion; v == "" || !versionAtMost(v, d.Version) || !versionAtMost("0.2.0", v) {
					t.Errorf("claim %s min plugin version %q; want 0.2.0 or later, at most the plugin's %s", c.ID, v, d.Version)
				}
			}
		}
	}
}

// versionAtMost says whether dotted version a is at most b.
func versionAtMost(a, b string) bool {
	x, y := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(x) || i < len(y); i++ {
		var p, q int
		if i < len(x) {
			p, _ = strconv.Atoi(x[i])
		}
		if i < len(y) {
			q, _ = strconv.Atoi(y[i])
		}
		if p != q {
			return p < q
		}
	}
	return true
}

func TestModes(t *testing.T) {
	for _, tc := range []struct {
		mode   string
		repeat int
		want   []string
	}{
		{"both", 0, []string{"process", "thread"}},
		{"both", 1, []string{"thread", "process"}},
		{"both", 2, []string{"process", "thread"}},
		{"thread", 1, []string{"thread"}},
		{"process", 0, []string{"process"}},
	} {
		if got := modes(tc.mode, tc.repeat); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("modes(%q, %d) = %v, want %v", tc.mode, tc.repeat, got, tc.want)
		}
	}
}

func TestCrashReason(t *testing.T) {
	got := crashReason("SIGSEGV", "381", "EAGAIN", "500", "8192")
	for _, want := range []string{"SIGSEGV (segmentation fault)", "after 381 of 500 threads", "8192 KB stacks", "pthread_create #382 failed with EAGAIN"} {
		if !strings.Contains(got, want) {
			t.Errorf("crashReason = %q, want it to say %q", got, want)
		}
	}
	if got := crashReason("SIGBUS", "10", "none", "10", "64"); strings.Contains(got, "#11") {
		t.Errorf("crashReason with no failed create = %q, names a failed create", got)
	}
}

// bySeries groups samples by metric and labels.
func bySeries(samples []plugins.Sample) map[string][]float64 {
	out := map[string][]float64{}
	for _, s := range samples {
		k := s.Metric
		for _, l := range []string{"mode", "signal", "stack_kb"} {
			if v, ok := s.Labels[l]; ok {
				k += " " + l + "=" + v
			}
		}
		out[k] = append(out[k], s.Value)
	}
	return out
}

func run(t *testing.T, dir, exp string, params map[string]string, repeat int) *plugins.RunResponse {
	t.Helper()
	resp, err := testBench().Run(context.Background(), &plugins.RunRequest{Experiment: exp, Params: params, Repeat: repeat, WorkloadDir: dir}, nil)
	if err != nil {
		t.Fatalf("Run %s %v: %v", exp, params, err)
	}
	return resp
}

func TestRunHello(t *testing.T) {
	for _, cc := range []string{"gcc", "i686-linux-gnu-gcc"} {
		dir := buildWorkloads(t, cc)
		for _, out := range []string{"pty", "null", "file"} {
			t.Run(cc+"/"+out, func(t *testing.T) {
				resp := run(t, dir, "hello", map[string]string{"workers": "8", "count": "50", "stdout": out}, 2)
				if resp.Outcome.Status != plugins.StatusOK {
					t.Fatalf("outcome = %+v\nlog:\n%s", resp.Outcome, resp.Log)
				}
				s := bySeries(resp.Samples)
				if len(resp.Samples) != 2*2*3 {
					t.Errorf("%d samples, want 12 (3 metrics x 2 modes x 2 repeats): %v", len(resp.Samples), s)
				}
				for _, mode := range []string{"process", "thread"} {
					for _, m := range []string{"real_s", "user_s", "sys_s"} {
						if len(s[m+" mode="+mode]) != 2 {
							t.Errorf("%s at mode=%s: %v, want 2 samples", m, mode, s[m+" mode="+mode])
						}
					}
					for _, v := range s["real_s mode="+mode] {
						if v <= 0 {
							t.Errorf("real_s at mode=%s = %v, want > 0", mode, v)
						}
					}
				}
				// The pty is a terminal: its line discipline turns each
				// "\n" into "\r\n", so the reader drained one byte more a line.
				if out == "pty" && !strings.Contains(resp.Log, "stdout_bytes 5200\n") {
					t.Errorf("pty reader did not drain 8 x 50 x 13 bytes:\n%s", resp.Log)
				}
				if !strings.HasPrefix(resp.Env.Libc, "glibc-") {
					t.Errorf("env libc = %q", resp.Env.Libc)
				}
			})
		}
	}
}

func TestRunHelloLines(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	resp := run(t, dir, "hello", map[string]string{"workers": "3", "count": "7", "line_bytes": "256", "mode": "thread", "stdout": "null"}, 1)
	if resp.Outcome.Status != plugins.StatusOK {
		t.Fatalf("outcome = %+v", resp.Outcome)
	}
	if len(resp.Samples) != 3 || resp.Samples[0].Labels["mode"] != "thread" {
		t.Errorf("samples = %+v, want 3 of mode thread", resp.Samples)
	}
	for _, want := range []string{"line_bytes 256\n", "lines 21\n"} {
		if !strings.Contains(resp.Log, want) {
			t.Errorf("log lacks %q:\n%s", want, resp.Log)
		}
	}
}

// A log that cannot fit is refused before any worker starts, naming
// what to lower: a failed outcome, not a filled guest.
func TestRunHelloTooBig(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	resp := run(t, dir, "hello", map[string]string{"workers": "10000", "count": "10000000", "line_bytes": "65536", "stdout": "null"}, 1)
	if resp.Outcome.Status != plugins.StatusFailed || !strings.Contains(resp.Outcome.Reason, "lower count, workers or line_bytes") {
		t.Errorf("outcome = %+v, want failed saying what to lower", resp.Outcome)
	}
}

// A worker that cannot be made is a failed outcome naming it.
func TestRunHelloCannotCreate(t *testing.T) {
	dir := buildWorkloads(t, "i686-linux-gnu-gcc")
	// 600 threads with 8 MB stacks do not fit in a 32-bit process.
	resp := run(t, dir, "hello", map[string]string{"workers": "600", "count": "1", "mode": "thread", "stdout": "null"}, 1)
	if resp.Outcome.Status != plugins.StatusFailed || !strings.Contains(resp.Outcome.Reason, "pthread_create worker") ||
		!strings.Contains(resp.Outcome.Reason, "stack limit 8192 KB") {
		t.Errorf("outcome = %+v, want failed naming pthread_create and the stack limit", resp.Outcome)
	}
}

func TestRunLimit(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	resp := run(t, dir, "limit", map[string]string{"max_threads": "50", "stack_kb": "1024"}, 2)
	if resp.Outcome.Status != plugins.StatusOK {
		t.Fatalf("outcome = %+v", resp.Outcome)
	}
	s := bySeries(resp.Samples)
	if got := s["max_threads stack_kb=1024"]; !reflect.DeepEqual(got, []float64{50, 50}) {
		t.Errorf("max_threads at stack_kb=1024 = %v, want the cap, 50, twice (series %v)", got, s)
	}
	if !strings.Contains(resp.Log, "error none") {
		t.Errorf("a run that reached its cap does not say no create failed:\n%s", resp.Log)
	}
}

// A 32-bit process (here on a 64-bit kernel: 4 GB of address space) runs
// out of room for 8 MB stacks; the count stops at the failing create.
func TestRunLimit32(t *testing.T) {
	dir := buildWorkloads(t, "i686-linux-gnu-gcc")
	resp := run(t, dir, "limit", nil, 1)
	if resp.Outcome.Status != plugins.StatusOK {
		t.Fatalf("outcome = %+v", resp.Outcome)
	}
	n := bySeries(resp.Samples)["max_threads stack_kb=8192"]
	if len(n) != 1 || n[0] < 300 || n[0] > 512 {
		t.Errorf("max_threads = %v, want one count in 300..512 (4 GB / 8 MB)", n)
	}
	if !strings.Contains(resp.Log, "error EAGAIN") {
		t.Errorf("log does not say the create failed with EAGAIN:\n%s", resp.Log)
	}
}

// The original program's crash is the outcome, as data: expected-crash
// naming SIGSEGV and how many threads were made, with the sample.
func TestRunLimitFaithful(t *testing.T) {
	dir := buildWorkloads(t, "i686-linux-gnu-gcc")
	resp := run(t, dir, "limit", map[string]string{"faithful": "true", "workers": "700"}, 3)
	if resp.Outcome.Status != plugins.StatusExpectedCrash {
		t.Fatalf("outcome = %+v, want expected-crash\nlog:\n%s", resp.Outcome, resp.Log)
	}
	for _, want := range []string{"SIGSEGV", "segmentation fault", "of 700 threads", "failed with EAGAIN"} {
		if !strings.Contains(resp.Outcome.Reason, want) {
			t.Errorf("reason %q does not say %q", resp.Outcome.Reason, want)
		}
	}
	// Every repeat runs (a flaky point shows), each saying it crashed.
	if n := bySeries(resp.Samples)["max_threads stack_kb=8192"]; len(n) != 3 || slices.Max(n) >= 700 || slices.Min(n) < 300 {
		t.Errorf("max_threads = %v, want the 3 crashed repeats' counts, below 700", n)
	}
	if c := bySeries(resp.Samples)["crashed signal=SIGSEGV stack_kb=8192"]; !reflect.DeepEqual(c, []float64{1, 1, 1}) || !strings.Contains(resp.Outcome.Reason, "3 of 3 repeats crashed") {
		t.Errorf("crashed = %v, reason %q; want 1 in each of 3 repeats, 3 of 3 crashed", c, resp.Outcome.Reason)
	}
	// Below the limit the original program runs to the end.
	resp = run(t, dir, "limit", map[string]string{"faithful": "true", "workers": "100"}, 1)
	if resp.Outcome.Status != plugins.StatusOK || !reflect.DeepEqual(bySeries(resp.Samples)["max_threads stack_kb=8192"], []float64{100}) ||
		!reflect.DeepEqual(bySeries(resp.Samples)["crashed stack_kb=8192"], []float64{0}) {
		t.Errorf("100 workers: outcome %+v, samples %v; want ok with 100 threads, crashed 0", resp.Outcome, bySeries(resp.Samples))
	}
}

func TestRunRequests(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	resp := run(t, dir, "requests", map[string]string{"requests": "40", "delay_ms": "1"}, 1)
	if resp.Outcome.Status != plugins.StatusOK {
		t.Fatalf("outcome = %+v", resp.Outcome)
	}
	s := bySeries(resp.Samples)
	if len(resp.Samples) != len(testBench().desc.Experiments[2].Metrics) {
		t.Errorf("%d samples, want one of every metric", len(resp.Samples))
	}
	one := func(m string) float64 { return s[m][0] }
	// 40 sleeps of 1 ms cannot take less than 40 ms, serially or under the lock.
	if one("serial_ms") < 40 || one("threaded_ms") < 40 || one("serial_overhead_ms") < 0 {
		t.Errorf("serial %v ms, threaded %v ms, overhead %v ms; want >= 40, >= 40, >= 0", one("serial_ms"), one("threaded_ms"), one("serial_overhead_ms"))
	}
	if one("start_ms") <= 0 || one("start_ms") > one("threaded_ms") || one("thread_start_ms")*40 < one("start_ms")*0.99 {
		t.Errorf("start %v ms, per thread %v ms, threaded %v ms", one("start_ms"), one("thread_start_ms"), one("threaded_ms"))
	}
	// A 64 KB stack is a 64 KB writable mapping: virtual size grows by at least that.
	if v := one("vm_size_per_thread_kb"); v < 64 {
		t.Errorf("vm_size_per_thread_kb = %v, want >= 64", v)
	}
	// CPU time from CLOCK_PROCESS_CPUTIME_ID resolves even 40 short
	// sleeps; starting and handing the lock to 40 threads costs more.
	if one("serial_cpu_ms") <= 0 || one("threaded_cpu_ms") <= one("serial_cpu_ms") {
		t.Errorf("serial_cpu_ms %v, threaded_cpu_ms %v; want both > 0, threaded above serial", one("serial_cpu_ms"), one("threaded_cpu_ms"))
	}
}

// As in the source, the main thread holds the lock while it starts the
// threads: no thread takes it, so no request starts, before the last
// pthread_create has returned (the first_lock_ms its log reports is
// never below start_ms), with one thread or many.
func TestRunRequestsLockHeld(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	for _, n := range []string{"1", "200"} {
		resp := run(t, dir, "requests", map[string]string{"requests": n, "delay_ms": "0"}, 3)
		if resp.Outcome.Status != plugins.StatusOK {
			t.Fatalf("requests=%s: outcome = %+v", n, resp.Outcome)
		}
		starts := bySeries(resp.Samples)["start_ms"]
		firsts := logValues(t, resp.Log, "first_lock_ms")
		if len(firsts) != 3 || len(starts) != 3 {
			t.Fatalf("requests=%s: first_lock_ms %v, start_ms %v; want 3 of each\n%s", n, firsts, starts, resp.Log)
		}
		for i := range firsts {
			if firsts[i] < starts[i] {
				t.Errorf("requests=%s repeat %d: a thread took the lock %v ms after the first create, before the start loop ended (%v ms)",
					n, i, firsts[i], starts[i])
			}
		}
	}
}

// logValues are the values of key in a workload log's "key value unit"
// lines, in order.
func logValues(t *testing.T, log, key string) []float64 {
	t.Helper()
	var out []float64
	for _, line := range strings.Split(log, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == key {
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			out = append(out, v)
		}
	}
	return out
}

// A run past its deadline stops mid-workload.
func TestRunDeadline(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := testBench().Run(ctx, &plugins.RunRequest{Experiment: "requests", Params: map[string]string{"delay_ms": "100"}, WorkloadDir: dir}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run error = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %v after a 300ms deadline", d)
	}
}
