package engine

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"lab/images"
	"lab/plugins"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/matrix"
	"lab/vm"
)

// costPlugin is a description with three experiments: flat (only
// repeat_seconds), lines (a cost model: 1 s + 10 ms a line, a line on
// fbcon 40 ms, and under the host clock 2 s + 20 ms a line) and
// workers (0.5 s + 1 ms per worker x count, mode both counting twice).
func costPlugin() *plugins.Description {
	metrics := []plugins.Metric{{Name: "t", Unit: "s"}}
	return &plugins.Description{Name: "p", Version: "1", Experiments: []plugins.Experiment{
		{Name: "flat", Metrics: metrics, RepeatSeconds: 4, Params: []plugins.Param{{Name: "n", Type: plugins.TypeInt, Default: "10"}}},
		{Name: "lines", Metrics: metrics, RepeatSeconds: 99,
			Params: []plugins.Param{{Name: "lines", Type: plugins.TypeInt, Default: "1000"}},
			Cost: &plugins.Cost{Seconds: 1, Terms: []plugins.CostTerm{{Per: []string{"lines"}, Seconds: 0.01}},
				Cases: []plugins.CostCase{
					{Clock: "icount", Profiles: []string{"fb"}, Seconds: 1, Terms: []plugins.CostTerm{{Per: []string{"lines"}, Seconds: 0.04}}},
					{Clock: "host", Seconds: 2, Terms: []plugins.CostTerm{{Per: []string{"lines"}, Seconds: 0.02}}},
				}}},
		{Name: "workers", Metrics: metrics,
			Params: []plugins.Param{
				{Name: "workers", Type: plugins.TypeInt, Default: "100"},
				{Name: "count", Type: plugins.TypeInt, Default: "10"},
				{Name: "mode", Type: plugins.TypeString, Default: "both", Choices: []string{"both", "process", "thread"}},
			},
			Cost: &plugins.Cost{Seconds: 0.5, Terms: []plugins.CostTerm{{Per: []string{"mode", "workers", "count"}, Seconds: 0.001}},
				Weights: []plugins.CostWeight{{Param: "mode", Values: map[string]float64{"both": 2, "process": 1, "thread": 1}}}}},
	}}
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func near(a, b time.Duration) bool { return (a - b).Abs() < time.Millisecond }

func TestEstimatesFromParameters(t *testing.T) {
	d := costPlugin()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	est := EstimatesOf(d)
	tests := []struct {
		name   string
		run    rclaims.Run
		repeat int
		want   time.Duration
	}{
		{"flat: repeat_seconds x repeats", rclaims.Run{Plugin: "p", Experiment: "flat", Repeat: 3}, 0, cellOverhead + 3*secs(4)},
		{"flat: x points", rclaims.Run{Plugin: "p", Experiment: "flat", SweepKey: "n", Points: []string{"1", "2"}}, 5, cellOverhead + 10*secs(4)},
		{"unknown experiment", rclaims.Run{Plugin: "x", Experiment: "y"}, 1, cellOverhead + unknownRepeat},
		{"the default lines", rclaims.Run{Plugin: "p", Experiment: "lines", Clock: "icount:0"}, 1, cellOverhead + secs(1+10)},
		{"lines given", rclaims.Run{Plugin: "p", Experiment: "lines", Clock: "icount:0", Params: map[string]string{"lines": "100000"}}, 2,
			cellOverhead + 2*secs(1+1000)},
		// A sweep over lines costs the sum over its points.
		{"a sweep of lines", rclaims.Run{Plugin: "p", Experiment: "lines", Clock: "icount:0", SweepKey: "lines",
			Points: []string{"1", "10", "100", "1000", "10000", "100000"}}, 1, cellOverhead + secs(6*1+0.01*111111)},
		{"fbcon's case", rclaims.Run{Plugin: "p", Experiment: "lines", Clock: "icount:0", Profile: "fb", Params: map[string]string{"lines": "100"}}, 1,
			cellOverhead + secs(1+4)},
		{"the host clock's case", rclaims.Run{Plugin: "p", Experiment: "lines", Clock: "host", Profile: "fb", Params: map[string]string{"lines": "100"}}, 1,
			cellOverhead + secs(2+2)},
		{"a value the model cannot count: repeat_seconds", rclaims.Run{Plugin: "p", Experiment: "lines", Params: map[string]string{"lines": "many"}}, 1,
			cellOverhead + secs(99)},
		// lab run's points, labels in FormatLabels form (two axes).
		{"labels", rclaims.Run{Plugin: "p", Experiment: "workers", Params: map[string]string{"workers": "10"},
			Points: []string{"count=5 mode=process", "count=5 mode=both", "count=500 mode=thread"}}, 1,
			cellOverhead + secs(3*0.5+0.001*(50+100+5000))},
		{"a product of parameters, weighed", rclaims.Run{Plugin: "p", Experiment: "workers", Params: map[string]string{"workers": "255", "count": "5000"}}, 4,
			cellOverhead + 4*secs(0.5+0.001*2*255*5000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := est.Run(tt.run, tt.repeat); !near(got, tt.want) {
				t.Errorf("Run = %v, want %v", got, tt.want)
			}
		})
	}
	c := matrix.Cell{Plugin: "p", Experiment: "workers", Params: map[string]string{"workers": "10"},
		Sweep: map[string][]string{"count": {"5", "500"}, "mode": {"process", "thread"}}}
	if got, want := est.Cell(c), cellOverhead+secs(4*0.5+0.001*10*(5+5+500+500)); !near(got, want) {
		t.Errorf("Cell(2 x 2 points, repeats chosen) = %v, want %v (one repeat a point)", got, want)
	}
	c = matrix.Cell{Plugin: "p", Experiment: "lines", Profile: "fb", Clock: "icount:0", Params: map[string]string{"lines": "1000"}, Repeat: 5}
	if got, want := est.Cell(c), cellOverhead+5*secs(1+40); !near(got, want) {
		t.Errorf("Cell(fbcon, 5 repeats) = %v, want %v", got, want)
	}
	for d, want := range map[time.Duration]string{30 * time.Second: "about 30 s", 90 * time.Second: "about 2 min", 59*time.Minute + 40*time.Second: "about 60 min"} {
		if got := FormatEstimate(d); got != want {
			t.Errorf("FormatEstimate(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestEstimatesOfRealPlugins: every plugin's experiments estimate from
// their descriptions, and a larger size never costs less.
func TestEstimatesOfRealPlugins(t *testing.T) {
	plan := forkbenchPlan(t, "create", nil)
	est := EstimatesOf(plan.Desc)
	small := est.Run(rclaims.Run{Plugin: "forkbench", Experiment: "create", Clock: "icount:0", Params: map[string]string{"m": "1000"}}, 1)
	big := est.Run(rclaims.Run{Plugin: "forkbench", Experiment: "create", Clock: "icount:0", Params: map[string]string{"m": "100000"}}, 1)
	if small <= cellOverhead || big <= small {
		t.Errorf("forkbench/create: m=1000 %v, m=100000 %v; want both above the overhead, the larger size longer", small, big)
	}
	// The headline's run: its parameters, profile and clock.
	plan.Profiles = []images.Profile{{Name: "celeron-2.4"}}
	plan.Clocks = []vm.Clock{{Mode: images.ClockICount}}
	r := plan.estimateRun()
	if r.Params["m"] != plan.Resolved["m"] || r.Profile != "celeron-2.4" || r.Clock != "icount:0" {
		t.Errorf("estimateRun = %+v; want the plan's parameters, profile and clock", r)
	}
}

// fitExperiment is lines with a fixed part and two terms to fit.
func fitExperiment() *plugins.Experiment {
	return &plugins.Experiment{Name: "e", Params: []plugins.Param{
		{Name: "lines", Type: plugins.TypeInt, Default: "1"},
		{Name: "workers", Type: plugins.TypeInt, Default: "1"},
		{Name: "mode", Type: plugins.TypeString, Default: "both", Choices: []string{"both", "process", "thread"}},
	}, Cost: &plugins.Cost{Weights: []plugins.CostWeight{{Param: "mode", Values: map[string]float64{"both": 2, "process": 1, "thread": 1}}}}}
}

func obs(lines, workers int, mode string, repeats int, perRepeat float64) CostObservation {
	return CostObservation{Result: "r", Params: map[string]string{"lines": strconv.Itoa(lines), "workers": strconv.Itoa(workers), "mode": mode},
		Repeats: repeats, Seconds: perRepeat * float64(repeats)}
}

func TestFitCost(t *testing.T) {
	e := fitExperiment()
	// Exact data from 2 s + 3 ms a line + 0.1 ms per mode x workers x lines.
	truth := func(lines, workers int, w float64) float64 {
		return 2 + 0.003*float64(lines) + 0.0001*w*float64(workers)*float64(lines)
	}
	var os []CostObservation
	for _, l := range []int{10, 100, 1000} {
		for _, w := range []int{1, 50} {
			os = append(os, obs(l, w, "both", 2, truth(l, w, 2)), obs(l, w, "thread", 3, truth(l, w, 1)))
		}
	}
	per := [][]string{{"lines"}, {"mode", "workers", "lines"}}
	fit, err := FitCost(e, os, per)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(fit.Seconds-2) > 1e-6 || math.Abs(fit.Terms[0].Seconds-0.003) > 1e-9 || math.Abs(fit.Terms[1].Seconds-0.0001) > 1e-10 {
		t.Errorf("FitCost = %+v; want 2 s, 0.003 a line, 0.0001 per mode x workers x lines", fit)
	}
	if fit.N != len(os) || fit.Worst > 1+1e-6 {
		t.Errorf("fit of exact data: N %d, worst ratio %v; want %d, 1", fit.N, fit.Worst, len(os))
	}
	// Noise of 5% either way: the coefficients within it, the worst
	// ratio about it.
	for i := range os {
		f := 1.05
		if i%2 == 1 {
			f = 0.95
		}
		os[i].Seconds *= f
	}
	fit, err = FitCost(e, os, per)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(fit.Terms[0].Seconds/0.003-1) > 0.1 || fit.Worst > 1.12 {
		t.Errorf("fit of noisy data: %+v; want 0.003 a line within 10%%, the worst ratio under 1.12", fit)
	}
	// A fixed part the data puts below 0 is dropped: the term alone.
	os = []CostObservation{obs(100, 1, "both", 1, 0.9), obs(1000, 1, "both", 1, 10.1), obs(5000, 1, "both", 1, 50.5)}
	fit, err = FitCost(e, os, [][]string{{"lines"}})
	if err != nil {
		t.Fatal(err)
	}
	if fit.Seconds != 0 || math.Abs(fit.Terms[0].Seconds-0.01) > 0.0005 {
		t.Errorf("fit with a negative intercept: %+v; want 0 s fixed and about 0.01 a line", fit)
	}
	// One size cannot tell a fixed part from a per-line one.
	_, err = FitCost(e, []CostObservation{obs(100, 1, "both", 1, 2), obs(100, 1, "both", 2, 2.1)}, [][]string{{"lines"}})
	if err == nil || !strings.Contains(err.Error(), "do not tell the coefficients apart") {
		t.Errorf("FitCost at one size: %v; want an error asking for more sizes", err)
	}
	_, err = FitCost(e, os, [][]string{{"linez"}})
	if err == nil || !strings.Contains(err.Error(), `"linez"`) {
		t.Errorf("FitCost of an unknown parameter: %v", err)
	}
}

func TestCostObservations(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	machine := results.MachineRecord{Profile: map[string]any{"name": "fb"}, Clock: "icount:0"}
	swept := &results.Result{ID: "s", Plugin: "p", Experiment: "lines", Machine: machine, Started: t0, Finished: t0.Add(time.Minute),
		Parameters: map[string]string{"lines": "10,100", "repeat": "2", "target": "all"},
		Sweep: &results.Sweep{Axes: []results.SweepAxis{{Key: "lines", Values: []string{"10", "100"}}}, Points: []results.SweepPoint{
			{Labels: map[string]string{"lines": "10"}, Status: results.StatusOK, Repeats: 2, Seconds: 3},
			{Labels: map[string]string{"lines": "100"}, Status: results.StatusFailed, Repeats: 1, Seconds: 9},
		}},
		Harness: &results.Harness{StartSeconds: 8, OpenSeconds: 1}}
	flat := &results.Result{ID: "f", Plugin: "p", Experiment: "lines", Machine: machine, Started: t0, Finished: t0.Add(21 * time.Second),
		Parameters: map[string]string{"lines": "1000", "repeat": "4"}, Outcome: results.Outcome{Status: results.StatusOK},
		Harness: &results.Harness{StartSeconds: 1.5, OpenSeconds: 1}}
	failed := &results.Result{ID: "x", Plugin: "p", Experiment: "lines", Machine: machine, Started: t0, Finished: t0.Add(time.Second),
		Parameters: map[string]string{"lines": "1000", "repeat": "4"}, Outcome: results.Outcome{Status: results.StatusFailed}}
	got := CostObservations([]*results.Result{swept, flat, failed})
	if len(got) != 2 {
		t.Fatalf("CostObservations = %+v; want the ok point and the flat run", got)
	}
	if o := got[0]; o.Params["lines"] != "10" || o.Params["target"] != "all" || o.Params["repeat"] != "" || o.Repeats != 2 || o.PerRepeat() != 1.5 ||
		o.Profile != "fb" || o.Clock != "icount:0" {
		t.Errorf("the sweep's point: %+v", o)
	}
	if o := got[1]; o.Repeats != 4 || o.Seconds != 20 || o.PerRepeat() != 5 {
		t.Errorf("the flat run: %+v; want 4 repeats in 20 s (21 s less the open second)", o)
	}
	if s := RunSeconds(flat); s != 21.5 {
		t.Errorf("RunSeconds = %v, want 21.5 (the run and the VM's start before it)", s)
	}
}

// TestCheckEstimates: a planned run beside the stored run of exactly it
// (not one at another size, with another sweep, failed, older, or whose
// VM booted cold: a cell restores a snapshot).
func TestCheckEstimates(t *testing.T) {
	est := EstimatesOf(costPlugin())
	t0 := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	machine := results.MachineRecord{Profile: map[string]any{"name": "fb"}, Clock: "icount:0"}
	stored := func(id string, at, took time.Duration, status string, params map[string]string, sweep *results.Sweep) *results.Result {
		return &results.Result{ID: id, Plugin: "p", Experiment: "lines", Machine: machine, Started: t0.Add(at), Finished: t0.Add(at + took),
			Parameters: params, Outcome: results.Outcome{Status: status}, Sweep: sweep,
			Harness: &results.Harness{StartSeconds: 2, OpenSeconds: 1}}
	}
	sweep := &results.Sweep{Axes: []results.SweepAxis{{Key: "lines", Values: []string{"10", "100"}}}}
	store := []*results.Result{
		stored("old", 0, 50*time.Second, results.StatusOK, map[string]string{"lines": "1000", "repeat": "2"}, nil),
		stored("new", time.Hour, 80*time.Second, results.StatusOK, map[string]string{"lines": "1000", "repeat": "2"}, nil),
		stored("failed", 2*time.Hour, 9*time.Second, results.StatusFailed, map[string]string{"lines": "1000", "repeat": "2"}, nil),
		stored("other size", 3*time.Hour, 9*time.Second, results.StatusOK, map[string]string{"lines": "10", "repeat": "2"}, nil),
		stored("swept", 0, 30*time.Second, results.StatusOK, map[string]string{"lines": "10,100", "repeat": "3"}, sweep),
		stored("cold", 4*time.Hour, 200*time.Second, results.StatusOK, map[string]string{"lines": "1000", "repeat": "2"}, nil),
	}
	store[len(store)-1].Machine.Boot = "cold, snapshot saved"
	runs := []rclaims.Run{
		{Plugin: "p", Experiment: "lines", Profile: "fb", Clock: "icount:0", Params: map[string]string{"lines": "1000"}, Repeat: 5},
		{Plugin: "p", Experiment: "lines", Profile: "fb", Clock: "icount:0", SweepKey: "lines", Points: []string{"100", "10"}, Repeat: 1},
		{Plugin: "p", Experiment: "lines", Profile: "fb", Clock: "icount:0", SweepKey: "lines", Points: []string{"10"}, Repeat: 1},
		{Plugin: "p", Experiment: "lines", Profile: "vga", Clock: "icount:0", Params: map[string]string{"lines": "1000"}, Repeat: 5},
	}
	got := CheckEstimates(est, runs, store)
	if c := got[0]; c.Result != "new" || c.Repeats != 2 || !near(c.Estimate, cellOverhead+2*secs(1+40)) || c.Measured != 81*time.Second {
		t.Errorf("the run at 1000 lines: %+v; want the newer ok run, 2 repeats, measured 80 s + 1 s of VM start", c)
	}
	if r := got[0].Ratio(); math.Abs(r-(cellOverhead.Seconds()+82)/81) > 1e-3 {
		t.Errorf("Ratio = %v", r)
	}
	if c := got[1]; c.Result != "swept" || c.Repeats != 3 || !near(c.Estimate, cellOverhead+3*secs(2*1+0.04*110)) {
		t.Errorf("the sweep: %+v; want the swept run, its 3 repeats, both points", c)
	}
	if got[2].Result != "" || got[3].Result != "" || got[3].Ratio() != 0 {
		t.Errorf("a sweep with other points, another profile: %+v, %+v; want no run", got[2], got[3])
	}
}
