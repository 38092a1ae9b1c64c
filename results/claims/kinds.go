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
	// 1 + m, not Log1p: the bound as the claim states it (1.1), so that
	// a ratio of exactly 1.1 ties with it and is dropped as a tie.
	l := math.Log(1 + m)
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
		n, plural(n, "pair", "pairs"), claimed) + leftOut(pairs)
	return settle(base, tests, nums, stats.MinSignedRankN(stats.Alpha, refuting(tests)), repeatsShort("pairs"))
}

// leftOut says which pairs have no ratio (a value not above 0: a time
// cannot be), "" when none: a rule short of pairs for that reason must
// not only ask for more repeats.
func leftOut(pairs []Pair) string {
	var bad []Pair
	for _, p := range pairs {
		if !(p.Num > 0 && p.Den > 0) {
			bad = append(bad, p)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	slices.SortFunc(bad, func(a, b Pair) int { return compareKeys(a.Key, b.Key) })
	f := bad[0]
	return fmt.Sprintf("; %d %s left out, a value not above 0 (first: run %s repeat %d%s: %s over %s)", len(bad), plural(len(bad), "pair", "pairs"),
		f.Run, f.Repeat, at(f.Point), results.FormatValue(f.Num), results.FormatValue(f.Den))
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

// OrderRule is "each of Above is more than Min times each of Below, and
// each of Pairs' Above more than Min times its Below": series named by
// the values of Label.
type OrderRule struct {
	Label        string
	Above, Below []string
	// Pairs are further (above, below) pairs, for an order the source
	// separates only pair by pair (E5.2b).
	Pairs [][2]string
	Min   float64
}

// pairs are every (above, below) pair of the rule once, sorted.
func (r OrderRule) pairs() [][2]string {
	var out [][2]string
	for _, a := range r.Above {
		for _, b := range r.Below {
			out = append(out, [2]string{a, b})
		}
	}
	out = append(out, r.Pairs...)
	slices.SortFunc(out, func(x, y [2]string) int {
		if c := comparePoints(x[0], y[0]); c != 0 {
			return c
		}
		return comparePoints(x[1], y[1])
	})
	return slices.Compact(out)
}

// Order decides an order (§1.6): each (above, below) pair a paired ratio
// test against Min at each point, repeats paired by key, the pairs'
// refuting tests under Holm. values holds each series' samples by its
// Label value.
func Order(values map[string][]Value, r OrderRule) Decision {
	pairs := r.pairs()
	lo := &bound{math.Log(r.Min), results.FormatValue(r.Min)}
	var tests []Test
	var nums []results.Number
	var ratios []string
	for _, ab := range pairs {
		a, b := ab[0], ab[1]
		matched := pairUp(values[a], values[b])
		what := fmt.Sprintf("%s=%s / %s=%s", r.Label, a, r.Label, b)
		points, groups := byPoint(matched, func(p Pair) Key { return p.Key })
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
	base := fmt.Sprintf("%d %s above %s (medians of per-repeat ratios: %s)", len(pairs),
		plural(len(pairs), "pair", "pairs"), results.FormatValue(r.Min), strings.Join(ratios, ", "))
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
