package engine

// The sweep's outcome and the comparison of profiles, in-process;
// nothing boots.

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"lab/results"
	"lab/results/compare"
)

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
			status, reason := SweepOutcome(tt.sw, tt.broken, tt.failed, tt.crashed, tt.interrupted)
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
	c := CompareProfiles([]*results.Result{one, two})
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
	// Different clocks, and a run that did not end ok, are noted.
	two.Machine.Clock = "icount:0"
	two.Outcome = results.Outcome{Status: results.StatusInterrupted, Reason: "interrupted"}
	c = CompareProfiles([]*results.Result{one, two})
	if len(c.Notes) != 2 || !strings.Contains(strings.Join(c.Notes, "\n"), "clock icount:0") || !strings.Contains(strings.Join(c.Notes, "\n"), "ended interrupted") {
		t.Errorf("notes %q, want the clocks and the outcome", c.Notes)
	}
}
