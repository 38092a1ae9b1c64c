package claims

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"lab/results"
	"lab/results/stats"
)

// CrossoverRule is "First and Second cross inside the band [Band[0],
// Band[1]] of Sweep": First below Second before the band and above after
// it, or (NotAbove) not above it by more than Margin before.
type CrossoverRule struct {
	First, Second, Sweep string
	Band                 [2]float64
	NotAbove             bool
	// Margin is NotAbove's "close" margin (0.10: the convention).
	Margin float64
}

// Crossover decides a crossing inside a band (§1.3) from pairs of First
// (Num) and Second (Den) keyed by sweep point. Each point at or before
// the band's start that shows First significantly above Second (beyond
// the margin, for NotAbove), and each point at or after its end that
// shows First still below, refutes, under Holm over those points. The
// band's edges confirm: First below Second (not above it beyond the
// margin) at the start, above it at the end. Points inside the band are
// reported, with a crossing interpolated from the medians, never tested.
func Crossover(pairs []Pair, r CrossoverRule) Decision {
	points, groups := byPoint(pairs, func(p Pair) Key { return p.Key })
	a, b := r.Band[0], r.Band[1]
	what := r.First + " / " + r.Second
	xs := make([]float64, len(points))
	outside := 0
	for i, p := range points {
		x, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return Decision{Verdict: results.Inconclusive, Reason: fmt.Sprintf("sweep point %s=%q is not a number", r.Sweep, p)}
		}
		xs[i] = x
		if x <= a || x >= b {
			outside++
		}
	}
	need := stats.MinSignedRankN(stats.Alpha, max(outside, 1))
	before := 0.0
	beforeText := r.First + " below " + r.Second
	if r.NotAbove {
		before = math.Log(1 + r.Margin)
		beforeText = fmt.Sprintf("%s not above %s by %s%%", r.First, r.Second, results.FormatValue(100*r.Margin))
	}
	var tests []Test
	var nums []results.Number
	var meds []string
	haveA, haveB := false, false
	for i, p := range points {
		x, d := xs[i], logRatios(groups[p])
		pt := r.Sweep + "=" + p
		if x <= a {
			over := r.First + " above " + r.Second
			if r.NotAbove {
				over = fmt.Sprintf("%s above %s by more than %s%%", r.First, r.Second, results.FormatValue(100*r.Margin))
			}
			tests = append(tests, srTest(fmt.Sprintf("%s at %s, at or before the band", over, pt), true, d, before, true))
		}
		if x >= b {
			tests = append(tests, srTest(fmt.Sprintf("%s still below %s at %s, at or after the band", r.First, r.Second, pt), true, d, 0, false))
		}
		if x == a {
			haveA = true
			tests = append(tests, srTest(fmt.Sprintf("%s at %s", beforeText, pt), false, d, before, false))
		}
		if x == b {
			haveB = true
			tests = append(tests, srTest(fmt.Sprintf("%s above %s at %s", r.First, r.Second, pt), false, d, 0, true))
		}
		if len(d) > 0 {
			meds = append(meds, results.FormatValue(expMedian(d))+" at "+p)
			nums = append(nums, results.Number{Name: "median " + what + " at " + pt, Value: expMedian(d), Unit: "x"})
		}
		nums = append(nums, results.Number{Name: "pairs at " + pt, Value: float64(len(d))})
	}
	base := fmt.Sprintf("%s over %s: %s (medians of per-repeat ratios), claimed crossing in [%s, %s]", what, r.Sweep,
		strings.Join(meds, ", "), results.FormatValue(a), results.FormatValue(b))
	if c, ok := interpolated(xs, points, groups); ok {
		base += ", interpolated near " + results.FormatValue(c)
		nums = append(nums, results.Number{Name: "interpolated crossing", Value: c})
	}
	d := settle(base, tests, nums, need, repeatsShort("pairs"))
	if d.Verdict == results.NotReproduced || haveA && haveB {
		return d
	}
	var lack []string
	if !haveA {
		lack = append(lack, results.FormatValue(a))
	}
	if !haveB {
		lack = append(lack, results.FormatValue(b))
	}
	d.Verdict = results.Inconclusive
	d.Reason = fmt.Sprintf("%s: the sweep lacks band %s %s (run with --sweep %s including %s, --repeat %d or more)", base,
		plural(len(lack), "point", "points"), strings.Join(lack, " and "), r.Sweep, strings.Join(lack, ","), need)
	return d
}

// interpolated is where the medians' log ratio first goes from at or
// below 0 to above it, linearly between the two points: a number for the
// reason, never a decision.
func interpolated(xs []float64, points []string, groups map[string][]Pair) (float64, bool) {
	prev := -1
	var dPrev float64
	for i, p := range points {
		l := logRatios(groups[p])
		if len(l) == 0 {
			continue
		}
		d := stats.Median(l)
		if prev >= 0 && dPrev <= 0 && d > 0 {
			return xs[prev] + (xs[i]-xs[prev])*(-dPrev)/(d-dPrev), true
		}
		prev, dPrev = i, d
	}
	return 0, false
}
