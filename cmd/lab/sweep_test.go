package main

// --sweep and --profile A --profile B: parsing, checks against the
// experiment, the sweep's outcome and the comparison of profiles, all
// in-process; nothing boots.

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"lab/plugins"
	"lab/results"
	"lab/results/compare"
)

func TestParseSweeps(t *testing.T) {
	tests := []struct {
		flags   []string
		want    []results.SweepAxis
		wantErr []string
	}{
		{flags: nil, want: nil},
		{flags: []string{"n=50,100"}, want: []results.SweepAxis{{Key: "n", Values: []string{"50", "100"}}}},
		{flags: []string{"n=50", "mode=process, thread"}, want: []results.SweepAxis{{Key: "n", Values: []string{"50"}}, {Key: "mode", Values: []string{"process", "thread"}}}},
		{flags: []string{"n"}, wantErr: []string{`--sweep "n"`, "KEY=V1,V2,..."}},
		{flags: []string{"=5"}, wantErr: []string{"KEY=V1,V2,..."}},
		{flags: []string{"n="}, wantErr: []string{"KEY=V1,V2,..."}},
		{flags: []string{"n=5,,6"}, wantErr: []string{"value 2", "empty"}},
		{flags: []string{"n=5", "n=6"}, wantErr: []string{"--sweep n given twice", "--sweep n=5,6"}},
	}
	for _, tt := range tests {
		got, err := parseSweeps(tt.flags)
		if tt.wantErr != nil {
			if err == nil {
				t.Errorf("parseSweeps(%q) = %v, want an error", tt.flags, got)
				continue
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("parseSweeps(%q): error %q does not say %q", tt.flags, err, w)
				}
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseSweeps(%q) = %v, %v; want %v", tt.flags, got, err, tt.want)
		}
	}
}

// sweepDesc is a plugin with an int, a choice and a bool parameter.
func sweepDesc() *plugins.Description {
	return &plugins.Description{Name: "bench", Version: "1", Experiments: []plugins.Experiment{{
		Name: "hello",
		Params: []plugins.Param{
			{Name: "count", Type: plugins.TypeInt, Default: "5", Min: plugins.Ptr(1), Max: plugins.Ptr(10000), Help: "lines per worker"},
			{Name: "mode", Type: plugins.TypeString, Default: "process", Choices: []string{"process", "thread"}},
			{Name: "sync", Type: plugins.TypeBool, Default: "false"},
		},
		Metrics: []plugins.Metric{{Name: "real_s", Unit: "s"}},
	}}}
}

func TestPlanSweep(t *testing.T) {
	desc := sweepDesc()
	exp := &desc.Experiments[0]
	axes := func(kvs ...string) []results.SweepAxis {
		a, err := parseSweeps(kvs)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	t.Run("points", func(t *testing.T) {
		canon, points, err := planSweep(desc, exp, map[string]string{"sync": "1"}, axes("count=050,500", "mode=thread,process"))
		if err != nil {
			t.Fatal(err)
		}
		if want := []results.SweepAxis{{Key: "count", Values: []string{"50", "500"}}, {Key: "mode", Values: []string{"thread", "process"}}}; !reflect.DeepEqual(canon, want) {
			t.Errorf("axes %v, want %v (canonical values, in the order given)", canon, want)
		}
		want := []sweepPoint{
			{labels: map[string]string{"count": "50", "mode": "thread"}, params: map[string]string{"count": "50", "mode": "thread", "sync": "true"}},
			{labels: map[string]string{"count": "50", "mode": "process"}, params: map[string]string{"count": "50", "mode": "process", "sync": "true"}},
			{labels: map[string]string{"count": "500", "mode": "thread"}, params: map[string]string{"count": "500", "mode": "thread", "sync": "true"}},
			{labels: map[string]string{"count": "500", "mode": "process"}, params: map[string]string{"count": "500", "mode": "process", "sync": "true"}},
		}
		if !reflect.DeepEqual(points, want) {
			t.Errorf("points %+v, want %+v", points, want)
		}
	})
	bad := []struct {
		name   string
		params map[string]string
		axes   []results.SweepAxis
		want   []string
	}{
		{"unknown key", nil, axes("workers=1,2"), []string{"--sweep workers", `no parameter "workers"`, "sweep one of its parameters", "count (int, default 5, 1..10000)", "lab plugins show bench"}},
		{"out of range", nil, axes("count=5,0"), []string{"--sweep count=0", "out of range", "1..10000"}},
		{"not a number", nil, axes("count=many"), []string{"--sweep count=many", "not an integer"}},
		{"not a choice", nil, axes("mode=fiber"), []string{"--sweep mode=fiber", "one of process, thread"}},
		{"given twice after canonical form", nil, axes("count=50,050"), []string{"--sweep count", "50 given twice"}},
		{"also set with -p", map[string]string{"count": "7"}, axes("count=5,6"), []string{"--sweep count and -p count=7", "drop one"}},
		{"too many points", nil, axes("count="+manyValues(1001), "sync=true,false"), []string{"more than 1000 points"}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := planSweep(desc, exp, tt.params, tt.axes)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	none := &plugins.Experiment{Name: "bare", Metrics: exp.Metrics}
	if _, _, err := planSweep(&plugins.Description{Name: "bench", Experiments: []plugins.Experiment{*none}}, none, nil, axes("n=1")); err == nil ||
		!strings.Contains(err.Error(), "nothing to sweep") {
		t.Errorf("sweeping an experiment without parameters: %v", err)
	}
}

// manyValues is "1,2,...,n".
func manyValues(n int) string {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(vs, ",")
}

// The failure modes of --sweep and --profile are refused before anything
// boots, through the real CLI and forkbench's recorded description.
func TestCLIRunSweepRefusedBeforeBoot(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--sweep", "nn=1,2"}, []string{"--sweep nn", `forkbench/forktime has no parameter "nn"`, "n (int, default 2000, 1..1000000)", "lab plugins show forkbench"}},
		{[]string{"--sweep", "n=50,0"}, []string{"--sweep n=0", "out of range", "1..1000000"}},
		{[]string{"--sweep", "n=50,lots"}, []string{"--sweep n=lots", "not an integer"}},
		{[]string{"--sweep", "n"}, []string{"KEY=V1,V2,..."}},
		{[]string{"--sweep", "n=50", "--sweep", "n=100"}, []string{"--sweep n given twice", "--sweep n=50,100"}},
		{[]string{"--sweep", "n=50,100", "-p", "n=10"}, []string{"--sweep n and -p n=10 both set n"}},
		{[]string{"-e", "create", "--sweep", "n=50"}, []string{`forkbench/create has no parameter "n"`, "m (int"}},
		{[]string{"--profile", "celeron-2.4", "--profile", "nosuch"}, []string{"nosuch"}},
		{[]string{"--profile", "celeron-2.4", "--profile", "celeron-2.4"}, []string{"--profile celeron-2.4 given twice"}},
		{[]string{"--profile", "celeron-2.4", "--profile", "xeon5130-2core", "--clock", "icount"}, []string{"xeon5130-2core", "one online CPU"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			root := cliEnv(t)
			// A throwaway VM unless the case names its own profiles:
			// the refusal must come before its boot.
			args := append([]string{"run", "forkbench", "--out", t.TempDir()}, tt.args...)
			if !slices.Contains(tt.args, "--profile") {
				args = append(args, "--profile", "celeron-2.4")
			}
			r := cliRun(t, args...)
			wantOutput(t, r, strings.Join(args, " "), 1, "stderr", tt.want...)
			if strings.Contains(r.stderr, "booting") {
				t.Errorf("lab run booted before refusing:\n%s", r.stderr)
			}
			noVMDirs(t, root)
		})
	}
}

func TestSweepOutcome(t *testing.T) {
	pts := func(statuses ...string) *results.Sweep {
		sw := &results.Sweep{Axes: []results.SweepAxis{{Key: "n", Values: []string{"1", "2", "3"}}}}
		for i, s := range statuses {
			sw.Points = append(sw.Points, results.SweepPoint{Labels: map[string]string{"n": strconv.Itoa(i + 1)}, Status: s, Reason: "why " + strconv.Itoa(i+1)})
		}
		return sw
	}
	tests := []struct {
		name        string
		sw          *results.Sweep
		broken      int
		failed      []string
		crashed     []string
		interrupted bool
		status      string
		reason      []string
	}{
		{"all ok", pts("ok", "ok", "ok"), -1, nil, nil, false, "ok", nil},
		{"interrupted", pts("ok", results.StatusInterrupted, results.PointNotRun), 1, nil, nil, true, results.StatusInterrupted,
			[]string{"interrupted (Ctrl-C) after 1 of 3 sweep points", "finished points are kept"}},
		{"broken", pts("ok", "failed", results.PointNotRun), 1, nil, nil, false, "failed",
			[]string{"sweep point 2 of 3 (n=2): why 2", "the 1 point(s) after it were not run"}},
		{"a point failed, the others ran", pts("ok", "failed", "ok"), -1, []string{"n=2: boom"}, nil, false, "failed", []string{"1 of 3 sweep points failed: n=2: boom"}},
		{"expected crash", pts("ok", "ok", "expected-crash"), -1, nil, []string{"n=3: SIGSEGV"}, false, "expected-crash", []string{"1 of 3 sweep points ended in the expected crash: n=3: SIGSEGV"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, reason := sweepOutcome(tt.sw, tt.broken, tt.failed, tt.crashed, tt.interrupted)
			if status != tt.status {
				t.Errorf("status %q, want %q (reason %q)", status, tt.status, reason)
			}
			for _, w := range tt.reason {
				if !strings.Contains(reason, w) {
					t.Errorf("reason %q does not say %q", reason, w)
				}
			}
		})
	}
	line := sweepLine(&results.Sweep{Axes: []results.SweepAxis{{Key: "n", Values: []string{"50", "100"}}},
		Points: []results.SweepPoint{{Labels: map[string]string{"n": "50"}, Status: "ok", Repeats: 2}, {Labels: map[string]string{"n": "100"}, Status: results.StatusInterrupted, Repeats: 1}}})
	if want := "sweep n=50,100: 1 of 2 points done: n=100 interrupted (1 repeat(s) kept)"; line != want {
		t.Errorf("sweepLine = %q, want %q", line, want)
	}
}

// sweptResult is a finished two-point sweep of forkbench/forktime.
func sweptResult(profile string, scale float64) *results.Result {
	r := &results.Result{
		ID: "20261201T120000.000000Z-forkbench-forktime-" + profile, Plugin: "forkbench", Experiment: "forktime",
		Machine:    results.Machine{Name: profile + "-run-1", Profile: profile, Accelerator: "tcg", Clock: "host", KernelID: "debian-6.1-686"},
		Parameters: map[string]string{"n": "50,100", "repeat": "4"},
		Outcome:    results.Outcome{Status: "ok"},
		Sweep: &results.Sweep{Axes: []results.SweepAxis{{Key: "n", Values: []string{"50", "100"}}}, Points: []results.SweepPoint{
			{Labels: map[string]string{"n": "50"}, Status: "ok", Repeats: 4}, {Labels: map[string]string{"n": "100"}, Status: "ok", Repeats: 4}}},
	}
	for _, n := range []string{"50", "100"} {
		for k := range 4 {
			l := map[string]string{"n": n}
			r.Samples = append(r.Samples,
				results.Sample{Metric: "fork_wait_us", Unit: "µs", Value: (400 + float64(k)) * scale, Repeat: k, Labels: l},
				results.Sample{Metric: "thread_create_join_us", Unit: "µs", Value: (100 + float64(k)) * scale, Repeat: k, Labels: l},
				results.Sample{Metric: "ratio", Unit: "x", Value: 4, Repeat: k, Labels: l})
		}
	}
	compare.Analyze(r, nil)
	return r
}

func TestCompareProfiles(t *testing.T) {
	one, two := sweptResult("xeon5130-1core", 1), sweptResult("xeon5130-2core", 0.5)
	c := compareProfiles([]*results.Result{one, two})
	if c.Baseline != "xeon5130-1core" || !reflect.DeepEqual(c.Profiles, []string{"xeon5130-1core", "xeon5130-2core"}) || len(c.Rows) != 6 {
		t.Fatalf("comparison %+v", c)
	}
	for _, r := range c.Rows {
		switch r.Metric {
		case "fork_wait_us", "thread_create_join_us":
			if got := r.Speedup["xeon5130-2core"]; got != 2 {
				t.Errorf("%s %v: speed-up %v, want 2 (half the time)", r.Metric, r.Labels, got)
			}
			if p, ok := r.P["xeon5130-2core"]; !ok || p >= 0.05 {
				t.Errorf("%s %v: p %v (%v), want < 0.05 for 4 samples a side, all apart", r.Metric, r.Labels, p, ok)
			}
		case "ratio":
			if got := r.Ratio["xeon5130-2core"]; got != 1 || r.Speedup != nil {
				t.Errorf("ratio: ratio %v speed-up %v; want a plain ratio of 1, no speed-up", got, r.Speedup)
			}
		}
	}
	if len(c.Notes) != 0 {
		t.Errorf("notes %v, want none", c.Notes)
	}
	var b bytes.Buffer
	if err := writeComparison(&b, c); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"comparison of xeon5130-1core, xeon5130-2core", "speed-up xeon5130-2core", "fork_wait_us", "n=50", "2x", "r 1"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("the comparison table does not show %q:\n%s", w, b.String())
		}
	}
	// Different clocks, and a run that did not end ok, are noted.
	two.Machine.Clock = "icount:0"
	two.Outcome = results.Outcome{Status: results.StatusInterrupted, Reason: "interrupted"}
	c = compareProfiles([]*results.Result{one, two})
	if len(c.Notes) != 2 || !strings.Contains(strings.Join(c.Notes, "\n"), "clock icount:0") || !strings.Contains(strings.Join(c.Notes, "\n"), "ended interrupted") {
		t.Errorf("notes %q, want the clocks and the outcome", c.Notes)
	}
}

// An interrupted sweep is saved whole with its points, exits 130, and its
// plot is written beside it.
func TestFinishInterruptedSweep(t *testing.T) {
	dir := t.TempDir()
	res := sweptResult("celeron-2.4", 1)
	res.Sweep.Points[1] = results.SweepPoint{Labels: map[string]string{"n": "100"}, Status: results.StatusInterrupted, Repeats: 0}
	res.Samples = res.Samples[:12] // the n=50 point
	res.Outcome = results.Outcome{Status: results.StatusInterrupted, Reason: "interrupted (Ctrl-C) after 1 of 2 sweep points; the finished points are kept"}
	desc := &plugins.Description{Name: "forkbench", Experiments: []plugins.Experiment{{Name: "forktime",
		Params:  []plugins.Param{{Name: "n", Type: plugins.TypeInt, Default: "2000", Help: "iterations of each loop"}},
		Metrics: []plugins.Metric{{Name: "fork_wait_us", Unit: "µs"}, {Name: "thread_create_join_us", Unit: "µs"}, {Name: "ratio", Unit: "x"}}}}}
	claims := []results.Claim{results.Claim{ID: "E2.1", Plugin: "forkbench", Bench: "forktime",
		Ratio: &results.RatioRule{Numerator: "fork_wait_us", Denominator: "thread_create_join_us", Min: 4.5}}.WithKind()}
	plan := &runPlan{desc: desc, exp: &desc.Experiments[0], claims: claims}
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	path, err := e.finishRun(res, nil, claims, dir, runFlags{}, func(path string) {
		e.writePlot(plan, []*results.Result{res}, strings.TrimSuffix(path, ".json")+".svg")
	})
	code, msg := finishCode(t, err)
	if code != exitInterrupted || !strings.Contains(msg, "1 of 2 sweep points") {
		t.Errorf("exit %d %q, want %d saying how many points were kept", code, msg, exitInterrupted)
	}
	saved, err := results.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Outcome.Status != results.StatusInterrupted || saved.Sweep == nil || saved.Sweep.Done() != 1 || len(saved.Samples) != 12 {
		t.Errorf("saved outcome %+v, sweep %+v, %d samples; want interrupted with the n=50 point", saved.Outcome, saved.Sweep, len(saved.Samples))
	}
	if !strings.Contains(out.String(), "sweep n=50,100: 1 of 2 points done: n=100 interrupted") {
		t.Errorf("the summary does not say how far the sweep got:\n%s", out.String())
	}
	svg := strings.TrimSuffix(path, ".json") + ".svg"
	if !strings.Contains(errb.String(), "plot: "+svg) {
		t.Errorf("stderr does not print the plot path %s:\n%s", svg, errb.String())
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"<svg", "fork_wait_us", "thread_create_join_us", "n (iterations of each loop)", "1 of 2 points done", "profile celeron-2.4"} {
		if !bytes.Contains(data, []byte(w)) {
			t.Errorf("the plot has no %q", w)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".plot-*")); len(left) > 0 {
		t.Errorf("temporary plot files left: %v", left)
	}
}
