package claims_test

import (
	"strconv"
	"testing"

	"lab/plugins/contract"
	"lab/results"
)

// modeRun is one run whose samples are one metric, real_s, in two series
// told apart by the label mode (plus extra labels on every sample).
func modeRun(extra map[string]string, thread, process []float64) *results.Result {
	l := func(mode string) map[string]string {
		m := map[string]string{"mode": mode}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	return run("r1", "celeron-2.4", "host", series("real_s", "s", l("thread"), thread...), series("real_s", "s", l("process"), process...))
}

func TestRatioClaimOfTwoSeries(t *testing.T) {
	claim := func(labels map[string]string) results.Claim {
		return results.Claim{Claim: contract.Claim{Ratio: &contract.RatioClaim{Numerator: "real_s", Denominator: "real_s", Min: 1, Labels: labels,
			NumeratorLabels: map[string]string{"mode": "thread"}, DenominatorLabels: map[string]string{"mode": "process"}}}}
	}
	slow, fast := repeatVals(2, quiet[:5]...), repeatVals(1, quiet[:5]...)
	checkVerdicts(t, []verdictCase{
		{"threads slower", claim(nil), modeRun(nil, slow, fast), results.Reproduced, []string{"real_s at mode=thread / real_s at mode=process = 2", "above 1"}},
		{"threads faster", claim(nil), modeRun(nil, fast, slow), results.NotReproduced, []string{"= 0.5", "below 1"}},
		// The claim's labels are every side's: count=5 here.
		{"with the point's labels", claim(map[string]string{"count": "5"}), modeRun(map[string]string{"count": "5"}, slow, fast), results.Reproduced, nil},
		// A series is its labels exactly: count=5 samples are not mode=thread alone.
		{"other labels", claim(nil), modeRun(map[string]string{"count": "5"}, slow, fast), results.Inconclusive, []string{"too few samples: 0"}},
	})
}

// modeSweep is a sweep over count of real_s for mode thread (first) and
// process (second), n samples a point.
func modeSweep(n int, thread, process func(x float64) float64) *results.Result {
	r := run("r1", "celeron-2.4", "host")
	for _, x := range []float64{5, 10, 50, 100, 500, 1000, 5000} {
		c := strconv.FormatFloat(x, 'f', -1, 64)
		r.Samples = append(r.Samples, series("real_s", "s", map[string]string{"count": c, "mode": "thread"}, repeatVals(thread(x), quiet[:n]...)...)...)
		r.Samples = append(r.Samples, series("real_s", "s", map[string]string{"count": c, "mode": "process"}, repeatVals(process(x), quiet[:n]...)...)...)
	}
	return r
}

func TestCrossoverClaimOfTwoSeries(t *testing.T) {
	claim := func(lowerBefore bool) results.Claim {
		return results.Claim{Claim: contract.Claim{Crossover: &contract.CrossoverClaim{First: "real_s", Second: "real_s", Sweep: "count", At: ptr(600), Tolerance: 100,
			FirstLabels: map[string]string{"mode": "thread"}, SecondLabels: map[string]string{"mode": "process"}, FirstLowerBefore: lowerBefore}}}
	}
	lineA := func(x float64) float64 { return 1 + 0.01*x }
	lineB := func(x float64) float64 { return 4 + 0.005*x }
	checkVerdicts(t, []verdictCase{
		{"threads faster first", claim(true), modeSweep(4, lineA, lineB), results.Reproduced, []string{"real_s at mode=thread vs real_s at mode=process", "5:<", "5000:>", "crossing near 600"}},
		// Crossing at 600 the other way round: threads slower for small work.
		{"the wrong way round", claim(true), modeSweep(4, lineB, lineA), results.NotReproduced, []string{"crossing near 600", "the wrong way", "mode=thread is higher before it"}},
		{"direction not claimed", claim(false), modeSweep(4, lineB, lineA), results.Reproduced, []string{"crossing near 600"}},
	})
}
