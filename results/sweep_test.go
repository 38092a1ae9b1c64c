package results_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"lab/plugins/contract"
	rclaims "lab/results/claims"
	"lab/results/render"

	"lab/results"
)

func TestSweepPoints(t *testing.T) {
	tests := []struct {
		name string
		axes []results.SweepAxis
		want []map[string]string
	}{
		{"none", nil, nil},
		{"one key", []results.SweepAxis{{"n", []string{"50", "100"}}}, []map[string]string{{"n": "50"}, {"n": "100"}}},
		{"cross product, first key slowest", []results.SweepAxis{{"count", []string{"5", "500"}}, {"mode", []string{"process", "thread"}}},
			[]map[string]string{
				{"count": "5", "mode": "process"}, {"count": "5", "mode": "thread"},
				{"count": "500", "mode": "process"}, {"count": "500", "mode": "thread"},
			}},
		{"three keys", []results.SweepAxis{{"a", []string{"1", "2"}}, {"b", []string{"x"}}, {"c", []string{"p", "q", "r"}}},
			[]map[string]string{
				{"a": "1", "b": "x", "c": "p"}, {"a": "1", "b": "x", "c": "q"}, {"a": "1", "b": "x", "c": "r"},
				{"a": "2", "b": "x", "c": "p"}, {"a": "2", "b": "x", "c": "q"}, {"a": "2", "b": "x", "c": "r"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := results.SweepPoints(tt.axes); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SweepPoints(%v) = %v, want %v", tt.axes, got, tt.want)
			}
		})
	}
}

func TestLabelPoint(t *testing.T) {
	in := []results.Sample{
		{Metric: "a", Value: 1},
		{Metric: "b", Value: 2, Labels: map[string]string{"mode": "thread", "n": "plugin's"}},
	}
	got := results.LabelPoint(in, map[string]string{"n": "50"})
	want := []results.Sample{
		{Metric: "a", Value: 1, Labels: map[string]string{"n": "50"}},
		{Metric: "b", Value: 2, Labels: map[string]string{"mode": "thread", "n": "50"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LabelPoint = %+v, want %+v", got, want)
	}
	if in[0].Labels != nil || in[1].Labels["n"] != "plugin's" {
		t.Errorf("LabelPoint changed its input: %+v", in)
	}
}

func TestSweepRecord(t *testing.T) {
	s := &results.Sweep{
		Axes: []results.SweepAxis{{"n", []string{"50", "100"}}, {"mode", []string{"a", "b"}}},
		Points: []results.SweepPoint{
			{Status: "ok"}, {Status: "expected-crash"}, {Status: "failed"}, {Status: results.StatusInterrupted}, {Status: results.PointNotRun},
		},
	}
	if got, want := s.String(), "n=50,100 mode=a,b"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := s.Keys(); !reflect.DeepEqual(got, []string{"n", "mode"}) {
		t.Errorf("Keys() = %v", got)
	}
	if got := s.Done(); got != 2 {
		t.Errorf("Done() = %d, want 2 (ok and expected-crash)", got)
	}
	// It round-trips in the result document, and a result without one
	// has no "sweep" field.
	r := &results.Result{ID: "x", Sweep: s}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back results.Result
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Sweep, s) {
		t.Errorf("sweep after a round trip: %+v, want %+v", back.Sweep, s)
	}
	data, _ = json.Marshal(&results.Result{ID: "y"})
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	if _, ok := m["sweep"]; ok {
		t.Errorf("a run without a sweep writes a sweep field: %s", data)
	}
}

func TestPlotX(t *testing.T) {
	tests := []struct {
		sweep *results.Sweep
		want  string
	}{
		{nil, ""},
		{&results.Sweep{Axes: []results.SweepAxis{{"mode", []string{"process", "thread"}}, {"count", []string{"5", "500"}}}}, "count"},
		{&results.Sweep{Axes: []results.SweepAxis{{"n", []string{"50"}}, {"m", []string{"1", "2"}}}}, "n"},
		{&results.Sweep{Axes: []results.SweepAxis{{"stdout", []string{"pty", "null"}}}}, "stdout"},
	}
	for _, tt := range tests {
		if got := render.PlotX(tt.sweep); got != tt.want {
			t.Errorf("PlotX(%v) = %q, want %q", tt.sweep, got, tt.want)
		}
	}
}

func TestPlotMetrics(t *testing.T) {
	cross := results.Claim{Claim: contract.Claim{ID: "E1.1", Crossover: &contract.CrossoverClaim{First: "process_s", Second: "thread_s", Sweep: "count", BandStart: 500, BandEnd: 700}}}.WithKind()
	ratio := results.Claim{Claim: contract.Claim{ID: "E2.1", Ratio: &contract.RatioClaim{Numerator: "fork_wait_us", Denominator: "thread_create_join_us", Min: 4.5}}}.WithKind()
	other := results.Claim{Claim: contract.Claim{ID: "X", Ratio: &contract.RatioClaim{Numerator: "a", Denominator: "b", Min: 1}}}.WithKind()
	tests := []struct {
		name   string
		main   string
		x      string
		claims []results.Claim
		want   []string
	}{
		{"main alone", "syscall_ns", "n", nil, []string{"syscall_ns"}},
		{"main and its ratio partner", "fork_wait_us", "n", []results.Claim{other, ratio}, []string{"fork_wait_us", "thread_create_join_us"}},
		{"a crossover over x wins", "real_s", "count", []results.Claim{ratio, cross}, []string{"process_s", "thread_s"}},
		{"a crossover over another key does not", "real_s", "workers", []results.Claim{cross}, []string{"real_s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render.PlotMetrics(tt.main, tt.x, tt.claims); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PlotMetrics(%s, %s) = %v, want %v", tt.main, tt.x, got, tt.want)
			}
		})
	}
}

// ratioSweep is a swept run over n of two metrics whose ratio at point v
// is ratios[v], with 4 repeats each.
func ratioSweep(id, profile string, ratios map[string]float64, order []string) *results.Result {
	return ratioSweepN(id, profile, ratios, order, 4)
}

// ratioSweepN is ratioSweep with n repeats a point.
func ratioSweepN(id, profile string, ratios map[string]float64, order []string, n int) *results.Result {
	r := &results.Result{ID: id, Plugin: "forkbench", Experiment: "forktime",
		Machine:    results.MachineRecord{Profile: profile, Accelerator: "tcg", Clock: "host"},
		Parameters: map[string]string{"n": strings.Join(order, ","), "repeat": fmt.Sprint(n)},
		Outcome:    results.Outcome{Status: "ok"},
		Sweep:      &results.Sweep{Axes: []results.SweepAxis{{Key: "n", Values: order}}}}
	for _, v := range order {
		point := map[string]string{"n": v}
		r.Sweep.Points = append(r.Sweep.Points, results.SweepPoint{Labels: point, Status: "ok", Repeats: n})
		for k := range n {
			d := 100 + float64(k)
			r.Samples = append(r.Samples,
				results.Sample{Metric: "fork_wait_us", Unit: "µs", Value: d * ratios[v], Repeat: k, Labels: point},
				results.Sample{Metric: "thread_create_join_us", Unit: "µs", Value: d, Repeat: k, Labels: point})
		}
	}
	return r
}

func TestAtPoint(t *testing.T) {
	r := ratioSweep("run", "celeron-2.4", map[string]float64{"50": 2, "100": 8}, []string{"50", "100"})
	r.Samples = append(r.Samples, results.Sample{Metric: "fork_wait_us", Unit: "µs", Value: 1, Labels: map[string]string{"n": "100", "mode": "x"}})
	r.Sweep.Points[1].Status, r.Sweep.Points[1].Reason = results.StatusInterrupted, "interrupted after 3 of 4 repeats"
	r.Sweep.Points[1].StderrTail = "last words"
	sub := r.AtPoint(map[string]string{"n": "50"})
	if sub == nil || len(sub.Samples) != 8 || sub.Parameters["n"] != "50" || sub.Sweep != nil || sub.Outcome.Status != "ok" {
		t.Fatalf("AtPoint(n=50): %+v", sub)
	}
	for _, s := range sub.Samples {
		if s.Labels != nil {
			t.Errorf("sample at n=50 keeps labels %v; the swept one should be gone", s.Labels)
		}
	}
	sub = r.AtPoint(map[string]string{"n": "100"})
	if len(sub.Samples) != 9 || sub.Samples[8].Labels["mode"] != "x" || sub.Samples[8].Labels["n"] != "" {
		t.Errorf("AtPoint(n=100) samples %+v; want the other labels kept, n gone", sub.Samples)
	}
	if sub.Outcome.Status != "failed" || !strings.Contains(sub.Outcome.Reason, "interrupted") || sub.Outcome.StderrTail != "last words" {
		t.Errorf("an interrupted point's outcome %+v; want it seen as not finished", sub.Outcome)
	}
	if r.Parameters["n"] != "50,100" || r.Samples[0].Labels["n"] != "50" {
		t.Errorf("AtPoint changed the run: %v %v", r.Parameters, r.Samples[0].Labels)
	}
	if r.AtPoint(map[string]string{"n": "7"}) != nil || (&results.Result{}).AtPoint(map[string]string{"n": "50"}) != nil {
		t.Error("AtPoint of a point not in the sweep, or of a run that is no sweep, is not nil")
	}
}

// A swept run's own verdicts: one per claim of its experiment, decided
// on the whole run (each point its own test where the claim is over the
// swept key).
func TestJudgeSweptRun(t *testing.T) {
	overN := &contract.Scope{Sweep: &contract.ScopeSweep{Key: "n"}}
	ratio := results.Claim{Claim: contract.Claim{ID: "E2.1", Scope: overN, Ratio: &contract.RatioClaim{Numerator: "fork_wait_us", Denominator: "thread_create_join_us", Min: 4.5}}, Plugin: "forkbench", Bench: "forktime"}.WithKind()
	onlyAt := results.Claim{Claim: contract.Claim{ID: "P",
		Scope: &contract.Scope{Params: map[string]string{"n": "2000"}},
		Ratio: &contract.RatioClaim{Numerator: "fork_wait_us", Denominator: "thread_create_join_us", Min: 1}}, Plugin: "forkbench", Bench: "forktime"}.WithKind()
	labelled := results.Claim{Claim: contract.Claim{ID: "L", Ratio: &contract.RatioClaim{Numerator: "fork_wait_us", Denominator: "thread_create_join_us", Min: 1, Labels: map[string]string{"n": "100"}}}, Plugin: "forkbench", Bench: "forktime"}.WithKind()
	speedup := results.Claim{Claim: contract.Claim{ID: "S", Scope: overN, Speedup: &contract.SpeedupClaim{Metric: "fork_wait_us", Baseline: "xeon5130-1core", Profile: "xeon5130-2core", Min: 1.5}}, Plugin: "forkbench", Bench: "forktime"}.WithKind()
	other := results.Claim{Claim: contract.Claim{ID: "O", Ratio: &contract.RatioClaim{Numerator: "a", Denominator: "b", Min: 1}}, Plugin: "forkbench", Bench: "create"}.WithKind()

	r := ratioSweepN("run", "celeron-2.4", map[string]float64{"50": 2, "100": 8, "200": 8}, []string{"50", "100", "200"}, 6)
	r.Sweep.Points[2].Status = results.PointNotRun
	r.Samples = r.Samples[:24]
	rclaims.Judge(r, []results.Claim{ratio, onlyAt, labelled, other}, nil, nil)
	var got []string
	for _, v := range r.Verdicts {
		got = append(got, v.Claim+" "+v.Verdict)
	}
	want := []string{"E2.1 not reproduced", "P not run", "L reproduced"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("verdicts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i, w := range []string{
		"= 2 at 50, 8 at 100 (median of per-repeat ratios, 12 pairs)", // each point tested; n=200 never ran
		"this run is out of the claim's scope: no point in scope: n=100, scope needs n=2000; n=50, scope needs n=2000; point n=200 did not run",
		"fork_wait_us / thread_create_join_us = 8 (median of per-repeat ratios, 6 pairs)", // names a swept label: that point's samples
	} {
		if i < len(r.Verdicts) && !strings.Contains(r.Verdicts[i].Reason, w) {
			t.Errorf("verdict %s: reason %q lacks %q", r.Verdicts[i].Claim, r.Verdicts[i].Reason, w)
		}
	}
	for _, v := range r.Verdicts {
		if v.Judged() && (len(v.Runs) != 1 || v.Runs[0] != "run") {
			t.Errorf("verdict %s %q names runs %v, want the swept run", v.Claim, v.Reason, v.Runs)
		}
	}

	// A speedup at each point, against the other profile's stored sweep.
	one := ratioSweepN("one", "xeon5130-1core", map[string]float64{"50": 4, "100": 4}, []string{"50", "100"}, 6)
	two := ratioSweepN("two", "xeon5130-2core", map[string]float64{"50": 2, "100": 3.9}, []string{"50", "100"}, 6)
	rclaims.Judge(two, []results.Claim{speedup}, []*results.Result{two, one}, nil)
	if len(two.Verdicts) != 1 {
		t.Fatalf("speedup verdicts %+v, want one", two.Verdicts)
	}
	if v := two.Verdicts[0]; v.Verdict != results.NotReproduced || strings.Join(v.Runs, ",") != "one,two" ||
		!strings.Contains(v.Reason, "= 2 at 50, 1.03 at 100") || !strings.Contains(v.Reason, "below 1.5 at 100") {
		t.Errorf("speedup: %s (%s) from %v", v.Verdict, v.Reason, v.Runs)
	}

	// A run that is no sweep has one verdict a claim too.
	plain := &results.Result{ID: "plain", Plugin: "forkbench", Experiment: "forktime", Outcome: results.Outcome{Status: "ok"}}
	rclaims.Judge(plain, []results.Claim{ratio}, nil, nil)
	if len(plain.Verdicts) != 1 || strings.HasPrefix(plain.Verdicts[0].Reason, "at ") {
		t.Errorf("plain run verdicts %+v", plain.Verdicts)
	}
}

func TestSweepSummary(t *testing.T) {
	line := (&results.Sweep{Axes: []results.SweepAxis{{Key: "n", Values: []string{"50", "100"}}},
		Points: []results.SweepPoint{{Labels: map[string]string{"n": "50"}, Status: "ok", Repeats: 2}, {Labels: map[string]string{"n": "100"}, Status: results.StatusInterrupted, Repeats: 1}}}).Summary()
	if want := "sweep n=50,100: 1 of 2 points done: n=100 interrupted (1 repeat(s) kept)"; line != want {
		t.Errorf("Summary = %q, want %q", line, want)
	}
}
