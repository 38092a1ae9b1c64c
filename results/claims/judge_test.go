package claims_test

import (
	"encoding/json"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"lab/internal/fixture"
	"lab/plugins/contract"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/render"
)

// The judge on synthetic stored results: every kind reaches each verdict
// through JudgeStore, scopes put runs out with their reasons, strata are
// decided apart, and the verdicts do not depend on the order of anything.

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newRun is a finished run of p/e on profile under clock, finished min
// minutes after t0.
func newRun(id, profile, clock string, min int) *results.Result {
	return &results.Result{ID: id, Plugin: "p", PluginVersion: "1.0.0", Experiment: "e",
		Parameters: map[string]string{"repeat": "7", "stdout": "pty"},
		Finished:   t0.Add(time.Duration(min) * time.Minute),
		Machine: results.MachineRecord{Profile: map[string]any{"name": profile}, Accelerator: "tcg", Clock: clock,
			KernelID: "kernel-of-" + profile},
		Outcome: results.Outcome{Status: "ok"}}
}

// add appends one series to r, a repeat a value.
func add(r *results.Result, metric, unit string, labels map[string]string, vals ...float64) *results.Result {
	r.Samples = append(r.Samples, fixture.Series(metric, unit, labels, vals...)...)
	return r
}

// swept makes r a sweep over key at points, every point ok.
func swept(r *results.Result, key string, points ...string) *results.Result {
	r.Parameters[key] = strings.Join(points, ",")
	r.Sweep = &results.Sweep{Axes: []results.SweepAxis{{Key: key, Values: points}}}
	for _, p := range points {
		r.Sweep.Points = append(r.Sweep.Points, results.SweepPoint{Labels: map[string]string{key: p}, Status: "ok", Repeats: 7})
	}
	return r
}

func l(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func claim(c contract.Claim) results.Claim {
	if c.ID == "" {
		c.ID = "X1.1"
	}
	c.Statement = "a claim"
	return results.Claim{Claim: c, Plugin: "p", Bench: "e"}.WithKind()
}

func ptr(v float64) *float64 { return &v }

// times is each of vs times k.
func times(k float64, vs ...float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = k * v
	}
	return out
}

// product is a[i] * b[i].
func product(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] * b[i]
	}
	return out
}

var profiles = rclaims.Profiles{
	"celeron-2.4":     {Calibration: &contract.Calibration{InstrPerNsLo: 0.5, InstrPerNsHi: 1.2, Basis: "2.0 GHz x kernel IPC 0.25-0.6", Confidence: "low"}},
	"celeron-2.4-era": {VariantOf: "celeron-2.4", Calibration: &contract.Calibration{InstrPerNsLo: 0.5, InstrPerNsHi: 1.2, Basis: "2.0 GHz x kernel IPC 0.25-0.6"}},
	"xeon5130-1core":  {},
	"xeon5130-2core":  {},
	"p3-450":          {},
	"xeon5130-fb":     {Console: "fb"},
	"xeon5130-vga":    {Console: "vga"},
}

func judge(c results.Claim, opt rclaims.Options, runs ...*results.Result) results.Verdict {
	return rclaims.JudgeStore([]results.Claim{c}, runs, profiles, opt)[0].Judged
}

type judgeCase struct {
	name   string
	claim  results.Claim
	runs   []*results.Result
	all    bool
	want   string
	reason []string
}

func checkJudged(t *testing.T, tests []judgeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sts := rclaims.JudgeStore([]results.Claim{tt.claim}, tt.runs, profiles, rclaims.Options{All: tt.all})
			s := sts[0]
			v := s.Judged
			if s.Verdict != tt.want || v.Verdict != tt.want {
				t.Errorf("verdict %q (%s), want %q", v.Verdict, v.Reason, tt.want)
			}
			for _, w := range tt.reason {
				if !strings.Contains(v.Reason, w) {
					t.Errorf("reason %q lacks %q", v.Reason, w)
				}
			}
			if strings.Contains(v.Reason, "\n") {
				t.Errorf("reason %q is more than one line", v.Reason)
			}
			if v.Claim != tt.claim.ID || v.Kind != tt.claim.Kind || v.Rule == "" || v.Rule == "no rule" || s.Rule != v.Rule || v.Statement != "a claim" {
				t.Errorf("verdict does not name its claim, kind, statement and rule: %+v", v)
			}
			if v.Verdict != results.NotRun && v.Verdict != results.Untestable && len(v.Runs) == 0 {
				t.Errorf("a %s verdict names no run", v.Verdict)
			}
			if !slices.IsSorted(v.Runs) {
				t.Errorf("runs %v not sorted", v.Runs)
			}
			if _, err := json.Marshal(sts); err != nil {
				t.Errorf("statuses do not marshal: %v", err)
			}
		})
	}
}

// Design §1's examples: den varies (host drift), num = k x den x noise.
var (
	drift = []float64{1.0, 2.0, 1.5, 3.0, 1.2, 2.5}
	noise = []float64{1.00, .99, 1.01, .98, 1.02, 1.00}
)

func ratioRun(id, profile, clock string, min int, ratios []float64) *results.Result {
	r := newRun(id, profile, clock, min)
	add(r, "proc_ms", "ms", nil, product(ratios, drift[:len(ratios)])...)
	return add(r, "thr_ms", "ms", nil, drift[:len(ratios)]...)
}

func TestJudgeRatio(t *testing.T) {
	c := claim(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "proc_ms", Denominator: "thr_ms", Min: 10}})
	checkJudged(t, []judgeCase{
		{"R", c, []*results.Result{ratioRun("r", "celeron-2.4", "host", 0, times(12, noise...))}, false, results.Reproduced,
			[]string{"proc_ms / thr_ms = 12", "above 10, p = 0.016"}},
		{"NR", c, []*results.Result{ratioRun("r", "celeron-2.4", "host", 0, []float64{8.0, 8.4, 7.9, 8.8, 8.1, 8.3})}, false, results.NotReproduced,
			[]string{"below 10, p = 0.016"}},
		{"I", c, []*results.Result{ratioRun("r", "celeron-2.4", "host", 0, []float64{9.0, 11.0, 9.5, 10.8, 9.8, 10.3})}, false, results.Inconclusive,
			[]string{"within the noise"}},
		{"too few", c, []*results.Result{ratioRun("r", "celeron-2.4", "host", 0, times(12, noise[:4]...))}, false, results.Inconclusive,
			[]string{"too few pairs", "--repeat 5"}},
		{"not run", c, nil, false, results.NotRun, []string{"no stored run in scope", "lab run p -e e"}},
	})
}

func TestJudgeRange(t *testing.T) {
	threads := func(lo float64) results.Claim {
		return claim(contract.Claim{Range: &contract.RangeClaim{Metric: "threads", Min: ptr(lo), Unit: "threads"}})
	}
	counted := func(vals ...float64) []*results.Result {
		return []*results.Result{add(newRun("r", "split-3g1g", "icount:0", 0), "threads", "threads", nil, vals...)}
	}
	share := claim(contract.Claim{Range: &contract.RangeClaim{Metric: "sys_s", ShareWith: "user_s", Min: ptr(0.5), Unit: "share"}})
	shared := func(sys, user []float64) []*results.Result {
		r := newRun("r", "xeon5130-fb", "icount:0", 0)
		return []*results.Result{add(add(r, "sys_s", "s", nil, sys...), "user_s", "s", nil, user...)}
	}
	checkJudged(t, []judgeCase{
		{"R", threads(1000), counted(3054, 3055, 3054, 3055, 3054), false, results.Reproduced, []string{"threads above 1000, p = 0.031"}},
		{"NR", threads(256), counted(64.1, 64.1, 64.2, 64.1, 64.1), false, results.NotReproduced, []string{"threads below 256"}},
		{"I", threads(1000), counted(990, 1010, 1005, 995, 1002), false, results.Inconclusive, []string{"within the noise"}},
		{"too few", threads(1000), counted(3054, 3055, 3054, 3055), false, results.Inconclusive, []string{"too few samples", "--repeat 5"}},
		{"share R", share, shared([]float64{.411, .410, .412, .409, .410, .411}, []float64{.003, .002, .003, .002, .003, .002}), false, results.Reproduced,
			[]string{"sys_s / (sys_s + user_s)"}},
		{"share NR", share, shared([]float64{.001, .002, .001, .001, .002, .001}, []float64{.028, .027, .029, .028, .028, .029}), false, results.NotReproduced, nil},
	})
}

// crossRun is a sweep over count of real_s, mode=process 1 and
// mode=thread the ratio given, at 5, 500, 1000 and 5000.
func crossRun(id string, n int, at5, at500, at1000, at5000 []float64) *results.Result {
	r := swept(newRun(id, "celeron-2.4", "icount:0", 0), "count", "5", "500", "1000", "5000")
	for i, vs := range [][]float64{at5, at500, at1000, at5000} {
		pt := []string{"5", "500", "1000", "5000"}[i]
		add(r, "real_s", "s", l("count", pt, "mode", "thread"), vs[:n]...)
		add(r, "real_s", "s", l("count", pt, "mode", "process"), slices.Repeat([]float64{1}, n)...)
	}
	return r
}

var (
	p5    = []float64{.60, .61, .59, .62, .60, .58, .61}
	r500  = []float64{.90, .92, .89, .93, .91, .88, .90}
	r1000 = []float64{1.10, 1.12, 1.08, 1.11, 1.09, 1.13, 1.10}
	r5000 = []float64{1.30, 1.28, 1.33, 1.31, 1.29, 1.32, 1.30}
	n500  = []float64{.85, .86, .84, .87, .85, .83, .86}
	n1000 = []float64{.90, .91, .89, .92, .90, .88, .91}
	n5000 = []float64{.97, 1.01, .96, 1.02, .98, .99, 1.03}
	i1000 = []float64{1.02, .97, 1.01, .99, 1.03, .98, 1.04}
	i5000 = []float64{1.20, 1.22, 1.18, 1.21, 1.19, 1.23, 1.20}
)

func crossClaim() results.Claim {
	return claim(contract.Claim{Crossover: &contract.CrossoverClaim{First: "real_s", FirstLabels: l("mode", "thread"),
		Second: "real_s", SecondLabels: l("mode", "process"), Sweep: "count", BandStart: 500, BandEnd: 1000, Before: contract.BeforeBelow}})
}

func TestJudgeCrossover(t *testing.T) {
	c := crossClaim()
	lacking := crossRun("r", 7, p5, r500, r1000, r5000)
	lacking.Samples = slices.DeleteFunc(lacking.Samples, func(s results.Sample) bool { return s.Labels["count"] == "1000" })
	checkJudged(t, []judgeCase{
		{"R", c, []*results.Result{crossRun("r", 7, p5, r500, r1000, r5000)}, false, results.Reproduced,
			[]string{"below real_s at mode=process at count=500, p = 0.008"}},
		{"NR", c, []*results.Result{crossRun("r", 7, p5, n500, n1000, n5000)}, false, results.NotReproduced,
			[]string{"still below", "count=1000, at or after the band", "Holm over 4 tests"}},
		{"I", c, []*results.Result{crossRun("r", 7, p5, r500, i1000, i5000)}, false, results.Inconclusive, []string{"within the noise"}},
		{"too few", c, []*results.Result{crossRun("r", 6, p5, n500, n1000, n5000)}, false, results.Inconclusive, []string{"too few pairs", "--repeat 7"}},
		{"band edge missing", c, []*results.Result{lacking}, false, results.Inconclusive,
			[]string{"no in-scope run at count=1000, a required point", "lab run p -e e --profile celeron-2.4 --clock icount:0", "--sweep count=5,500,1000,5000"}},
	})
}

func TestJudgeSpeedup(t *testing.T) {
	c := claim(contract.Claim{Speedup: &contract.SpeedupClaim{Metric: "real_s", Baseline: "xeon5130-1core", Profile: "xeon5130-2core", Min: 1.5, Max: ptr(2.5)}})
	pair := func(base, fast []float64) []*results.Result {
		return []*results.Result{add(newRun("one", "xeon5130-1core", "host", 0), "real_s", "s", nil, base...),
			add(newRun("two", "xeon5130-2core", "host", 1), "real_s", "s", nil, fast...)}
	}
	fast := []float64{1.0, 1.02, .98, 1.01}
	checkJudged(t, []judgeCase{
		{"R", c, pair([]float64{2.0, 2.1, 1.9, 2.05}, fast), false, results.Reproduced, []string{"above 1.5", "below 2.5", "p = 0.014"}},
		{"NR", c, pair([]float64{1.0, 1.05, .98, 1.02}, []float64{1.0, 1.01, .99, 1.02}), false, results.NotReproduced, []string{"below 1.5"}},
		{"I", c, pair([]float64{1.4, 1.6, 1.52, 1.55}, []float64{1.0, 1.01, .99, 1.02}), false, results.Inconclusive, []string{"within the noise"}},
		{"too few", c, pair([]float64{2.0, 2.1, 1.9}, fast[:3]), false, results.Inconclusive, []string{"too few samples a side", "--repeat 4"}},
		{"one side", c, pair([]float64{2.0, 2.1, 1.9, 2.05}, nil)[:1], false, results.NotRun, []string{"needs an in-scope run on xeon5130-2core under host"}},
	})
	// The stratum is the pair of profiles.
	v := judge(c, rclaims.Options{}, pair([]float64{2.0, 2.1, 1.9, 2.05}, fast)...)
	if len(v.Strata) != 1 || v.Strata[0].Profile != "xeon5130-1core vs xeon5130-2core" || !reflect.DeepEqual(v.Runs, []string{"one", "two"}) {
		t.Errorf("speedup strata %+v, runs %v", v.Strata, v.Runs)
	}
}

// crashRun is a sweep over workers whose points ended as statuses say
// ("ok", or a crash reason).
// ("ok", or a crash reason), each in all of its 3 repeats (sample
// crashed, as threadbench's limit records it).
func crashRun(id string, min int, points map[string]string) *results.Result {
	r := crashRunOnce(id, min, points)
	for _, p := range slices.Sorted(maps.Keys(points)) {
		labels, v := l("workers", p, "stack_kb", "8192"), 0.0
		if why := points[p]; why != "ok" {
			labels["signal"], v = "SIGSEGV", 1
			if strings.Contains(why, "SIGABRT") {
				labels["signal"] = "SIGABRT"
			}
		}
		for i := range 3 {
			r.Samples = append(r.Samples, results.Sample{Metric: "crashed", Value: v, Unit: "runs", Repeat: i, Labels: labels})
		}
	}
	return r
}

// crashRunOnce is crashRun with only the points' statuses: one outcome a
// point, as a run that does not record its repeats' says.
func crashRunOnce(id string, min int, points map[string]string) *results.Result {
	pts := slices.Sorted(maps.Keys(points)) // 255, 350, 500: as numbers too
	r := swept(newRun(id, "split-3g1g", "icount:0", min), "workers", pts...)
	for i, p := range r.Sweep.Points {
		if why := points[p.Labels["workers"]]; why != "ok" {
			r.Sweep.Points[i].Status, r.Sweep.Points[i].Reason = "expected-crash", why
			r.Outcome = results.Outcome{Status: "expected-crash", Reason: "some points crashed"}
		}
	}
	return r
}

func TestJudgeCrash(t *testing.T) {
	c := claim(contract.Claim{Crash: &contract.CrashClaim{Signal: "SIGSEGV", Param: "workers", From: 350},
		Scope: &contract.Scope{Sweep: &contract.ScopeSweep{Key: "workers", Required: []string{"255", "350"}}}})
	segv := "repeat 1/3: segmentation fault at thread 382"
	checkJudged(t, []judgeCase{
		{"R", c, []*results.Result{crashRun("r", 0, map[string]string{"255": "ok", "350": segv, "500": "killed by SIGSEGV"})}, false, results.Reproduced,
			[]string{"255: ran, 350: SIGSEGV, 500: SIGSEGV"}},
		{"NR", c, []*results.Result{crashRun("r", 0, map[string]string{"255": "ok", "350": "ok", "500": segv})}, false, results.NotReproduced,
			[]string{"ran to the end at workers=350 >= 350"}},
		{"another signal", c, []*results.Result{crashRun("r", 0, map[string]string{"255": "ok", "350": "aborted: SIGABRT"})}, false, results.NotReproduced,
			[]string{"crashed with SIGABRT, not SIGSEGV"}},
		// Two runs of one cell disagree: flaky, with every run (--all).
		{"I flaky", c, []*results.Result{crashRun("r1", 0, map[string]string{"255": "ok", "350": segv}), crashRun("r2", 1, map[string]string{"255": "ok", "350": "ok"})},
			true, results.Inconclusive, []string{"workers=350 flaky: 3 of 6 crashed"}},
		// The latest of the cell decides without --all.
		{"latest", c, []*results.Result{crashRun("r1", 0, map[string]string{"255": "ok", "350": segv}), crashRun("r2", 1, map[string]string{"255": "ok", "350": "ok"})},
			false, results.NotReproduced, nil},
		{"required point missing", c, []*results.Result{crashRun("r", 0, map[string]string{"350": segv, "500": segv})}, false, results.Inconclusive,
			[]string{"no in-scope run at workers=255", "--sweep workers=255,350,500"}},
		// One run's repeats say how each ended (sample crashed): a point
		// that crashed in some repeats and not others is flaky.
		{"I flaky within a run", c, []*results.Result{crashed(crashRunOnce("r", 0, map[string]string{"255": "ok", "350": segv}), map[string][]float64{"255": {0, 0, 0}, "350": {1, 0, 1}})},
			false, results.Inconclusive, []string{"workers=350 flaky: 2 of 3 crashed (ran and SIGSEGV)"}},
		{"R every repeat", c, []*results.Result{crashed(crashRunOnce("r", 0, map[string]string{"255": "ok", "350": segv}), map[string][]float64{"255": {0, 0, 0}, "350": {1, 1, 1}})},
			false, results.Reproduced, []string{"255: ran, 350: SIGSEGV"}},
		// One outcome a point cannot tell steady from flaky, either way.
		{"I one run", c, []*results.Result{crashRunOnce("r", 0, map[string]string{"255": "ok", "350": segv})},
			false, results.Inconclusive, []string{"too few runs to tell a steady point from a flaky one at workers=255 (1 run), workers=350 (1 run)", "--repeat 3"}},
		{"I one run against it", c, []*results.Result{crashRunOnce("r", 0, map[string]string{"255": "ok", "350": "ok"})},
			false, results.Inconclusive, []string{"too few runs"}},
	})
}

// crashed adds to a crash run how each repeat at each point ended: the
// sample crashed, 1 with the signal as a label, or 0.
func crashed(r *results.Result, points map[string][]float64) *results.Result {
	for _, p := range slices.Sorted(maps.Keys(points)) {
		for i, v := range points[p] {
			labels := l("workers", p, "stack_kb", "8192")
			if v == 1 {
				labels["signal"] = "SIGSEGV"
			}
			r.Samples = append(r.Samples, results.Sample{Metric: "crashed", Value: v, Unit: "runs", Repeat: i, Labels: labels})
		}
	}
	return r
}

func designRun(vals map[string][]float64) *results.Result {
	r := newRun("r", "p3-450", "icount:0", 0)
	for _, d := range slices.Sorted(maps.Keys(vals)) {
		add(r, "cpu_s", "s", l("design", d), vals[d]...)
	}
	return r
}

var (
	d1 = []float64{1.33, 1.34, 1.33, 1.35, 1.32, 1.33}
	d2 = []float64{.417, .418, .416, .419, .417, .415}
	d3 = []float64{.475, .476, .474, .477, .475, .473}
)

func TestJudgeOrder(t *testing.T) {
	c := claim(contract.Claim{Order: &contract.OrderClaim{Metric: "cpu_s", Label: "design", Above: []string{"1"}, Below: []string{"2"}, Min: 1,
		Pairs: []contract.OrderPair{{Above: "1", Below: "3"}}}})
	checkJudged(t, []judgeCase{
		{"R", c, []*results.Result{designRun(map[string][]float64{"1": d1, "2": d2, "3": d3})}, false, results.Reproduced, []string{"2 pairs above 1"}},
		{"NR", c, []*results.Result{designRun(map[string][]float64{"1": d1, "2": d2, "3": {1.40, 1.41, 1.39, 1.42, 1.40, 1.38}})}, false, results.NotReproduced,
			[]string{"design=1 / design=3 below 1, p = 0.016"}},
		{"I", c, []*results.Result{designRun(map[string][]float64{"1": d1, "2": d2, "3": {1.30, 1.36, 1.31, 1.37, 1.30, 1.35}})}, false, results.Inconclusive,
			[]string{"within the noise"}},
		{"too few", c, []*results.Result{designRun(map[string][]float64{"1": d1[:5], "2": d2[:5], "3": d3[:5]})}, false, results.Inconclusive,
			[]string{"too few pairs", "--repeat 6"}},
	})
}

func TestJudgeEquivalence(t *testing.T) {
	paired := claim(contract.Claim{Equivalence: &contract.EquivalenceClaim{Numerator: "real_s", NumeratorLabels: l("mode", "thread"),
		Denominator: "real_s", DenominatorLabels: l("mode", "process"), Margin: 0.1, Sides: contract.SidesBoth}})
	modes := func(ratios []float64) []*results.Result {
		r := newRun("r", "xeon5130-1core", "icount:0", 0)
		add(r, "real_s", "s", l("mode", "thread"), product(ratios, drift[:len(ratios)])...)
		return []*results.Result{add(r, "real_s", "s", l("mode", "process"), drift[:len(ratios)]...)}
	}
	byLabel := claim(contract.Claim{Equivalence: &contract.EquivalenceClaim{Numerator: "cpu_s", Denominator: "cpu_s", Label: "design",
		Numerators: []string{"2", "3"}, Denominators: []string{"1"}, Margin: 0.1, Sides: contract.SidesLower}})
	same := []float64{1.01, .99, 1.02, .98, 1.005, 1.03}
	across := claim(contract.Claim{Equivalence: &contract.EquivalenceClaim{Numerator: "real_s", Denominator: "real_s", Margin: 0.1,
		Sides: contract.SidesBoth, Baseline: "xeon5130-1core", Profile: "xeon5130-2core"}})
	profs := func(one, two []float64) []*results.Result {
		return []*results.Result{add(newRun("one", "xeon5130-1core", "host", 0), "real_s", "s", nil, one...),
			add(newRun("two", "xeon5130-2core", "host", 0), "real_s", "s", nil, two...)}
	}
	checkJudged(t, []judgeCase{
		{"R", paired, modes(same), false, results.Reproduced, []string{"above 0.909", "below 1.1"}},
		{"NR", paired, modes([]float64{.80, .82, .79, .81, .83, .78}), false, results.NotReproduced, []string{"below 0.909, p = 0.016"}},
		{"I", paired, modes([]float64{.90, .95, .88, .93, .91, .92}), false, results.Inconclusive, []string{"within the noise"}},
		{"too few", paired, modes(same[:5]), false, results.Inconclusive, []string{"too few pairs", "--repeat 6"}},
		{"by label R", byLabel, []*results.Result{designRun(map[string][]float64{"1": d2, "2": times(1.0, d2...), "3": times(1.05, d2...)})}, false,
			results.Reproduced, []string{"design=2 / design=1", "design=3 / design=1"}},
		{"by label NR", byLabel, []*results.Result{designRun(map[string][]float64{"1": d2, "2": times(1.0, d2...), "3": times(0.7, d2...)})}, false,
			results.NotReproduced, []string{"below 0.909 at design=3 / design=1"}},
		{"across R", across, profs([]float64{1.0, 1.01, .99, 1.02}, []float64{1.0, 1.02, .98, 1.01}), false, results.Reproduced, nil},
		{"across NR", across, profs([]float64{1.0, 1.01, .99, 1.02}, []float64{1.5, 1.52, 1.48, 1.51}), false, results.NotReproduced, []string{"above 1.1"}},
		{"across too few", across, profs([]float64{1.0, 1.01, .99}, []float64{1.0, 1.02, .98}), false, results.Inconclusive, []string{"too few samples a side"}},
	})
}

func TestJudgeDiffRatio(t *testing.T) {
	c := claim(contract.Claim{DiffRatio: &contract.DiffRatioClaim{Metric: "cpu_s", Label: "design", Numerator: "1", Baseline: "0",
		Denominators: []string{"2"}, Factor: 10}})
	z := []float64{.4120, .4122, .4119, .4121, .4120, .4118}
	a := []float64{1.330, 1.331, 1.329, 1.332, 1.330, 1.328}
	run := func(b []float64) []*results.Result {
		return []*results.Result{designRun(map[string][]float64{"0": z[:len(b)], "1": a[:len(b)], "2": b})}
	}
	flat := []float64{.4130, .4102, .4124, .4111, .4135, .4088}
	checkJudged(t, []judgeCase{
		{"R", c, run([]float64{.4500, .4506, .4497, .4503, .4502, .4498}), false, results.Reproduced, []string{"ratio of medians 24"}},
		{"NR", c, run([]float64{.5200, .5206, .5197, .5203, .5202, .5198}), false, results.NotReproduced, nil},
		{"I", c, run(flat), false, results.Inconclusive, []string{"within its noise"}},
		{"too few", c, run([]float64{.4500, .4506, .4497, .4503}), false, results.Inconclusive, []string{"too few repeats"}},
	})
}

func TestJudgeTrend(t *testing.T) {
	c := claim(contract.Claim{Trend: &contract.TrendClaim{Numerator: "real_s", NumeratorLabels: l("mode", "thread"),
		Denominator: "real_s", DenominatorLabels: l("mode", "process"), Sweep: "workers", Margin: 0.1}})
	run := func(at350, at1000 []float64) []*results.Result {
		r := swept(newRun("r", "xeon5130-1core", "icount:0", 0), "workers", "350", "1000")
		for pt, vs := range map[string][]float64{"350": at350, "1000": at1000} {
			add(r, "real_s", "s", l("workers", pt, "mode", "thread"), vs...)
			add(r, "real_s", "s", l("workers", pt, "mode", "process"), slices.Repeat([]float64{1}, len(vs))...)
		}
		return []*results.Result{r}
	}
	at350 := []float64{1.00, 1.02, .98, 1.01}
	checkJudged(t, []judgeCase{
		{"R", c, run(at350, []float64{.80, .82, .79, .81}), false, results.Reproduced, []string{"more than 10% below its value at workers=350"}},
		{"NR", c, run(at350, []float64{1.00, 1.01, .99, 1.02}), false, results.NotReproduced, []string{"less than 10% below"}},
		{"I", c, run(at350, []float64{.90, .93, .88, .95}), false, results.Inconclusive, []string{"within the noise"}},
		{"too few", c, run(at350[:3], []float64{.80, .82, .79}), false, results.Inconclusive, []string{"too few pairs", "--repeat 4"}},
	})
}

// An untestable claim is untestable here whatever was run, and quotes
// what was measured instead.
func TestJudgeUntestable(t *testing.T) {
	c := claim(contract.Claim{Untestable: &contract.UntestableClaim{Property: "Windows' Sleep rounds up to the timer tick",
		Instead: "serial_overhead_ms"}})
	r := add(newRun("r", "celeron-2.4", "icount:0", 0), "serial_overhead_ms", "ms", nil, 0.056, 0.057, 0.055, 0.056, 0.056, 0.056)
	// Samples that would refute any range.
	checkJudged(t, []judgeCase{
		{"with runs", c, []*results.Result{r}, false, results.Untestable,
			[]string{"untestable here: Windows' Sleep", "median serial_overhead_ms 0.056 ms (6 samples)", "predicting [0.0458, 0.114] ms", "celeron-2.4's calibration"}},
		{"without", c, nil, false, results.Untestable, []string{"serial_overhead_ms, not measured"}},
	})
}

// Absolute times: not comparable under the host clock; under icount
// decided only against a calibration's whole interval.
func TestJudgeAbsoluteTime(t *testing.T) {
	band := func(lo, hi float64) results.Claim {
		return claim(contract.Claim{Range: &contract.RangeClaim{Metric: "process_ms", Min: ptr(lo), Max: ptr(hi), Unit: "ms"}})
	}
	on := func(profile, clock string) []*results.Result {
		return []*results.Result{add(newRun("r", profile, clock, 0), "process_ms", "ms", nil, 0.2169, 0.2171, 0.217, 0.217, 0.2172, 0.2168)}
	}
	own := band(0.175, 0.185)
	own.Calibration = &contract.Calibration{InstrPerNsLo: 0.4, InstrPerNsHi: 2.1, Basis: "any 2004-07 Celeron"}
	// Samples in µs, bounds in ms.
	micro := []*results.Result{add(newRun("r", "celeron-2.4", "icount:0", 0), "process_ms", "µs", nil, 216.9, 217.1, 217, 217, 217.2, 216.8)}
	checkJudged(t, []judgeCase{
		{"host", band(0.175, 0.185), on("celeron-2.4", "host"), false, results.NotComparable, []string{"under the host clock an absolute time is TCG's speed"}},
		{"icount NC", band(0.175, 0.185), on("celeron-2.4", "icount:0"), false, results.NotComparable,
			[]string{"predicts [0.181, 0.434] ms", "overlaps", "celeron-2.4's calibration"}},
		{"icount NR", band(0.9, 1.1), on("celeron-2.4", "icount:0"), false, results.NotReproduced, []string{"slower than the whole predicted"}},
		{"icount R", band(0.1, 0.5), on("celeron-2.4", "icount:0"), false, results.Reproduced, []string{"lies wholly inside"}},
		{"units converted", band(0.1, 0.5), micro, false, results.Reproduced, nil},
		{"no calibration", band(0.1, 0.5), on("p3-450", "icount:0"), false, results.NotComparable, []string{"profile p3-450 has no calibration"}},
		// A claim that names no unit is in its samples': ms, a time.
		{"the samples' unit", claim(contract.Claim{Range: &contract.RangeClaim{Metric: "process_ms", Min: ptr(0.1), Max: ptr(0.5)}}),
			on("celeron-2.4", "host"), false, results.NotComparable, []string{"median process_ms 0.217 ms", "TCG's speed"}},
		{"a variant takes its base's", band(0.1, 0.5), on("celeron-2.4-era", "icount:0"), false, results.Reproduced, nil},
		{"the claim's own", own, on("p3-450", "icount:0"), false, results.NotComparable, []string{"the claim's calibration: any 2004-07 Celeron", "predicts [0.103, 0.543] ms"}},
	})
}

// Every reason a run is out of scope, and a variant in scope only with
// Variants.
func TestJudgeScope(t *testing.T) {
	scope := &contract.Scope{Profiles: []string{"celeron-2.4"}, Params: map[string]string{"stdout": "pty"}, Clocks: []string{contract.ClockHost},
		MinPluginVersion: "1.2.0", Sweep: &contract.ScopeSweep{Key: "count", Points: []string{"5", "500"}}}
	c := claim(contract.Claim{Scope: scope, Ratio: &contract.RatioClaim{Numerator: "proc_ms", Denominator: "thr_ms", Min: 10}})
	good := func(id, profile string, min int) *results.Result {
		r := ratioRun(id, profile, "host", min, times(12, noise...))
		r.PluginVersion, r.Parameters["count"] = "1.2.0", "5"
		return r
	}
	in := good("in", "celeron-2.4", 10)
	profile := good("profile", "p3-450", 0)
	variant := good("variant", "celeron-2.4-era", 0)
	stdout := good("stdout", "celeron-2.4", 0)
	stdout.Parameters["stdout"] = "null"
	unrecorded := good("unrecorded", "celeron-2.4", 0)
	delete(unrecorded.Parameters, "stdout")
	clock := good("clock", "celeron-2.4", 0)
	clock.Machine.Clock = "icount:0"
	old := good("old", "celeron-2.4", 0)
	old.PluginVersion = "1.1.9"
	none := good("none", "celeron-2.4", 0)
	none.PluginVersion = ""
	failed := good("failed", "celeron-2.4", 0)
	failed.Outcome = results.Outcome{Status: "failed", Reason: "the guest died\nand more"}
	point := good("point", "celeron-2.4", 0)
	point.Parameters["count"] = "10"
	sweep := swept(newRun("sweep", "celeron-2.4", "host", 0), "count", "10", "20")
	sweep.PluginVersion = "1.2.0"
	older := good("older", "celeron-2.4", 5)
	other := good("other", "celeron-2.4", 0)
	other.Experiment = "other"
	runs := []*results.Result{in, profile, variant, stdout, unrecorded, clock, old, none, failed, point, sweep, older, other}
	v := judge(c, rclaims.Options{}, runs...)
	want := map[string]string{
		"clock":      "clock icount:0 not in scope (host only)",
		"failed":     "the run failed: the guest died",
		"none":       "no plugin version recorded, scope needs 1.2.0 or later",
		"old":        "plugin version 1.1.9 older than 1.2.0, the scope's minimum",
		"older":      "a later run of the same cell decides it (in; --all uses every run)",
		"point":      "count=10 not among the scope's points (5, 500)",
		"profile":    "profile p3-450 not in scope (celeron-2.4)",
		"stdout":     "stdout=null, scope needs stdout=pty",
		"sweep":      "no point in scope: count=10 not among the scope's points (5, 500); count=20 not among the scope's points (5, 500)",
		"unrecorded": "stdout not recorded, scope needs stdout=pty",
		"variant":    "profile celeron-2.4-era not in scope (celeron-2.4; a variant is in scope only when the scope says variants)",
	}
	got := map[string]string{}
	for _, o := range v.OutOfScope {
		got[o.Run] = o.Reason
	}
	if !reflect.DeepEqual(got, want) {
		for id := range maps.Keys(want) {
			if got[id] != want[id] {
				t.Errorf("run %s: out of scope %q, want %q", id, got[id], want[id])
			}
		}
		for id := range maps.Keys(got) {
			if _, ok := want[id]; !ok {
				t.Errorf("run %s out of scope (%s), want it in", id, got[id])
			}
		}
	}
	if v.Verdict != results.Reproduced || !reflect.DeepEqual(v.Runs, []string{"in"}) {
		t.Errorf("verdict %s (%s) from %v, want reproduced from run in", v.Verdict, v.Reason, v.Runs)
	}
	// All: the older run of the cell decides too.
	if v := judge(c, rclaims.Options{All: true}, runs...); !reflect.DeepEqual(v.Runs, []string{"in", "older"}) {
		t.Errorf("--all runs %v, want in and older", v.Runs)
	}
	// With variants the era profile is in scope, a stratum of its own.
	scope.Variants = true
	v = judge(c, rclaims.Options{}, runs...)
	if len(v.Strata) != 2 || v.Strata[0].Profile != "celeron-2.4" || v.Strata[1].Profile != "celeron-2.4-era" || v.Strata[1].Kernel != "kernel-of-celeron-2.4-era" {
		t.Errorf("strata with variants: %+v", v.Strata)
	}
	for _, o := range v.OutOfScope {
		if o.Run == "variant" {
			t.Errorf("the variant is out of scope with variants: %s", o.Reason)
		}
		if o.Run == "profile" && o.Reason != "profile p3-450 not in scope (celeron-2.4 and its variants)" {
			t.Errorf("profile out of scope: %q", o.Reason)
		}
	}
}

// Strata are never pooled: a ratio reproduced under host and not under
// icount is clock-dependent, on a base and its variant kernel-dependent.
func TestJudgeStrata(t *testing.T) {
	c := claim(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "proc_ms", Denominator: "thr_ms", Min: 4.5},
		Scope: &contract.Scope{Profiles: []string{"celeron-2.4"}, Variants: true}})
	host := ratioRun("host", "celeron-2.4", "host", 0, times(5.02, noise...))
	icount := ratioRun("icount", "celeron-2.4", "icount:0", 0, times(3.16, noise...))
	v := judge(c, rclaims.Options{}, icount, host)
	if v.Verdict != results.ClockDependent || !strings.Contains(v.Reason, "reproduced under host (5.02x, p 0.016), not reproduced under icount:0 (3.16x, p 0.016)") {
		t.Errorf("host R + icount NR: %s (%s)", v.Verdict, v.Reason)
	}
	if len(v.Strata) != 2 || v.Strata[0].Clock != "host" || v.Strata[1].Clock != "icount:0" || !reflect.DeepEqual(v.Runs, []string{"host", "icount"}) {
		t.Errorf("strata %+v runs %v", v.Strata, v.Runs)
	}
	era := ratioRun("era", "celeron-2.4-era", "host", 0, times(3.16, noise...))
	if v := judge(c, rclaims.Options{}, host, era); v.Verdict != results.KernelDependent ||
		!strings.Contains(v.Reason, "reproduced under celeron-2.4 (5.02x, p 0.016), not reproduced under celeron-2.4-era (3.16x") {
		t.Errorf("base R + variant NR: %s (%s)", v.Verdict, v.Reason)
	}
	if v := judge(c, rclaims.Options{}, host, ratioRun("era", "celeron-2.4-era", "icount:0", 0, times(3.16, noise...))); v.Verdict != results.ClockKernelDependent {
		t.Errorf("base host R + variant icount NR: %s (%s)", v.Verdict, v.Reason)
	}
	// Two profiles of one machine whose consoles differ (fbcon, vgacon)
	// are console strata: console-dependent, both figures said.
	cc := claim(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "proc_ms", Denominator: "thr_ms", Min: 10},
		Scope: &contract.Scope{Profiles: []string{"xeon5130-fb", "xeon5130-vga"}}})
	fb := ratioRun("fb", "xeon5130-fb", "icount:0", 0, times(59, noise...))
	vga := ratioRun("vga", "xeon5130-vga", "icount:0", 0, times(0.92, noise...))
	if v := judge(cc, rclaims.Options{}, vga, fb); v.Verdict != results.ConsoleDependent ||
		!strings.Contains(v.Reason, "reproduced under xeon5130-fb (59x, p 0.016), not reproduced under xeon5130-vga (0.92x, p 0.016)") {
		t.Errorf("fb R + vga NR: %s (%s)", v.Verdict, v.Reason)
	}
	if v := judge(cc, rclaims.Options{}, ratioRun("vga", "xeon5130-vga", "host", 0, times(0.92, noise...)), fb); v.Verdict != "clock- and console-dependent" {
		t.Errorf("fb icount R + vga host NR: %s (%s)", v.Verdict, v.Reason)
	}
	// The workload's build is a stratum where the scope names builds
	// (E1's gcc -o fork fork.c against lab's static -O2).
	bc := claim(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "proc_ms", Denominator: "thr_ms", Min: 4.5},
		Scope: &contract.Scope{Profiles: []string{"celeron-2.4"}, Builds: []string{contract.DefaultBuild, "dynamic-O0"}}})
	built := func(id, build string, ratio float64) *results.Result {
		r := ratioRun(id, "celeron-2.4", "icount:0", 0, times(ratio, noise...))
		if build != "" {
			r.Parameters[contract.ParamBuild] = build
		}
		return r
	}
	v = judge(bc, rclaims.Options{}, built("static", "", 5.02), built("dyn", "dynamic-O0", 3.16), built("o3", "dynamic-O3", 9))
	if v.Verdict != results.Dependent(results.AxisBuild) ||
		!strings.Contains(v.Reason, "not reproduced under build dynamic-O0 (3.16x, p 0.016), reproduced under build static-O2 (5.02x") ||
		len(v.OutOfScope) != 1 || !strings.Contains(v.OutOfScope[0].Reason, "build dynamic-O3 not in scope (static-O2, dynamic-O0)") ||
		len(v.Strata) != 2 || v.Strata[0].Build == "" {
		t.Errorf("static R + dynamic NR: %s (%s), out of scope %+v, strata %+v", v.Verdict, v.Reason, v.OutOfScope, v.Strata)
	}
	// Consoles and builds at once (E3's claims: fbcon and vgacon, each in
	// lab's build and the source's): the console alone decides, so the
	// claim is console-dependent, not console- and build-dependent: a pair
	// that differs in more than another pair's axes says nothing more
	// (the pairs fb-static/vga-dynamic differ in both).
	cb := claim(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "proc_ms", Denominator: "thr_ms", Min: 10},
		Scope: &contract.Scope{Profiles: []string{"xeon5130-fb", "xeon5130-vga"}, Builds: []string{contract.DefaultBuild, "dynamic-O0"}}})
	on := func(id, profile, build string, ratio float64) *results.Result {
		r := ratioRun(id, profile, "icount:0", 0, times(ratio, noise...))
		if build != "" {
			r.Parameters[contract.ParamBuild] = build
		}
		return r
	}
	four := []*results.Result{on("fbs", "xeon5130-fb", "", 26), on("fbd", "xeon5130-fb", "dynamic-O0", 30),
		on("vgas", "xeon5130-vga", "", 0.93), on("vgad", "xeon5130-vga", "dynamic-O0", 0.9)}
	if v := judge(cb, rclaims.Options{}, four...); v.Verdict != results.ConsoleDependent {
		t.Errorf("fb R and vga NR in both builds: %s (%s), want console-dependent", v.Verdict, v.Reason)
	}
	// Where each of two axes alone turns the verdict, both are named.
	two := []*results.Result{on("fbs", "xeon5130-fb", "", 26), on("fbd", "xeon5130-fb", "dynamic-O0", 0.9), on("vgas", "xeon5130-vga", "", 0.93)}
	if v := judge(cb, rclaims.Options{}, two...); v.Verdict != results.Dependent(results.AxisConsole, results.AxisBuild) {
		t.Errorf("fb static R, fb dynamic NR, vga static NR: %s (%s), want console- and build-dependent", v.Verdict, v.Reason)
	}
	// A scope that names no build takes the default build only.
	if v := judge(c, rclaims.Options{}, built("dyn", "dynamic-O0", 5.02)); v.Verdict != results.NotRun ||
		len(v.OutOfScope) != 1 || !strings.Contains(v.OutOfScope[0].Reason, "build dynamic-O0 not in scope (static-O2)") {
		t.Errorf("a dynamic build under a scope of none: %s (%s) %+v", v.Verdict, v.Reason, v.OutOfScope)
	}
	// Three strata, R, NR and I: only the decided pair says what the
	// claim depends on (here the clock); the inconclusive one is listed.
	eraI := ratioRun("era", "celeron-2.4-era", "host", 0, []float64{4.0, 5.0, 4.2, 4.9, 4.4, 4.7})
	if v := judge(c, rclaims.Options{}, host, icount, eraI); v.Verdict != results.ClockDependent ||
		!strings.Contains(v.Reason, "inconclusive under celeron-2.4-era") {
		t.Errorf("R + NR by clock + I on the variant: %s (%s)", v.Verdict, v.Reason)
	}
	// One stratum decided, another inconclusive: the decided verdict,
	// the other listed.
	noisy := ratioRun("icount", "celeron-2.4", "icount:0", 0, []float64{4.0, 5.0, 4.2, 4.9, 4.4, 4.7})
	if v := judge(c, rclaims.Options{}, host, noisy); v.Verdict != results.Reproduced ||
		!strings.Contains(v.Reason, "reproduced under host (5.02x, p 0.016), inconclusive under icount:0") {
		t.Errorf("R + I: %s (%s)", v.Verdict, v.Reason)
	}
}

// By construction and fidelity go into the verdict and its reason.
func TestJudgeNotes(t *testing.T) {
	c := claim(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "proc_ms", Denominator: "thr_ms", Min: 10},
		ByConstruction: "the lock serialises the work", Fidelity: "pthreads on 6.1, not .NET"})
	sts := rclaims.JudgeStore([]results.Claim{c}, []*results.Result{ratioRun("r", "celeron-2.4", "host", 0, times(12, noise...))}, profiles, rclaims.Options{})
	v := sts[0].Judged
	if v.ByConstruction != c.ByConstruction || v.Fidelity != c.Fidelity || !strings.HasPrefix(v.Reason, "by construction (the lock serialises the work): ") ||
		!strings.HasSuffix(v.Reason, " Fidelity: pthreads on 6.1, not .NET") {
		t.Errorf("verdict %+v", v)
	}
	if got := rclaims.Counts(sts); got != "1 reproduced (1 by construction)" {
		t.Errorf("Counts = %q", got)
	}
}

func TestCounts(t *testing.T) {
	sts := []rclaims.ClaimStatus{{Verdict: results.NotRun}, {Verdict: results.Untestable}, {Verdict: results.Reproduced},
		{Verdict: results.ClockDependent}, {Verdict: results.Reproduced, Judged: results.Verdict{ByConstruction: "x"}}}
	if got := rclaims.Counts(sts); got != "2 reproduced (1 by construction), 1 clock-dependent, 1 untestable here, 1 not run" {
		t.Errorf("Counts = %q", got)
	}
	if got := rclaims.Counts(nil); got != "none" {
		t.Errorf("Counts(nil) = %q", got)
	}
}

// clone is a deep copy of r through JSON, as a store would load it.
func clone(t *testing.T, r *results.Result) *results.Result {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var c results.Result
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// shuffled is a copy of store in another order (by seed), each run's
// samples, sweep points and swept values in another order too, and a
// copy of one run's file beside it (the same run).
func shuffled(t *testing.T, store []*results.Result, seed uint64) []*results.Result {
	rng := rand.New(rand.NewPCG(seed, 20))
	var out []*results.Result
	for _, r := range store {
		c := clone(t, r)
		rng.Shuffle(len(c.Samples), func(i, j int) { c.Samples[i], c.Samples[j] = c.Samples[j], c.Samples[i] })
		if c.Sweep != nil {
			rng.Shuffle(len(c.Sweep.Points), func(i, j int) { c.Sweep.Points[i], c.Sweep.Points[j] = c.Sweep.Points[j], c.Sweep.Points[i] })
			vs := c.Sweep.Axes[0].Values
			rng.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
			c.Parameters[c.Sweep.Axes[0].Key] = strings.Join(vs, ",")
		}
		out = append(out, c)
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return append(out, clone(t, out[0]))
}

// The same set of runs gives byte-identical statuses whatever the order
// of the store, of each run's samples and of its sweep's points (§3 step
// 3); the latest run of a cell is the one that finished last, wherever it
// is.
func TestJudgeOrderIndependent(t *testing.T) {
	cs := []results.Claim{crossClaim(),
		claim(contract.Claim{ID: "X1.2", Ratio: &contract.RatioClaim{Numerator: "proc_ms", Denominator: "thr_ms", Min: 10}}),
		claim(contract.Claim{ID: "X1.3", Speedup: &contract.SpeedupClaim{Metric: "real_s", Baseline: "xeon5130-1core", Profile: "xeon5130-2core", Min: 1.5}}),
		claim(contract.Claim{ID: "X1.4", Order: &contract.OrderClaim{Metric: "cpu_s", Label: "design", Above: []string{"1"}, Below: []string{"2", "3"}, Min: 1}}),
		claim(contract.Claim{ID: "X1.5", Crash: &contract.CrashClaim{Signal: "SIGSEGV", Param: "workers", From: 350}}),
		claim(contract.Claim{ID: "X1.6", Equivalence: &contract.EquivalenceClaim{Numerator: "real_s", NumeratorLabels: l("mode", "thread"),
			Denominator: "real_s", DenominatorLabels: l("mode", "process"), Margin: 0.1, Sides: contract.SidesLower},
			Scope: &contract.Scope{Sweep: &contract.ScopeSweep{Key: "count", Required: []string{"5", "500"}}}}),
	}
	// Two runs of one cell: the later (by Finished) is not reproduced,
	// and has the smaller ID.
	early := ratioRun("zz-early", "celeron-2.4", "host", 0, times(12, noise...))
	late := ratioRun("aa-late", "celeron-2.4", "host", 30, times(8, noise...))
	store := []*results.Result{
		crossRun("sweep", 7, p5, r500, r1000, r5000), early, late,
		ratioRun("icount", "celeron-2.4", "icount:0", 3, times(12, noise...)),
		add(newRun("one", "xeon5130-1core", "host", 1), "real_s", "s", nil, 2.0, 2.1, 1.9, 2.05),
		add(newRun("two", "xeon5130-2core", "host", 2), "real_s", "s", nil, 1.0, 1.02, .98, 1.01),
		designRun(map[string][]float64{"1": d1, "2": d2, "3": d3}),
		crashRun("crash", 4, map[string]string{"255": "ok", "350": "segmentation fault", "500": "segmentation fault"}),
	}
	store[6].ID = "designs"
	want := rclaims.JudgeStore(cs, store, profiles, rclaims.Options{})
	if v := want[1].Judged; v.Verdict != results.ClockDependent || !slices.Contains(v.Runs, "aa-late") || slices.Contains(v.Runs, "zz-early") {
		t.Fatalf("the ratio is decided by %v: %s (%s); want the later run of the host cell", v.Runs, v.Verdict, v.Reason)
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(4) {
		got, err := json.Marshal(rclaims.JudgeStore(cs, shuffled(t, store, seed), profiles, rclaims.Options{}))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(wantJSON) {
			t.Errorf("shuffle %d judged\n%s\nwant\n%s", seed, got, wantJSON)
		}
	}
}

// A run's own verdicts: one per claim of its experiment, from its own
// evidence, a swept run judged whole.
func TestJudgeRun(t *testing.T) {
	r := crossRun("sweep", 7, p5, r500, r1000, r5000)
	other := crossClaim()
	other.ID, other.Bench = "X9.9", "other"
	equal := claim(contract.Claim{ID: "X1.2", Equivalence: &contract.EquivalenceClaim{Numerator: "real_s", NumeratorLabels: l("mode", "thread"),
		Denominator: "real_s", DenominatorLabels: l("mode", "process"), Margin: 0.1, Sides: contract.SidesLower},
		Scope: &contract.Scope{Sweep: &contract.ScopeSweep{Key: "count"}}})
	stored := crossRun("stored", 7, p5, n500, n1000, n5000)
	stored.Finished = r.Finished.Add(time.Hour)
	rclaims.Judge(r, []results.Claim{crossClaim(), other, equal}, []*results.Result{stored}, profiles)
	if len(r.Verdicts) != 2 || r.Verdicts[0].Claim != "X1.1" || r.Verdicts[1].Claim != "X1.2" {
		t.Fatalf("verdicts %+v, want one for each claim of the run's experiment", r.Verdicts)
	}
	if v := r.Verdicts[0]; v.Verdict != results.Reproduced || !reflect.DeepEqual(v.Runs, []string{"sweep"}) {
		t.Errorf("crossover: %s (%s) from %v, want reproduced from the run alone", v.Verdict, v.Reason, v.Runs)
	}
	if v := r.Verdicts[1]; v.Verdict != results.NotReproduced || !strings.Contains(v.Reason, "0.6 at 5, 0.9 at 500, 1.1 at 1000, 1.3 at 5000") || !strings.Contains(v.Reason, "below 0.909 at 5, p = 0.008") {
		t.Errorf("equivalence at each point: %s (%s)", v.Verdict, v.Reason)
	}
	// A run out of the claim's scope says so.
	scoped := crossClaim()
	scoped.Scope = &contract.Scope{Clocks: []string{contract.ClockHost}}
	rclaims.Judge(r, []results.Claim{scoped}, nil, profiles)
	if v := r.Verdicts[0]; v.Verdict != results.NotRun || !strings.Contains(v.Reason, "this run is out of the claim's scope: clock icount:0 not in scope (host only)") ||
		len(v.OutOfScope) != 1 {
		t.Errorf("out of scope: %+v", v)
	}
	// A speedup takes the other profile's runs from the store.
	sp := claim(contract.Claim{Speedup: &contract.SpeedupClaim{Metric: "real_s", Baseline: "xeon5130-1core", Profile: "xeon5130-2core", Min: 1.5}})
	two := add(newRun("two", "xeon5130-2core", "host", 2), "real_s", "s", nil, 1.0, 1.02, .98, 1.01)
	one := add(newRun("one", "xeon5130-1core", "host", 1), "real_s", "s", nil, 2.0, 2.1, 1.9, 2.05)
	twoOld := add(newRun("two-old", "xeon5130-2core", "host", 0), "real_s", "s", nil, 2.0, 2.1, 1.9, 2.05)
	rclaims.Judge(two, []results.Claim{sp}, []*results.Result{one, twoOld, two}, profiles)
	if v := two.Verdicts[0]; v.Verdict != results.Reproduced || !reflect.DeepEqual(v.Runs, []string{"one", "two"}) {
		t.Errorf("speedup: %s (%s) from %v", v.Verdict, v.Reason, v.Runs)
	}
}

func TestJudgeOnlyItsExperiment(t *testing.T) {
	r := add(newRun("r1", "celeron-2.4", "host", 0), "proc", "ms", nil, 1)
	ratio := &contract.RatioClaim{Numerator: "proc", Denominator: "proc", Min: 1}
	cs := []results.Claim{
		results.Claim{Claim: contract.Claim{ID: "A", Ratio: ratio}, Plugin: "p", Bench: "e"}.WithKind(),
		results.Claim{Claim: contract.Claim{ID: "B", Ratio: ratio}, Plugin: "p", Bench: "other"}.WithKind(),
		results.Claim{Claim: contract.Claim{ID: "C", Ratio: ratio}, Plugin: "q", Bench: "e"}.WithKind(),
	}
	rclaims.Judge(r, cs, nil, nil)
	if len(r.Verdicts) != 1 || r.Verdicts[0].Claim != "A" {
		t.Errorf("verdicts = %+v, want only claim A's", r.Verdicts)
	}
}

// Verdicts survive the store, the document says its schema version, and
// a document written before claims (schema 1, a real result file as lab
// wrote it) still loads.
func TestSchemaVersions(t *testing.T) {
	r := fixture.Result()
	c := results.Claim{Claim: contract.Claim{ID: "E2.1", Statement: "fork is not cheap",
		Ratio: &contract.RatioClaim{Numerator: fixture.MetricForkWait, Denominator: fixture.MetricThreadJoin, Min: 4.5}},
		Plugin: "forkbench", Bench: "forktime"}.WithKind()
	rclaims.Judge(r, []results.Claim{c}, nil, nil)
	dir := t.TempDir()
	path, err := results.Save(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := results.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Schema != results.SchemaVersion || !reflect.DeepEqual(back.Verdicts, r.Verdicts) || len(back.Verdicts) != 1 {
		t.Errorf("after a round trip: schema %d, verdicts %+v; want %d, %+v", back.Schema, back.Verdicts, results.SchemaVersion, r.Verdicts)
	}

	old, err := results.Load(filepath.Join("testdata", "schema1-create.json"))
	if err != nil {
		t.Fatalf("a schema 1 result does not load: %v", err)
	}
	if old.Schema != 0 || old.Verdicts != nil || old.Experiment != "create" || len(old.Samples) != 6 || len(old.Comparisons) == 0 {
		t.Errorf("schema 1 result loaded as %+v", old)
	}
	var buf strings.Builder
	if err := render.WriteSummary(&buf, old, false, render.Notes{}); err != nil || !strings.Contains(buf.String(), "none declared for this experiment") {
		t.Errorf("a schema 1 result renders as (%v):\n%s", err, buf.String())
	}

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(dir, "newer.json")
	if err := os.WriteFile(newer, []byte(strings.Replace(string(b), `"schema": 2`, `"schema": 99`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Load(newer); err == nil || !strings.Contains(err.Error(), "schema version 99 is newer") {
		t.Errorf("Load of a newer schema = %v, want it refused", err)
	}
}

// TestJudgeSpeedupPerMode: E1.8a's shape. One run a profile at mode=both
// measures both modes, its samples labelled mode=process and
// mode=thread; the scope's sweep key mode takes its points from those
// labels, so each mode is a point of the speedup, decided apart.
func TestJudgeSpeedupPerMode(t *testing.T) {
	c := claim(contract.Claim{Scope: &contract.Scope{Profiles: []string{"xeon5130-1core", "xeon5130-2core"}, Clocks: []string{"host"},
		Params: l("count", "5"), Sweep: &contract.ScopeSweep{Key: "mode", Points: []string{"process", "thread"}, Required: []string{"process", "thread"}}},
		Speedup: &contract.SpeedupClaim{Metric: "real_s", Baseline: "xeon5130-1core", Profile: "xeon5130-2core", Min: 1.5, Max: ptr(2.5)}})
	run := func(id, profile string, min int, process, thread []float64) *results.Result {
		r := newRun(id, profile, "host", min)
		r.Parameters["mode"], r.Parameters["count"] = "both", "5"
		add(r, "real_s", "s", l("mode", "process"), process...)
		return add(r, "real_s", "s", l("mode", "thread"), thread...)
	}
	one := []float64{2.0, 2.1, 1.9, 2.05, 2.02}
	two := []float64{1.0, 1.02, .98, 1.01, 1.0}
	v := judge(c, rclaims.Options{}, run("one", "xeon5130-1core", 0, one, one), run("two", "xeon5130-2core", 1, two, two))
	if v.Verdict != results.Reproduced || !strings.Contains(v.Reason, "process") || !strings.Contains(v.Reason, "thread") || len(v.OutOfScope) != 0 {
		t.Errorf("both modes twice as fast: %s: %s (out of scope %v)", v.Verdict, v.Reason, v.OutOfScope)
	}
	// Threads no faster on two cores: refuted at that point alone.
	v = judge(c, rclaims.Options{}, run("one", "xeon5130-1core", 0, one, one), run("two", "xeon5130-2core", 1, two, one))
	if v.Verdict != results.NotReproduced || !strings.Contains(v.Reason, "thread") {
		t.Errorf("threads no faster: %s: %s", v.Verdict, v.Reason)
	}
}

// A variant's stratum says which kernel it ran: the claim's fidelity note
// is written for its own profile's kernel (TestJudgeNotes); a profile
// that is not a variant adds nothing, and a variant that did not decide
// is not named.
func TestJudgeVariantKernel(t *testing.T) {
	ps := rclaims.Profiles{
		"celeron-2.4":              {},
		"celeron-2.4-linux-2.6.32": {VariantOf: "celeron-2.4", Kernel: "upstream Linux 2.6.32.28 instead of Linux 2.4.8"},
	}
	c := claim(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "proc_ms", Denominator: "thr_ms", Min: 4.5},
		Scope: &contract.Scope{Profiles: []string{"celeron-2.4"}, Variants: true}, Fidelity: "Linux 6.1's fork"})
	base := ratioRun("base", "celeron-2.4", "host", 0, times(5.02, noise...))
	old := ratioRun("old", "celeron-2.4-linux-2.6.32", "host", 0, times(2.07, noise...))
	v := rclaims.JudgeStore([]results.Claim{c}, []*results.Result{base, old}, ps, rclaims.Options{})[0].Judged
	if v.Verdict != results.KernelDependent || !strings.HasSuffix(v.Reason, "Fidelity: Linux 6.1's fork. On celeron-2.4-linux-2.6.32 the kernel is upstream Linux 2.6.32.28 instead of Linux 2.4.8") {
		t.Errorf("base R + 2.6.32 NR: %s (%s)", v.Verdict, v.Reason)
	}
	v = rclaims.JudgeStore([]results.Claim{c}, []*results.Result{base}, ps, rclaims.Options{})[0].Judged
	if strings.Contains(v.Reason, "the kernel is") {
		t.Errorf("no variant ran, yet: %s", v.Reason)
	}
}

// TestJudgeRefusesNonFinite: finite samples whose ratio is not a finite
// number (1e308 ms over 1e-300 ms: +Inf) decide nothing, whatever the
// rule would have read off them: the stratum is inconclusive, its reason
// names the number, and the status marshals (issue 31: such a store made
// `lab claims show E1.6` say "reproduced ... = +Inf" and `lab claims
// --json` fail).
func TestJudgeRefusesNonFinite(t *testing.T) {
	ratio := claim(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "proc_ms", Denominator: "thr_ms", Min: 10}})
	huge := newRun("r", "celeron-2.4", "host", 0)
	add(huge, "proc_ms", "ms", nil, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308)
	add(huge, "thr_ms", "ms", nil, 1e-300, 1e-300, 1e-300, 1e-300, 1e-300, 1e-300)
	checkJudged(t, []judgeCase{
		{"ratio", ratio, []*results.Result{huge}, false, results.Inconclusive,
			[]string{"refused", "proc_ms / thr_ms", "+Inf", "not a finite number"}},
	})
	// Negative times have no ratio: the reason says they were left out,
	// not only that more repeats are needed (issue 31: "--repeat 5 or
	// more" on a run that had 6).
	neg := newRun("n", "celeron-2.4", "host", 0)
	add(neg, "proc_ms", "ms", nil, 5, 5, 5, 5, 5, 5)
	add(neg, "thr_ms", "ms", nil, -1, -1, -1, -1, -1, -1)
	checkJudged(t, []judgeCase{
		{"negative", ratio, []*results.Result{neg}, false, results.Inconclusive,
			[]string{"6 pairs left out, a value not above 0 (first: run n repeat 0: 5 over -1)"}},
	})
	v := judge(ratio, rclaims.Options{}, huge)
	for _, n := range append(v.Numbers, v.Strata[0].Numbers...) {
		if math.IsInf(n.Value, 0) || math.IsNaN(n.Value) {
			t.Errorf("number %s = %v, want only finite numbers", n.Name, n.Value)
		}
	}
}
