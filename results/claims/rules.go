package claims

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/stats"
)

// rankSide is which way a two-sided rank test came out: +1 when the first sample
// is significantly larger, -1 when significantly smaller, 0 when the
// difference is within the noise.
func rankSide(x, y []float64) (int, float64) {
	t, err := stats.MannWhitneyU(x, y)
	if err != nil {
		return 0, 1
	}
	if t.P >= stats.Alpha {
		return 0, t.P
	}
	if t.U > float64(t.N1*t.N2)/2 {
		return 1, t.P
	}
	return -1, t.P
}

func scaled(y []float64, k float64) []float64 {
	out := make([]float64, len(y))
	for i, v := range y {
		out[i] = v * k
	}
	return out
}

// factorVerdict decides "x is at least lo (and at most hi) times y": a
// Mann-Whitney U test of x against lo*y, and against hi*y.
func factorVerdict(xName, yName string, x, y []float64, lo float64, hi *float64) results.Verdict {
	what := xName + " / " + yName
	if len(x) < MinRankSamples || len(y) < MinRankSamples {
		v := results.Verdict{Verdict: results.Inconclusive, Reason: fmt.Sprintf("too few samples: %d of %s and %d of %s; a %s (run with --repeat %d or more)",
			len(x), xName, len(y), yName, RankRule, MinRankSamples)}
		if len(x) > 0 && len(y) > 0 && stats.Median(y) != 0 {
			v.Numbers = []results.Number{{Name: "ratio of medians", Value: stats.Median(x) / stats.Median(y), Unit: "x"}}
		}
		v.Numbers = append(v.Numbers, results.Number{Name: "samples of " + xName, Value: float64(len(x))}, results.Number{Name: "samples of " + yName, Value: float64(len(y))})
		return v
	}
	mx, my := stats.Median(x), stats.Median(y)
	if my == 0 {
		return results.Verdict{Verdict: results.Inconclusive, Reason: fmt.Sprintf("the median of %s is 0: no ratio", yName)}
	}
	ratio := mx / my
	nums := []results.Number{{Name: "ratio of medians", Value: ratio, Unit: "x"}, {Name: "median " + xName, Value: mx},
		{Name: "median " + yName, Value: my}, {Name: "samples a side", Value: float64(min(len(x), len(y)))},
		{Name: "min factor", Value: lo, Unit: "x"}}
	low, pLow := rankSide(x, scaled(y, lo))
	nums = append(nums, results.Number{Name: "p against min", Value: pLow})
	high, pHigh := -1, 0.0
	if hi != nil {
		high, pHigh = rankSide(x, scaled(y, *hi))
		nums = append(nums, results.Number{Name: "max factor", Value: *hi, Unit: "x"}, results.Number{Name: "p against max", Value: pHigh})
	}
	base := fmt.Sprintf("%s = %s (medians %s / %s, %d and %d samples)", what, results.FormatValue(ratio), results.FormatValue(mx), results.FormatValue(my), len(x), len(y))
	v := results.Verdict{Numbers: nums}
	switch {
	case low < 0:
		v.Verdict, v.Reason = results.NotReproduced, fmt.Sprintf("%s: below %s, p = %s", base, results.FormatValue(lo), formatP(pLow))
	case hi != nil && high > 0:
		v.Verdict, v.Reason = results.NotReproduced, fmt.Sprintf("%s: above %s, p = %s", base, results.FormatValue(*hi), formatP(pHigh))
	case low > 0 && high < 0:
		v.Verdict = results.Reproduced
		v.Reason = fmt.Sprintf("%s: above %s, p = %s", base, results.FormatValue(lo), formatP(pLow))
		if hi != nil {
			v.Reason += fmt.Sprintf(", and below %s, p = %s", results.FormatValue(*hi), formatP(pHigh))
		}
	case low == 0:
		v.Verdict, v.Reason = results.Inconclusive, fmt.Sprintf("%s: not distinguishable from %s within the noise, p = %s >= %g", base, results.FormatValue(lo), formatP(pLow), stats.Alpha)
	default:
		v.Verdict, v.Reason = results.Inconclusive, fmt.Sprintf("%s: not distinguishable from %s within the noise, p = %s >= %g", base, results.FormatValue(*hi), formatP(pHigh), stats.Alpha)
	}
	return v
}

func formatP(p float64) string {
	if p < 0.001 {
		return strconv.FormatFloat(p, 'e', 1, 64)
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// signTest is the two-sided exact sign test of xs against b: how many lie
// above and below (values equal to b are dropped) and the p-value.
func signTest(xs []float64, b float64) (above, below int, p float64) {
	for _, x := range xs {
		switch {
		case x > b:
			above++
		case x < b:
			below++
		}
	}
	n, k := above+below, min(above, below)
	if n == 0 {
		return 0, 0, 1
	}
	// P(X <= k) for X ~ Binomial(n, 1/2).
	var cdf float64
	for i := 0; i <= k; i++ {
		cdf += binom(n, i)
	}
	cdf /= math.Pow(2, float64(n))
	return above, below, math.Min(1, 2*cdf)
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// signSide is +1 when xs lie significantly above b, -1 below, 0 neither.
func signSide(xs []float64, b float64) (int, float64) {
	above, below, p := signTest(xs, b)
	switch {
	case p >= stats.Alpha:
		return 0, p
	case above > below:
		return 1, p
	}
	return -1, p
}

// rangeVerdict decides "metric lies in [lo, hi] (unit)" with a sign test
// against each bound. An absolute time is decided only under icount.
func rangeVerdict(r *results.Result, metric string, labels map[string]string, unit string, lo, hi *float64) results.Verdict {
	xs := r.Values(metric, labels)
	if len(xs) == 0 {
		return results.Verdict{Verdict: results.Inconclusive, Reason: fmt.Sprintf("this run has no samples of %s%s", metric, results.LabelSuffix(labels))}
	}
	su := unitOf(r, metric)
	conv := func(b *float64) (*float64, bool) {
		if b == nil {
			return nil, true
		}
		v, ok := results.ConvertUnit(*b, unit, su)
		return &v, ok
	}
	clo, ok1 := conv(lo)
	chi, ok2 := conv(hi)
	if !ok1 || !ok2 {
		return results.Verdict{Verdict: results.Inconclusive, Reason: fmt.Sprintf("the claim's bounds are in %s, the samples of %s in %s: not convertible", unit, metric, su)}
	}
	med := stats.Median(xs)
	nums := []results.Number{{Name: "median " + metric, Value: med, Unit: su}, {Name: "samples", Value: float64(len(xs))}}
	if clo != nil {
		nums = append(nums, results.Number{Name: "min", Value: *clo, Unit: su})
	}
	if chi != nil {
		nums = append(nums, results.Number{Name: "max", Value: *chi, Unit: su})
	}
	base := fmt.Sprintf("median %s %s %s (%d samples, %s..%s), claimed %s", metric, results.FormatValue(med), su, len(xs),
		results.FormatValue(slices.Min(xs)), results.FormatValue(slices.Max(xs)), boundsText(clo, chi))
	v := results.Verdict{Numbers: nums}
	if results.IsTimeUnit(su) {
		note, ok := ClockNote(r.Machine)
		if !ok {
			v.Verdict, v.Reason = results.NotComparable, base+": "+note
			return v
		}
		v.Note = note
	}
	if len(xs) < MinSignSamples {
		v.Verdict, v.Reason = results.Inconclusive, fmt.Sprintf("%s: too few samples for a %s (run with --repeat %d or more)", base, SignRule, MinSignSamples)
		return v
	}
	low, high := 1, -1
	var pLow, pHigh float64
	if clo != nil {
		low, pLow = signSide(xs, *clo)
		nums = append(nums, results.Number{Name: "p against min", Value: pLow})
	}
	if chi != nil {
		high, pHigh = signSide(xs, *chi)
		nums = append(nums, results.Number{Name: "p against max", Value: pHigh})
	}
	v.Numbers = nums
	switch {
	case low < 0:
		v.Verdict, v.Reason = results.NotReproduced, fmt.Sprintf("%s: below %s, p = %s", base, results.FormatValue(*clo), formatP(pLow))
	case high > 0:
		v.Verdict, v.Reason = results.NotReproduced, fmt.Sprintf("%s: above %s, p = %s", base, results.FormatValue(*chi), formatP(pHigh))
	case low > 0 && high < 0:
		v.Verdict, v.Reason = results.Reproduced, base+": inside"
		if clo != nil {
			v.Reason += ", above " + results.FormatValue(*clo) + " p = " + formatP(pLow)
		}
		if chi != nil {
			v.Reason += ", below " + results.FormatValue(*chi) + " p = " + formatP(pHigh)
		}
	default:
		v.Verdict, v.Reason = results.Inconclusive, base+": the samples straddle a bound (not significant at alpha 0.05)"
	}
	return v
}

// point is one point of a sweep: the two curves' samples there.
type point struct {
	x             float64
	first, second []float64
}

// crossoverVerdict decides where the curves of two metrics over a sweep
// cross. At each point a rank test says which is larger (or neither);
// a crossing is a flip of that order between two points, placed by
// linear interpolation of the medians' difference.
func crossoverVerdict(c *contract.CrossoverClaim, r *results.Result) results.Verdict {
	pts := map[string]*point{}
	firstName, secondName := results.SeriesLabel(c.First, c.FirstLabels), results.SeriesLabel(c.Second, c.SecondLabels)
	for _, s := range r.Samples {
		isFirst := s.Metric == c.First && results.HasLabels(s.Labels, c.FirstLabels)
		isSecond := s.Metric == c.Second && results.HasLabels(s.Labels, c.SecondLabels)
		if !isFirst && !isSecond {
			continue
		}
		sv, ok := s.Labels[c.Sweep]
		if !ok {
			continue
		}
		x, err := strconv.ParseFloat(sv, 64)
		if err != nil {
			return results.Verdict{Verdict: results.Inconclusive, Reason: fmt.Sprintf("sweep label %s=%q is not a number", c.Sweep, sv)}
		}
		p := pts[sv]
		if p == nil {
			p = &point{x: x}
			pts[sv] = p
		}
		if isFirst {
			p.first = append(p.first, s.Value)
		}
		if isSecond {
			p.second = append(p.second, s.Value)
		}
	}
	sweep := slices.SortedFunc(maps.Values(pts), func(a, b *point) int { return cmpFloat(a.x, b.x) })
	if len(sweep) < 2 {
		return results.Verdict{Verdict: results.Inconclusive, Reason: fmt.Sprintf("%d point(s) of the sweep over %s with both %s and %s; a crossover needs at least 2", len(sweep), c.Sweep, firstName, secondName)}
	}
	signs := make([]int, len(sweep))
	var order []string
	for i, p := range sweep {
		if len(p.first) < MinRankSamples || len(p.second) < MinRankSamples {
			return results.Verdict{Verdict: results.Inconclusive, Numbers: []results.Number{{Name: c.Sweep, Value: p.x},
				{Name: "samples of " + firstName, Value: float64(len(p.first))}, {Name: "samples of " + secondName, Value: float64(len(p.second))}}, Reason: fmt.Sprintf("too few samples at %s=%s: %d and %d; a %s (run with --repeat %d or more)",
				c.Sweep, results.FormatValue(p.x), len(p.first), len(p.second), RankRule, MinRankSamples)}
		}
		signs[i], _ = rankSide(p.first, p.second)
		order = append(order, results.FormatValue(p.x)+":"+map[int]string{-1: "<", 0: "~", 1: ">"}[signs[i]])
	}
	orders := fmt.Sprintf("%s vs %s over %s: %s", firstName, secondName, c.Sweep, strings.Join(order, " "))
	// Crossings: flips between consecutive significant points; up says
	// the first curve goes from below to above.
	type crossing struct {
		lo, hi, at float64
		up         bool
	}
	var cross []crossing
	last, ties := -1, false
	for i, s := range signs {
		if s == 0 {
			ties = true
			continue
		}
		if last >= 0 && signs[last] != s {
			a, b := sweep[last], sweep[i]
			da, db := stats.Median(a.first)-stats.Median(a.second), stats.Median(b.first)-stats.Median(b.second)
			cross = append(cross, crossing{lo: a.x, hi: b.x, at: a.x + (b.x-a.x)*da/(da-db), up: s > 0})
		}
		last = i
	}
	v := results.Verdict{Reason: orders}
	for _, p := range sweep {
		v.Numbers = append(v.Numbers, results.Number{Name: fmt.Sprintf("median %s - %s at %s=%s", firstName, secondName, c.Sweep, results.FormatValue(p.x)),
			Value: stats.Median(p.first) - stats.Median(p.second)})
	}
	for _, k := range cross {
		v.Numbers = append(v.Numbers, results.Number{Name: "crossing", Value: k.at}, results.Number{Name: "between", Value: k.lo}, results.Number{Name: "and", Value: k.hi})
	}
	first, lastX := sweep[0].x, sweep[len(sweep)-1].x
	at, tol := (c.BandStart+c.BandEnd)/2, (c.BandEnd-c.BandStart)/2
	switch {
	case false:
		switch {
		case len(cross) > 0:
			v.Verdict = results.NotReproduced
			v.Reason += fmt.Sprintf("; they cross near %s", results.FormatValue(cross[0].at))
		case ties:
			v.Verdict = results.Inconclusive
			v.Reason += "; no flip, but at some points the curves are within the noise"
		default:
			v.Verdict = results.Reproduced
			v.Reason += "; no crossing in the sweep"
		}
	case len(cross) > 1:
		v.Verdict = results.Inconclusive
		v.Reason += fmt.Sprintf("; the curves cross %d times", len(cross))
	case len(cross) == 1:
		k := cross[0]
		lo, hi := at-tol, at+tol
		v.Numbers = append(v.Numbers, results.Number{Name: "claimed", Value: at}, results.Number{Name: "tolerance", Value: tol})
		switch {
		case c.Before == contract.BeforeBelow && !k.up:
			v.Verdict = results.NotReproduced
			v.Reason += fmt.Sprintf("; crossing near %s (between %s and %s), but the wrong way: %s is higher before it and lower after", results.FormatValue(k.at), results.FormatValue(k.lo), results.FormatValue(k.hi), firstName)
		case k.at >= lo && k.at <= hi:
			v.Verdict = results.Reproduced
			v.Reason += fmt.Sprintf("; crossing near %s (between %s and %s), claimed %s +- %s", results.FormatValue(k.at), results.FormatValue(k.lo), results.FormatValue(k.hi), results.FormatValue(at), results.FormatValue(tol))
		case k.hi < lo || k.lo > hi:
			v.Verdict = results.NotReproduced
			v.Reason += fmt.Sprintf("; crossing between %s and %s (near %s), outside %s..%s", results.FormatValue(k.lo), results.FormatValue(k.hi), results.FormatValue(k.at), results.FormatValue(lo), results.FormatValue(hi))
		default:
			v.Verdict = results.Inconclusive
			v.Reason += fmt.Sprintf("; crossing between %s and %s (interpolated %s, outside %s..%s): the sweep is too coarse there, add points", results.FormatValue(k.lo), results.FormatValue(k.hi), results.FormatValue(k.at), results.FormatValue(lo), results.FormatValue(hi))
		}
	case ties || at+tol < first || at-tol > lastX:
		v.Verdict = results.Inconclusive
		v.Reason += fmt.Sprintf("; no flip found, but the curves are within the noise somewhere or the sweep %s..%s does not reach %s", results.FormatValue(first), results.FormatValue(lastX), results.FormatValue(at))
	default:
		v.Verdict = results.NotReproduced
		v.Reason += fmt.Sprintf("; no crossing anywhere in %s..%s", results.FormatValue(first), results.FormatValue(lastX))
	}
	return v
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// speedupVerdict decides a speedup between r and the latest run of store
// on the other profile, of the same plugin, experiment and parameters.
func speedupVerdict(c *contract.SpeedupClaim, r *results.Result, store []*results.Result) results.Verdict {
	here := results.ProfileName(r.Machine)
	var other string
	switch here {
	case c.Baseline:
		other = c.Profile
	case c.Profile:
		other = c.Baseline
	default:
		return results.Verdict{Verdict: results.NotRun, Reason: fmt.Sprintf("decided by runs on %s and %s; this run is on %s", c.Baseline, c.Profile, results.OrUnknown(here))}
	}
	var match *results.Result
	for _, o := range store {
		if o.ID != r.ID && o.Plugin == r.Plugin && o.Experiment == r.Experiment && results.ProfileName(o.Machine) == other &&
			o.Outcome.Status != "failed" && o.Outcome.Status != results.StatusInterrupted && sameParams(o.Parameters, r.Parameters) {
			match = o
			break
		}
	}
	if match == nil {
		return results.Verdict{Verdict: results.NotRun, Reason: fmt.Sprintf("needs a run on %s too (same experiment and parameters); none in the result store yet", other)}
	}
	base, fast := r, match
	if here == c.Profile {
		base, fast = match, r
	}
	runs := []string{base.ID, fast.ID}
	if base.Machine.Accelerator != fast.Machine.Accelerator || base.Machine.Clock != fast.Machine.Clock {
		return results.Verdict{Verdict: results.NotComparable, Runs: runs, Reason: fmt.Sprintf("%s ran under %s/%s, %s under %s/%s: times under different accelerators or clocks measure different things",
			base.ID, base.Machine.Accelerator, base.Machine.Clock, fast.ID, fast.Machine.Accelerator, fast.Machine.Clock)}
	}
	v := factorVerdict(c.Metric+" on "+c.Baseline, c.Metric+" on "+c.Profile, base.Values(c.Metric, c.Labels), fast.Values(c.Metric, c.Labels), c.Min, c.Max)
	v.Runs = runs
	return v
}

// sameParams compares parameters, ignoring the number of repeats.
func sameParams(a, b map[string]string) bool {
	clean := func(m map[string]string) map[string]string {
		m = maps.Clone(m)
		delete(m, "repeat")
		return m
	}
	return maps.Equal(clean(a), clean(b))
}

// signalWords are what a crash reason may say instead of a signal's name.
var signalWords = map[string]string{
	"SIGSEGV": "segmentation fault", "SIGBUS": "bus error", "SIGABRT": "abort", "SIGFPE": "floating point",
	"SIGKILL": "killed", "SIGILL": "illegal instruction",
}

// decideCrash decides an expected crash from the run's outcome and the
// size it ran at.
func decideCrash(c *contract.CrashClaim, r *results.Result) results.Verdict {
	sv, ok := r.Parameters[c.Param]
	size, err := strconv.ParseFloat(sv, 64)
	if !ok || err != nil {
		return results.Verdict{Verdict: results.Inconclusive, Reason: fmt.Sprintf("this run has no numeric parameter %s (got %q)", c.Param, sv)}
	}
	nums := []results.Number{{Name: c.Param, Value: size}, {Name: "from", Value: c.From}}
	reason := strings.ToLower(r.Outcome.Reason + " " + r.Outcome.StderrTail)
	named := strings.Contains(reason, strings.ToLower(c.Signal)) ||
		signalWords[strings.ToUpper(c.Signal)] != "" && strings.Contains(reason, signalWords[strings.ToUpper(c.Signal)])
	at := fmt.Sprintf("at %s=%s (claimed: crashes from %s)", c.Param, sv, results.FormatValue(c.From))
	v := results.Verdict{Numbers: nums}
	switch st := r.Outcome.Status; {
	case st == "failed" || st == results.StatusInterrupted:
		v.Verdict, v.Reason = results.Inconclusive, "the run failed otherwise ("+r.Outcome.Reason+") "+at
	case size >= c.From && st == "expected-crash" && named:
		v.Verdict, v.Reason = results.Reproduced, "crashed with "+c.Signal+" "+at+": "+r.Outcome.Reason
	case size >= c.From && st == "expected-crash":
		v.Verdict, v.Reason = results.NotReproduced, "crashed, but not with "+c.Signal+", "+at+": "+r.Outcome.Reason
	case size >= c.From:
		v.Verdict, v.Reason = results.NotReproduced, "ran to the end "+at
	case st == "expected-crash":
		v.Verdict, v.Reason = results.NotReproduced, "crashed below the claimed size "+at+": "+r.Outcome.Reason
	default:
		v.Verdict, v.Reason = results.Reproduced, "ran to the end below the claimed size "+at
	}
	return v
}

// orderVerdict decides an order: each pair of an above and a below series
// as a ratio (factorVerdict). Any pair significantly the wrong way makes
// it not reproduced; every pair significantly the right way, reproduced;
// anything else is inconclusive, naming the pairs left undecided.
func orderVerdict(o *contract.OrderClaim, r *results.Result) results.Verdict {
	series := func(v string) (string, []float64) {
		l := results.MergeLabels(o.Labels, map[string]string{o.Label: v})
		return results.SeriesLabel(o.Metric, map[string]string{o.Label: v}), r.Values(o.Metric, l)
	}
	var nums []results.Number
	seen := map[string]bool{}
	for _, v := range append(slices.Clone(o.Above), o.Below...) {
		name, xs := series(v)
		if !seen[v] && len(xs) > 0 {
			nums = append(nums, results.Number{Name: "median " + name, Value: stats.Median(xs), Unit: unitOf(r, o.Metric)})
		}
		if !seen[v] {
			nums = append(nums, results.Number{Name: "samples of " + name, Value: float64(len(xs))})
		}
		seen[v] = true
	}
	var wrong, undecided []string
	// The weakest pair is the one with the smallest ratio of medians.
	weakest, weakestRatio := "", math.Inf(1)
	for _, a := range o.Above {
		an, x := series(a)
		for _, b := range o.Below {
			bn, y := series(b)
			v := factorVerdict(an, bn, x, y, o.Min, nil)
			pair := fmt.Sprintf("%s=%s over %s=%s", o.Label, a, o.Label, b)
			ratio := math.NaN()
			for _, n := range v.Numbers {
				if n.Name == "ratio of medians" {
					ratio = n.Value
				}
			}
			if !math.IsNaN(ratio) {
				nums = append(nums, results.Number{Name: "ratio " + pair, Value: ratio, Unit: "x"})
			}
			switch v.Verdict {
			case results.NotReproduced:
				wrong = append(wrong, pair+": "+v.Reason)
			case results.Reproduced:
				if ratio < weakestRatio {
					weakest, weakestRatio = pair+": "+v.Reason, ratio
				}
			default:
				undecided = append(undecided, pair+": "+v.Reason)
			}
		}
	}
	pairs := len(o.Above) * len(o.Below)
	switch {
	case len(wrong) > 0:
		return results.Verdict{Verdict: results.NotReproduced, Numbers: nums,
			Reason: fmt.Sprintf("%d of %d pairs the other way: %s", len(wrong), pairs, strings.Join(wrong, "; "))}
	case len(undecided) > 0:
		return results.Verdict{Verdict: results.Inconclusive, Numbers: nums,
			Reason: fmt.Sprintf("%d of %d pairs undecided: %s", len(undecided), pairs, strings.Join(undecided, "; "))}
	}
	return results.Verdict{Verdict: results.Reproduced, Numbers: nums,
		Reason: fmt.Sprintf("all %d pairs above %s; the weakest, %s", pairs, results.FormatValue(o.Min), weakest)}
}
