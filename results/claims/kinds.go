package claims

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"lab/results"
	"lab/results/stats"
)

// The rule kinds of docs/proposals/verdicts.md §1 as pure functions of
// their evidence: each builds one-sided tests (signed-rank on paired log
// ratios or one-sample values, Mann-Whitney on the logs of two profiles'
// samples), and settle decides from them as §0 says. Crossover and crash
// are in crossover.go and crash.go.

// bound is one bound of a rule on the test's scale (a log, for ratios),
// with the words the reason shows it in.
type bound struct {
	c    float64
	text string
}

// bandTests are the tests of "d lies above lo (and below hi)" at one
// point: each bound confirmed by its own tail and refuted by the other.
func bandTests(what, point string, d []float64, lo, hi *bound) []Test {
	var tests []Test
	if lo != nil {
		tests = append(tests,
			srTest(fmt.Sprintf("%s above %s%s", what, lo.text, at(point)), false, d, lo.c, true),
			srTest(fmt.Sprintf("%s below %s%s", what, lo.text, at(point)), true, d, lo.c, false))
	}
	if hi != nil {
		tests = append(tests,
			srTest(fmt.Sprintf("%s below %s%s", what, hi.text, at(point)), false, d, hi.c, false),
			srTest(fmt.Sprintf("%s above %s%s", what, hi.text, at(point)), true, d, hi.c, true))
	}
	return tests
}

// logBounds are b on the log scale.
func logBounds(b Bounds) (lo, hi *bound) {
	if b.Min != nil {
		lo = &bound{math.Log(*b.Min), results.FormatValue(*b.Min)}
	}
	if b.Max != nil {
		hi = &bound{math.Log(*b.Max), results.FormatValue(*b.Max)}
	}
	return lo, hi
}

// marginBounds are the bounds of "within the margin m" on the log scale:
// 1/(1+m) and, unless lower only, 1+m.
func marginBounds(m float64, lower bool) (lo, hi *bound) {
	l := math.Log1p(m)
	lo = &bound{-l, results.FormatValue(1 / (1 + m))}
	if !lower {
		hi = &bound{l, results.FormatValue(1 + m)}
	}
	return lo, hi
}

// perPoint formats one number a point: "12.3" for one point, "8 at 5,
// 12 at 1000" for several.
func perPoint(points []string, f func(p string) string) string {
	if len(points) == 1 {
		return f(points[0])
	}
	parts := make([]string, len(points))
	for i, p := range points {
		parts[i] = f(p) + " at " + p
	}
	return strings.Join(parts, ", ")
}

// noEvidence is the decision on an empty set of evidence.
func noEvidence(what string, need int, how string) Decision {
	return Decision{Verdict: results.Inconclusive, Need: need,
		Reason: fmt.Sprintf("no %s in scope (%s)", what, how)}
}

// RatioRule is "Num / Den within Bounds" within a run, at every point of
// the evidence.
type RatioRule struct {
	// Num and Den name the two series in the reason.
	Num, Den string
	Bounds
}

// Ratio decides a ratio within a run (§1.1): a paired signed-rank test of
// the per-repeat log ratios against each bound at each point, the points'
// and bounds' refuting tests under Holm.
func Ratio(pairs []Pair, r RatioRule) Decision {
	lo, hi := logBounds(r.Bounds)
	return pairedBand(pairs, r.Num+" / "+r.Den, r.Bounds.String(), lo, hi)
}

// pairedBand is Ratio and paired Equivalence: the log ratios of each
// point against lo and hi.
func pairedBand(pairs []Pair, what, claimed string, lo, hi *bound) Decision {
	bounds := 0
	if lo != nil {
		bounds++
	}
	if hi != nil {
		bounds++
	}
	points, groups := byPoint(pairs, func(p Pair) Key { return p.Key })
	need := stats.MinSignedRankN(stats.Alpha, bounds*max(len(points), 1))
	if len(points) == 0 {
		return noEvidence("pairs of "+what, need, fmt.Sprintf("run with --repeat %d or more", need))
	}
	var tests []Test
	var nums []results.Number
	n := 0
	for _, p := range points {
		d := logRatios(groups[p])
		n += len(d)
		tests = append(tests, bandTests(what, p, d, lo, hi)...)
		if len(d) > 0 {
			nums = append(nums, results.Number{Name: "median " + what + at(p), Value: expMedian(d), Unit: "x"})
		}
		nums = append(nums, results.Number{Name: "pairs" + at(p), Value: float64(len(d))})
	}
	base := fmt.Sprintf("%s = %s (median of per-repeat ratios, %d %s), claimed %s", what,
		perPoint(points, func(p string) string { return results.FormatValue(expMedian(logRatios(groups[p]))) }),
		n, plural(n, "pair", "pairs"), claimed)
	return settle(base, tests, nums, stats.MinSignedRankN(stats.Alpha, refuting(tests)), repeatsShort("pairs"))
}

// RangeRule is "Metric within Bounds" for one value a repeat.
type RangeRule struct {
	Metric string
	Bounds
	// Linear compares x - b (shares, differences); otherwise ln(x/b)
	// (positive counts, sizes, times).
	Linear bool
}

// Range decides one value a repeat against fixed bounds (§1.2): a
// one-sample signed-rank test against each bound at each point.
func Range(values []Value, r RangeRule) Decision {
	return rangeOf(values, r, "")
}

func rangeOf(values []Value, r RangeRule, note string) Decision {
	var lo, hi *bound
	if r.Linear {
		if r.Min != nil {
			lo = &bound{*r.Min, results.FormatValue(*r.Min)}
		}
		if r.Max != nil {
			hi = &bound{*r.Max, results.FormatValue(*r.Max)}
		}
	} else {
		lo, hi = logBounds(r.Bounds)
	}
	points, groups := byPoint(values, func(v Value) Key { return v.Key })
	bounds := len(slices.DeleteFunc([]*bound{lo, hi}, func(b *bound) bool { return b == nil }))
	if len(points) == 0 {
		need := stats.MinSignedRankN(stats.Alpha, bounds)
		return noEvidence("samples of "+r.Metric, need, fmt.Sprintf("run with --repeat %d or more", need))
	}
	var tests []Test
	var nums []results.Number
	n := 0
	for _, p := range points {
		d := xs(groups[p])
		if !r.Linear {
			d = logs(groups[p])
		}
		n += len(d)
		tests = append(tests, bandTests(r.Metric, p, d, lo, hi)...)
		nums = append(nums, results.Number{Name: "median " + r.Metric + at(p), Value: stats.Median(xs(groups[p]))},
			results.Number{Name: "samples" + at(p), Value: float64(len(d))})
	}
	base := fmt.Sprintf("median %s %s (%d %s%s), claimed %s", r.Metric,
		perPoint(points, func(p string) string { return results.FormatValue(stats.Median(xs(groups[p]))) }),
		n, plural(n, "sample", "samples"), note, r.Bounds)
	return settle(base, tests, nums, stats.MinSignedRankN(stats.Alpha, refuting(tests)), repeatsShort("samples"))
}

// Part is one repeat of a derived share: Of / (Of + Rest), as sys_s of
// sys_s + user_s.
type Part struct {
	Key
	Of, Rest float64
}

// Share decides a derived share against fixed bounds, on the linear
// scale (§1.2). A repeat with both parts 0 (below rusage's resolution)
// is dropped, and the reason counts it.
func Share(parts []Part, r RangeRule) Decision {
	r.Linear = true
	var values []Value
	dropped := 0
	for _, p := range parts {
		if p.Of+p.Rest == 0 {
			dropped++
			continue
		}
		values = append(values, Value{Key: p.Key, X: p.Of / (p.Of + p.Rest)})
	}
	note := ""
	if dropped > 0 {
		note = fmt.Sprintf("; %d %s with both parts 0 dropped", dropped, plural(dropped, "repeat", "repeats"))
	}
	d := rangeOf(values, r, note)
	d.Numbers = append(d.Numbers, results.Number{Name: "repeats dropped", Value: float64(dropped)})
	return d
}

// EquivalenceRule is "Num about the same as Den" within a margin (the
// "close" convention: 0.10), both ways, or only the lower side ("no
// advantage for Num", "Num no faster").
type EquivalenceRule struct {
	Num, Den string
	Margin   float64
	Lower    bool
}

func (e EquivalenceRule) claimed() string {
	if e.Lower {
		return fmt.Sprintf("at least %s (no advantage beyond %s%%)", results.FormatValue(1/(1+e.Margin)), results.FormatValue(100*e.Margin))
	}
	return fmt.Sprintf("in [%s, %s] (within %s%%)", results.FormatValue(1/(1+e.Margin)), results.FormatValue(1+e.Margin), results.FormatValue(100*e.Margin))
}

// Equivalence decides "about the same" within a run (§1.7): two one-sided
// paired tests (TOST) against the margin's bounds at each point; only a
// difference significantly beyond the margin refutes.
func Equivalence(pairs []Pair, e EquivalenceRule) Decision {
	lo, hi := marginBounds(e.Margin, e.Lower)
	return pairedBand(pairs, e.Num+" / "+e.Den, e.claimed(), lo, hi)
}

// EquivalenceUnpaired is Equivalence between two profiles' samples
// (E1.8b): one-sided Mann-Whitney tests on the logs.
func EquivalenceUnpaired(num, den []Value, e EquivalenceRule) Decision {
	lo, hi := marginBounds(e.Margin, e.Lower)
	return unpairedBand(num, den, e.Num, e.Den, e.claimed(), lo, hi)
}

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

// OrderRule is "each of Above is more than Min times each of Below":
// series named by the values of Label.
type OrderRule struct {
	Label        string
	Above, Below []string
	Min          float64
}

// Order decides an order (§1.6): each (above, below) pair a paired ratio
// test against Min at each point, repeats paired by key, the pairs'
// refuting tests under Holm. values holds each series' samples by its
// Label value.
func Order(values map[string][]Value, r OrderRule) Decision {
	above := slices.SortedFunc(slices.Values(r.Above), comparePoints)
	below := slices.SortedFunc(slices.Values(r.Below), comparePoints)
	lo := &bound{math.Log(r.Min), results.FormatValue(r.Min)}
	var tests []Test
	var nums []results.Number
	var ratios []string
	for _, a := range above {
		for _, b := range below {
			pairs := pairUp(values[a], values[b])
			what := fmt.Sprintf("%s=%s / %s=%s", r.Label, a, r.Label, b)
			points, groups := byPoint(pairs, func(p Pair) Key { return p.Key })
			if len(points) == 0 {
				tests = append(tests, bandTests(what, "", nil, lo, nil)...)
				ratios = append(ratios, what+" none")
			}
			for _, p := range points {
				d := logRatios(groups[p])
				tests = append(tests, bandTests(what, p, d, lo, nil)...)
				ratios = append(ratios, fmt.Sprintf("%s %s%s", what, results.FormatValue(expMedian(d)), at(p)))
				if len(d) > 0 {
					nums = append(nums, results.Number{Name: "median " + what + at(p), Value: expMedian(d), Unit: "x"})
				}
				nums = append(nums, results.Number{Name: "pairs " + what + at(p), Value: float64(len(d))})
			}
		}
	}
	base := fmt.Sprintf("%d %s above %s (medians of per-repeat ratios: %s)", len(above)*len(below),
		plural(len(above)*len(below), "pair", "pairs"), results.FormatValue(r.Min), strings.Join(ratios, ", "))
	return settle(base, tests, nums, stats.MinSignedRankN(stats.Alpha, refuting(tests)), repeatsShort("pairs"))
}

// pairUp pairs num's and den's values of the same key.
func pairUp(num, den []Value) []Pair {
	byKey := map[Key]float64{}
	for _, v := range den {
		byKey[v.Key] = v.X
	}
	var out []Pair
	for _, v := range num {
		if d, ok := byKey[v.Key]; ok {
			out = append(out, Pair{Key: v.Key, Num: v.X, Den: d})
		}
	}
	return out
}

// DiffRow is one repeat of a ratio of differences: A, B and the baseline
// Z measured in the same run and repeat; Point names the B it is (the
// design K of E5.1).
type DiffRow struct {
	Key
	A, B, Z float64
}

// DiffRatioRule is "(A - Z) at least Factor times (B - Z)".
type DiffRatioRule struct {
	A, B, Z string
	Factor  float64
}

// DiffRatio decides a ratio of differences (§1.8), linearly per repeat:
// the denominator D = B - Z must be significantly above 0 (else
// inconclusive, never a negative factor), then e = (A - Z) - Factor*D is
// tested against 0 both ways. A refutation needs both, so its p-value is
// the larger of the two (an intersection-union test); refutations are
// under Holm over the points.
func DiffRatio(rows []DiffRow, r DiffRatioRule) Decision {
	points, groups := byPoint(rows, func(d DiffRow) Key { return d.Key })
	need := stats.MinSignedRankN(stats.Alpha, max(len(points), 1))
	den := fmt.Sprintf("%s - %s", r.B, r.Z)
	if len(points) == 0 {
		return noEvidence("repeats of "+den, need, fmt.Sprintf("run with --repeat %d or more", need))
	}
	var tests []Test
	var nums []results.Number
	var ratios, flat, negative []string
	for _, p := range points {
		var ds, es, nums2 []float64
		for _, row := range groups[p] {
			ds = append(ds, row.B-row.Z)
			es = append(es, (row.A-row.Z)-r.Factor*(row.B-row.Z))
			nums2 = append(nums2, row.A-row.Z)
		}
		pre := srTest(den+" above 0"+at(p), false, ds, 0, true)
		neg := srTest(den+" below 0"+at(p), false, ds, 0, false)
		what := fmt.Sprintf("(%s - %s) - %s x (%s)", r.A, r.Z, results.FormatValue(r.Factor), den)
		conf := srTest(what+" above 0"+at(p), false, es, 0, true)
		ref := srTest(what+" below 0"+at(p), true, es, 0, false)
		ref.P = math.Max(ref.P, pre.P)
		ref.N = min(ref.N, pre.N)
		tests = append(tests, pre, conf, ref)
		medD := stats.Median(ds)
		nums = append(nums, results.Number{Name: "median " + den + at(p), Value: medD},
			results.Number{Name: "p " + den + " below 0" + at(p), Value: neg.P},
			results.Number{Name: "repeats" + at(p), Value: float64(len(ds))})
		switch {
		case pre.P <= stats.Alpha:
			ratio := stats.Median(nums2) / medD
			ratios = append(ratios, results.FormatValue(ratio)+at(p))
			nums = append(nums, results.Number{Name: "ratio of medians" + at(p), Value: ratio, Unit: "x"})
		case neg.P <= stats.Alpha:
			negative = append(negative, fmt.Sprintf("median %s%s (%s..%s), p = %s", results.FormatValue(medD), at(p),
				results.FormatValue(slices.Min(ds)), results.FormatValue(slices.Max(ds)), formatP(neg.P)))
		default:
			flat = append(flat, fmt.Sprintf("median %s%s (%s..%s), p = %s", results.FormatValue(medD), at(p),
				results.FormatValue(slices.Min(ds)), results.FormatValue(slices.Max(ds)), formatP(pre.P)))
		}
	}
	base := fmt.Sprintf("(%s - %s) / (%s) claimed at least %s", r.A, r.Z, den, results.FormatValue(r.Factor))
	if len(ratios) > 0 {
		base += ", ratio of medians " + strings.Join(ratios, ", ")
	}
	d := settle(base, tests, nums, stats.MinSignedRankN(stats.Alpha, refuting(tests)), repeatsShort("repeats"))
	if d.Verdict == results.Inconclusive && !strings.Contains(d.Reason, "too few") && len(flat)+len(negative) > 0 {
		var why []string
		if len(negative) > 0 {
			why = append(why, fmt.Sprintf("%s at most 0: %s costs no more than %s, no factor (%s)", den, r.B, r.Z, strings.Join(negative, "; ")))
		}
		if len(flat) > 0 {
			why = append(why, fmt.Sprintf("the denominator %s is within its noise (%s)", den, strings.Join(flat, "; ")))
		}
		d.Reason = base + ": " + strings.Join(why, "; ")
	}
	return d
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
		shifted[i] = v + math.Log1p(r.Margin)
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
