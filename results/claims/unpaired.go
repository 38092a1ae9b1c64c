package claims

import (
	"fmt"
	"math"
	"slices"

	"lab/results"
	"lab/results/stats"
)

// The unpaired kinds: two profiles' samples (different VMs, nothing to
// pair), and a trend across points (different sweep points' repeats are
// not pairs either). One-sided Mann-Whitney tests on the logs.

// SpeedupRule is "Base / Fast within Bounds" between two profiles:
// Metric on the Base profile against it on the Fast one.
type SpeedupRule struct {
	Metric, Base, Fast string
	Bounds
}

// Speedup decides a speedup between two profiles (§1.4): unpaired
// one-sided Mann-Whitney tests of ln base against ln fast + ln bound at
// each point, the refuting tails under Holm.
func Speedup(base, fast []Value, r SpeedupRule) Decision {
	lo, hi := logBounds(r.Bounds)
	return unpairedBand(base, fast, r.Metric+" on "+r.Base, r.Metric+" on "+r.Fast, r.Bounds.String(), lo, hi)
}

// unpairedBand is Speedup and unpaired Equivalence: ln x against ln y +
// each bound, at each point either side has.
func unpairedBand(x, y []Value, xName, yName, claimed string, lo, hi *bound) Decision {
	key := func(v Value) Key { return v.Key }
	px, gx := byPoint(x, key)
	py, gy := byPoint(y, key)
	points := slices.Compact(slices.SortedFunc(slices.Values(append(px, py...)), comparePoints))
	what := xName + " / " + yName
	var tests []Test
	var nums []results.Number
	for _, p := range points {
		lx, ly := logs(gx[p]), logs(gy[p])
		for _, b := range []struct {
			b     *bound
			lower bool
		}{{lo, true}, {hi, false}} {
			if b.b == nil {
				continue
			}
			shifted := make([]float64, len(ly))
			for i, v := range ly {
				shifted[i] = v + b.b.c
			}
			// lower: confirmed by x above y*b, refuted by below.
			tests = append(tests,
				rsTest(fmt.Sprintf("%s %s %s%s", what, map[bool]string{true: "above", false: "below"}[b.lower], b.b.text, at(p)), false, lx, shifted, b.lower),
				rsTest(fmt.Sprintf("%s %s %s%s", what, map[bool]string{true: "below", false: "above"}[b.lower], b.b.text, at(p)), true, lx, shifted, !b.lower))
		}
		if len(lx) > 0 && len(ly) > 0 {
			nums = append(nums, results.Number{Name: "ratio of medians" + at(p), Value: stats.Median(xs(gx[p])) / stats.Median(xs(gy[p])), Unit: "x"})
		}
		nums = append(nums, results.Number{Name: "samples of " + xName + at(p), Value: float64(len(lx))},
			results.Number{Name: "samples of " + yName + at(p), Value: float64(len(ly))})
	}
	need := minRankSumN(stats.Alpha, refuting(tests))
	if len(points) == 0 {
		return noEvidence("samples of "+what, need, fmt.Sprintf("run each profile with --repeat %d or more", need))
	}
	base := fmt.Sprintf("%s = %s (ratio of medians, %s)", what,
		perPoint(points, func(p string) string {
			if len(gx[p]) == 0 || len(gy[p]) == 0 {
				return "none"
			}
			return results.FormatValue(stats.Median(xs(gx[p])) / stats.Median(xs(gy[p])))
		}),
		perPoint(points, func(p string) string { return fmt.Sprintf("%d and %d samples", len(gx[p]), len(gy[p])) }))
	base += ", claimed " + claimed
	return settle(base, tests, nums, need, func(tests []Test, need int) string {
		for _, t := range tests {
			if t.N < need {
				return fmt.Sprintf("too few samples a side for %s: %d; %d one-sided rank-sum tests that can refute need %d a side (run each with --repeat %d or more)",
					t.Name, t.N, refuting(tests), need, need)
			}
		}
		return ""
	})
}

// EquivalenceUnpaired is Equivalence between two profiles' samples
// (E1.8b): one-sided Mann-Whitney tests on the logs.
func EquivalenceUnpaired(num, den []Value, e EquivalenceRule) Decision {
	lo, hi := marginBounds(e.Margin, e.Lower)
	return unpairedBand(num, den, e.Num, e.Den, e.claimed(), lo, hi)
}

// TrendRule is "A trends faster than B as Param grows": A/B at the
// largest point more than Margin below A/B at the smallest.
type TrendRule struct {
	A, B, Param string
	Margin      float64
}

// Trend decides a trend (§1.9): the per-repeat log ratios ln(A/B) at the
// largest point, plus ln(1+Margin), against those at the smallest, by a
// one-sided Mann-Whitney test each way. Points between are reported,
// not tested.
func Trend(pairs []Pair, r TrendRule) Decision {
	points, groups := byPoint(pairs, func(p Pair) Key { return p.Key })
	need := minRankSumN(stats.Alpha, 1)
	what := r.A + " / " + r.B
	if len(points) < 2 {
		return Decision{Verdict: results.Inconclusive, Need: need,
			Reason: fmt.Sprintf("%s: %d point(s) of %s; a trend needs two (run with --sweep %s=LOW,HIGH --repeat %d or more)", what, len(points), r.Param, r.Param, need)}
	}
	first, last := points[0], points[len(points)-1]
	lf, ll := logRatios(groups[first]), logRatios(groups[last])
	shifted := make([]float64, len(ll))
	for i, v := range ll {
		shifted[i] = v + math.Log(1+r.Margin)
	}
	drop := fmt.Sprintf("%s at %s=%s %%s than %s%%%% below its value at %s=%s", what, r.Param, last, results.FormatValue(100*r.Margin), r.Param, first)
	tests := []Test{
		rsTest(fmt.Sprintf(drop, "more"), false, shifted, lf, false),
		rsTest(fmt.Sprintf(drop, "less"), true, shifted, lf, true),
	}
	var nums []results.Number
	for _, p := range points {
		if d := logRatios(groups[p]); len(d) > 0 {
			nums = append(nums, results.Number{Name: "median " + what + " at " + r.Param + "=" + p, Value: expMedian(d), Unit: "x"})
		}
	}
	base := fmt.Sprintf("%s over %s: %s (medians of per-repeat ratios)", what, r.Param,
		perPoint(points, func(p string) string { return results.FormatValue(expMedian(logRatios(groups[p]))) }))
	return settle(base, tests, nums, need, func(tests []Test, need int) string {
		for _, t := range tests {
			if t.N < need {
				return fmt.Sprintf("too few pairs at %s=%s or %s=%s: %d and %d; a one-sided rank-sum test needs %d a point (run with --repeat %d or more)",
					r.Param, first, r.Param, last, len(lf), len(ll), need, need)
			}
		}
		return ""
	})
}
