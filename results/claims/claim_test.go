package claims_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/render"

	"lab/internal/fixture"

	rclaims "lab/results/claims"
)

// series, run and ptr are the fixture's, under the short names these
// tests were written with.
var (
	series = fixture.Series
	run    = fixture.Run
	ptr    = fixture.Ptr
)

// repeatVals is v times (1 + noise[i]) for each noise value.
func repeatVals(v float64, noise ...float64) []float64 {
	out := make([]float64, len(noise))
	for i, n := range noise {
		out[i] = v * (1 + n)
	}
	return out
}

var quiet = []float64{0.001, -0.002, 0.003, -0.001, 0.002, 0}

type verdictCase struct {
	name   string
	claim  results.Claim
	run    *results.Result
	want   string
	reason []string // substrings of Reason (and Note)
}

// checkVerdicts decides each case; stores holds the result store of the
// cases that need one (speedups), by name.
func checkVerdicts(t *testing.T, tests []verdictCase, stores ...map[string][]*results.Result) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.claim.WithKind()
			c.ID = "X1.1"
			c.Statement = "a claim"
			var store []*results.Result
			for _, m := range stores {
				store = m[tt.name]
			}
			v := rclaims.Decide(&c, tt.run, store)
			if v.Verdict != tt.want {
				t.Errorf("verdict = %q (%s), want %q", v.Verdict, v.Reason, tt.want)
			}
			for _, s := range tt.reason {
				if !strings.Contains(v.Reason+" "+v.Note, s) {
					t.Errorf("reason %q (note %q) does not say %q", v.Reason, v.Note, s)
				}
			}
			if v.Claim != "X1.1" || v.Kind != c.Kind || v.Rule == "" || v.Statement != "a claim" {
				t.Errorf("verdict does not name its claim, kind, statement and rule: %+v", v)
			}
			if (v.Verdict == results.Reproduced || v.Verdict == results.NotReproduced || v.Verdict == results.NotComparable) && len(v.Numbers) == 0 && c.Kind != contract.KindSpeedup ||
				strings.Contains(v.Reason, "too few") && len(v.Numbers) == 0 {
				t.Errorf("a %s verdict carries no numbers: %+v", v.Verdict, v)
			}
			if v.Decided() && len(v.Runs) == 0 {
				t.Errorf("a %s verdict names no run: %+v", v.Verdict, v)
			}
		})
	}
}

func TestRatioClaim(t *testing.T) {
	ratio := func(lo float64, hi *float64) results.Claim {
		return results.Claim{Claim: contract.Claim{Ratio: &contract.RatioClaim{Numerator: "proc", Denominator: "thr", Min: lo, Max: hi}}}
	}
	both := func(p, th []float64) *results.Result {
		return run("r1", "celeron-2.4", "host", series("proc", "ms", nil, p...), series("thr", "ms", nil, th...))
	}
	thr := repeatVals(0.1, quiet[:5]...)
	failed := both(repeatVals(2, quiet[:5]...), thr)
	failed.Outcome = results.Outcome{Status: "failed", Reason: "the guest died"}
	other := both(repeatVals(2, quiet[:5]...), thr)
	other.Parameters["n"] = "20"
	checkVerdicts(t, []verdictCase{
		{"20x is 10+", ratio(10, nil), both(repeatVals(2, quiet[:5]...), thr), results.Reproduced, []string{"= 20", "above 10", "p = 0.008"}},
		{"5x is not 10+", ratio(10, nil), both(repeatVals(0.5, quiet[:5]...), thr), results.NotReproduced, []string{"= 5", "below 10"}},
		{"in 4.5..84", ratio(4.5, ptr(84)), both(repeatVals(2, quiet[:5]...), thr), results.Reproduced, []string{"above 4.5", "below 84"}},
		{"above 84", ratio(4.5, ptr(84)), both(repeatVals(10, quiet[:5]...), thr), results.NotReproduced, []string{"above 84"}},
		// 10x with 10% noise either way: the threshold is inside the noise.
		{"noise", ratio(10, nil), both(repeatVals(1, 0.1, -0.1, 0.05, -0.05, 0.02), thr), results.Inconclusive, []string{"within the noise", "p = "}},
		{"too few", ratio(10, nil), both(repeatVals(2, quiet[:3]...), repeatVals(0.1, quiet[:3]...)), results.Inconclusive, []string{"too few samples: 3", "at least 4 samples a side", "--repeat 4"}},
		{"no samples", ratio(10, nil), run("r1", "celeron-2.4", "host"), results.Inconclusive, []string{"too few samples: 0"}},
		// A ratio of two times of one run: the clock does not matter.
		{"icount too", ratio(10, nil), func() *results.Result {
			r := both(repeatVals(2, quiet[:5]...), thr)
			r.Machine.Clock = "icount:0"
			return r
		}(), results.Reproduced, nil},
		{"failed run", ratio(10, nil), failed, results.Inconclusive, []string{"the run failed", "the guest died"}},
		{"other params", results.Claim{Claim: contract.Claim{Params: map[string]string{"n": "10"}, Ratio: &contract.RatioClaim{Numerator: "proc", Denominator: "thr", Min: 10}}}, other, results.NotRun, []string{"n=10", "n=20"}},
		{"other profile noted", results.Claim{Claim: contract.Claim{Profile: "p4-2.4", Ratio: &contract.RatioClaim{Numerator: "proc", Denominator: "thr", Min: 10}}}, both(repeatVals(2, quiet[:5]...), thr), results.Reproduced, []string{"ran on profile celeron-2.4, not p4-2.4"}},
	})
}

func TestNearAndRangeClaims(t *testing.T) {
	near := results.Claim{Claim: contract.Claim{Near: &contract.NearClaim{Metric: "proc", Value: 0.18, Tolerance: 0.005, Unit: "ms"}}}
	on := func(clock, accel string, vals ...float64) *results.Result {
		r := run("r1", "celeron-2.4", clock, series("proc", "ms", nil, vals...))
		r.Machine.Accelerator = accel
		return r
	}
	threads := func(lo, hi *float64) results.Claim {
		return results.Claim{Claim: contract.Claim{Range: &contract.RangeClaim{Metric: "threads", Min: lo, Max: hi, Unit: "threads"}}}
	}
	counted := func(vals ...float64) *results.Result {
		return run("r1", "split-3g1g", "host", series("threads", "threads", nil, vals...))
	}
	checkVerdicts(t, []verdictCase{
		{"icount inside", near, on("icount:0", "tcg", repeatVals(0.181, quiet...)...), results.Reproduced, []string{"inside", "one instruction = 2^0 ns"}},
		{"icount above", near, on("icount:0", "tcg", repeatVals(0.217, quiet...)...), results.NotReproduced, []string{"median proc 0.217 ms", "above 0.185", "p = 0.031", "2^0 ns"}},
		{"icount:3", near, on("icount:3", "tcg", repeatVals(0.1, quiet...)...), results.NotReproduced, []string{"below 0.175", "one instruction = 2^3 ns"}},
		{"host clock", near, on("host", "tcg", repeatVals(0.405, quiet...)...), results.NotComparable, []string{"median proc 0.405 ms", "emulation speed", "icount"}},
		{"kvm", near, on("host", "kvm", repeatVals(0.1, quiet...)...), results.NotComparable, []string{"KVM", "this host's CPU"}},
		{"too few", near, on("icount:0", "tcg", repeatVals(0.217, quiet[:5]...)...), results.Inconclusive, []string{"too few samples", "at least 6 samples", "--repeat 6"}},
		// Half the samples above the upper bound, half below: noise.
		{"straddles", near, on("icount:0", "tcg", 0.184, 0.186, 0.183, 0.187, 0.1845, 0.1855), results.Inconclusive, []string{"straddle"}},
		{"µs bounds on ms samples", results.Claim{Claim: contract.Claim{Near: &contract.NearClaim{Metric: "proc", Value: 180, Tolerance: 5, Unit: "µs"}}}, on("icount:0", "tcg", repeatVals(0.181, quiet...)...), results.Reproduced, []string{"0.175..0.185"}},
		{"not a time: any clock", threads(ptr(350), ptr(384)), counted(381, 381, 381, 381, 381, 381), results.Reproduced, []string{"inside"}},
		{"open upper bound", threads(ptr(1000), nil), counted(3055, 3055, 3054, 3055, 3056, 3055), results.Reproduced, nil},
		{"below the range", threads(ptr(350), ptr(384)), counted(300, 301, 299, 300, 300, 302), results.NotReproduced, []string{"below 350"}},
		{"no samples", threads(ptr(350), nil), counted(), results.Inconclusive, []string{"no samples of threads"}},
	})
}

// crossRun is a sweep over count of two curves, first = 1 + 0.01x and
// second = 4 + 0.005x (they cross at x = 600), n samples a point.
func crossRun(n int, first, second func(x float64) float64) *results.Result {
	r := run("r1", "celeron-2.4", "host")
	for _, x := range []float64{5, 10, 50, 100, 500, 1000, 5000} {
		l := map[string]string{"count": strconv.FormatFloat(x, 'f', -1, 64)}
		r.Samples = append(r.Samples, series("thread_s", "s", l, repeatVals(first(x), quiet[:n]...)...)...)
		r.Samples = append(r.Samples, series("process_s", "s", l, repeatVals(second(x), quiet[:n]...)...)...)
	}
	return r
}

func TestCrossoverClaim(t *testing.T) {
	at := func(x, tol float64) results.Claim {
		return results.Claim{Claim: contract.Claim{Crossover: &contract.CrossoverClaim{First: "thread_s", Second: "process_s", Sweep: "count", At: ptr(x), Tolerance: tol}}}
	}
	none := results.Claim{Claim: contract.Claim{Crossover: &contract.CrossoverClaim{First: "thread_s", Second: "process_s", Sweep: "count", None: true}}}
	lineA := func(x float64) float64 { return 1 + 0.01*x }
	lineB := func(x float64) float64 { return 4 + 0.005*x }
	never := func(x float64) float64 { return 10 + 0.02*x }
	// Equal to lineA at 50 and nowhere else.
	touch := func(x float64) float64 {
		if x == 50 {
			return lineA(x)
		}
		return 10 + 0.02*x
	}
	checkVerdicts(t, []verdictCase{
		{"near 600", at(600, 100), crossRun(4, lineA, lineB), results.Reproduced, []string{"crossing near 600", "between 500 and 1000", "5:<", "5000:>"}},
		{"far from 2000", at(2000, 500), crossRun(4, lineA, lineB), results.NotReproduced, []string{"between 500 and 1000", "outside 1500..2500"}},
		{"sweep too coarse", at(1000, 200), crossRun(4, lineA, lineB), results.Inconclusive, []string{"too coarse"}},
		{"none, but they cross", none, crossRun(4, lineA, lineB), results.NotReproduced, []string{"cross near 600"}},
		{"none and none", none, crossRun(4, lineA, never), results.Reproduced, []string{"no crossing"}},
		{"expected 600, never cross", at(600, 100), crossRun(4, lineA, never), results.NotReproduced, []string{"no crossing anywhere in 5..5000"}},
		{"none, touching within the noise", none, crossRun(4, lineA, touch), results.Inconclusive, []string{"50:~", "within the noise"}},
		{"too few", at(600, 100), crossRun(3, lineA, lineB), results.Inconclusive, []string{"too few samples at count=5", "at least 4 samples a side"}},
	})
}

func TestSpeedupClaim(t *testing.T) {
	claim := func(lo float64, hi *float64) results.Claim {
		return results.Claim{Claim: contract.Claim{Speedup: &contract.SpeedupClaim{Metric: "real_s", Baseline: "xeon5130-1core", Profile: "xeon5130-2core", Min: lo, Max: hi}}}
	}
	one := run("one", "xeon5130-1core", "host", series("real_s", "s", nil, repeatVals(2, quiet[:5]...)...))
	two := run("two", "xeon5130-2core", "host", series("real_s", "s", nil, repeatVals(1, quiet[:5]...)...))
	slow := run("two-slow", "xeon5130-2core", "host", series("real_s", "s", nil, repeatVals(1.9, quiet[:5]...)...))
	icount := run("one-icount", "xeon5130-1core", "icount:0", series("real_s", "s", nil, repeatVals(2, quiet[:5]...)...))
	otherParams := run("one-n20", "xeon5130-1core", "host", series("real_s", "s", nil, repeatVals(2, quiet[:5]...)...))
	otherParams.Parameters["n"] = "20"
	modern := run("m", "modern-x86_64", "host", series("real_s", "s", nil, 1))
	stores := map[string][]*results.Result{
		"2x, judged on the 2-core run": {one}, "2x, judged on the 1-core run": {two}, "1.05x is not 1.5x": {one},
		"other parameters do not count": {otherParams}, "different clocks": {icount}, "another profile": {one, two}, "too few": {one},
	}
	checkVerdicts(t, []verdictCase{
		{"2x, judged on the 2-core run", claim(1.5, ptr(2.5)), two, results.Reproduced, []string{"= 2", "above 1.5", "below 2.5"}},
		{"2x, judged on the 1-core run", claim(1.5, ptr(2.5)), one, results.Reproduced, nil},
		{"1.05x is not 1.5x", claim(1.5, nil), slow, results.NotReproduced, []string{"below 1.5"}},
		{"no other run", claim(1.5, nil), two, results.NotRun, []string{"needs a run on xeon5130-1core"}},
		{"other parameters do not count", claim(1.5, nil), two, results.NotRun, nil},
		{"different clocks", claim(1.5, nil), two, results.NotComparable, []string{"different accelerators or clocks"}},
		{"another profile", claim(1.5, nil), modern, results.NotRun, []string{"this run is on modern-x86_64"}},
		{"too few", claim(1.5, nil), run("two3", "xeon5130-2core", "host", series("real_s", "s", nil, 1, 1.01, 0.99)), results.Inconclusive, []string{"too few samples"}},
	}, stores)
	v := rclaims.Decide(ptrClaim(claim(1.5, nil).WithKind()), two, []*results.Result{one})
	if !reflect.DeepEqual(v.Runs, []string{"one", "two"}) {
		t.Errorf("speedup runs = %v, want the baseline's and the other's", v.Runs)
	}
}

func ptrClaim(c results.Claim) *results.Claim { return &c }

func TestCrashClaim(t *testing.T) {
	claim := results.Claim{Claim: contract.Claim{Crash: &contract.CrashClaim{Signal: "SIGSEGV", Param: "workers", From: 350}}}
	at := func(workers, status, reason string) *results.Result {
		r := run("r1", "split-3g1g", "host")
		r.Parameters = map[string]string{"workers": workers}
		r.Outcome = results.Outcome{Status: status, Reason: reason}
		return r
	}
	checkVerdicts(t, []verdictCase{
		{"crashes at 400", claim, at("400", "expected-crash", "repeat 1/1: segmentation fault at thread 382"), results.Reproduced, []string{"crashed with SIGSEGV at workers=400"}},
		{"named by signal", claim, at("350", "expected-crash", "killed by SIGSEGV"), results.Reproduced, nil},
		{"runs to the end at 400", claim, at("400", "ok", ""), results.NotReproduced, []string{"ran to the end at workers=400"}},
		{"another signal", claim, at("400", "expected-crash", "aborted: SIGABRT"), results.NotReproduced, []string{"not with SIGSEGV"}},
		{"no crash below", claim, at("300", "ok", ""), results.Reproduced, []string{"below the claimed size"}},
		{"crash below", claim, at("300", "expected-crash", "segmentation fault"), results.NotReproduced, []string{"crashed below"}},
		{"failed otherwise", claim, at("400", "failed", "timed out"), results.Inconclusive, []string{"timed out"}},
		{"no size", claim, at("many", "ok", ""), results.Inconclusive, []string{"no numeric parameter workers"}},
	})
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func TestJudgeOnlyItsExperiment(t *testing.T) {
	r := run("r1", "celeron-2.4", "host", series("proc", "ms", nil, 1))
	claims := []results.Claim{
		results.Claim{Claim: contract.Claim{ID: "A", Ratio: &contract.RatioClaim{Numerator: "proc", Denominator: "proc", Min: 1}}, Plugin: "p", Bench: "e"}.WithKind(),
		results.Claim{Claim: contract.Claim{ID: "B", Ratio: &contract.RatioClaim{Numerator: "proc", Denominator: "proc", Min: 1}}, Plugin: "p", Bench: "other"}.WithKind(),
		results.Claim{Claim: contract.Claim{ID: "C", Ratio: &contract.RatioClaim{Numerator: "proc", Denominator: "proc", Min: 1}}, Plugin: "q", Bench: "e"}.WithKind(),
	}
	rclaims.Judge(r, claims, nil)
	if len(r.Verdicts) != 1 || r.Verdicts[0].Claim != "A" {
		t.Errorf("verdicts = %+v, want only claim A's", r.Verdicts)
	}
}

// Verdicts survive the store, the document says its schema version, and
// a document written before claims (schema 1, a real result file as lab
// wrote it) still loads.
func TestSchemaVersions(t *testing.T) {
	r := fixture.Result()
	rclaims.Judge(r, fixture.ForkbenchClaims(t, "forktime"), nil)
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
	if err := render.WriteTable(&buf, old); err != nil || !strings.Contains(buf.String(), "none declared for this experiment") {
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

func TestOrderClaim(t *testing.T) {
	order := func(min float64) results.Claim {
		return results.Claim{Claim: contract.Claim{Order: &contract.OrderClaim{Metric: "cpu_s", Label: "design", Above: []string{"1"}, Below: []string{"2", "3"}, Min: min}}}
	}
	designs := func(vals map[string]float64, n int) *results.Result {
		var ss [][]results.Sample
		for d, v := range vals {
			ss = append(ss, series("cpu_s", "s", map[string]string{"design": d}, repeatVals(v, quiet[:n]...)...))
		}
		return run("r1", "p3-450", "host", ss...)
	}
	checkVerdicts(t, []verdictCase{
		{"far above both", order(5), designs(map[string]float64{"1": 20, "2": 2, "3": 3}, 5), results.Reproduced,
			[]string{"all 2 pairs above 5", "the weakest, design=1 over design=3", "= 6.67"}},
		{"above one only", order(5), designs(map[string]float64{"1": 20, "2": 2, "3": 8}, 5), results.NotReproduced,
			[]string{"1 of 2 pairs the other way", "design=1 over design=3", "below 5"}},
		{"plain order", order(1), designs(map[string]float64{"1": 4, "2": 2, "3": 3}, 5), results.Reproduced, []string{"all 2 pairs above 1"}},
		{"a design not run", order(1), designs(map[string]float64{"1": 4, "2": 2}, 5), results.Inconclusive,
			[]string{"1 of 2 pairs undecided", "too few samples: 5 of cpu_s at design=1 and 0 of cpu_s at design=3"}},
		{"too few repeats", order(1), designs(map[string]float64{"1": 4, "2": 2, "3": 3}, 3), results.Inconclusive, []string{"2 of 2 pairs undecided", "--repeat 4"}},
		{"other labels kept apart", results.Claim{Claim: contract.Claim{Order: &contract.OrderClaim{Metric: "cpu_s", Label: "design", Above: []string{"1"}, Below: []string{"2"}, Min: 1,
			Labels: map[string]string{"clients": "peer"}}}}, designs(map[string]float64{"1": 4, "2": 2}, 5), results.Inconclusive, []string{"0 of cpu_s at design=1"}},
	})
}
