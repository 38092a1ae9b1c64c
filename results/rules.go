package results

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// rankSide is which way a two-sided rank test came out: +1 when the first sample
// is significantly larger, -1 when significantly smaller, 0 when the
// difference is within the noise.
func rankSide(x, y []float64) (int, float64) {
	t, err := MannWhitneyU(x, y)
	if err != nil {
		return 0, 1
	}
	if t.P >= Alpha {
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
func factorVerdict(xName, yName string, x, y []float64, lo float64, hi *float64) Verdict {
	what := xName + " / " + yName
	if len(x) < MinRankSamples || len(y) < MinRankSamples {
		v := Verdict{Verdict: Inconclusive, Reason: fmt.Sprintf("too few samples: %d of %s and %d of %s; a %s (run with --repeat %d or more)",
			len(x), xName, len(y), yName, RankRule, MinRankSamples)}
		if len(x) > 0 && len(y) > 0 && Median(y) != 0 {
			v.Numbers = []Number{{Name: "ratio of medians", Value: Median(x) / Median(y), Unit: "x"}}
		}
		v.Numbers = append(v.Numbers, Number{Name: "samples of " + xName, Value: float64(len(x))}, Number{Name: "samples of " + yName, Value: float64(len(y))})
		return v
	}
	mx, my := Median(x), Median(y)
	if my == 0 {
		return Verdict{Verdict: Inconclusive, Reason: fmt.Sprintf("the median of %s is 0: no ratio", yName)}
	}
	ratio := mx / my
	nums := []Number{{Name: "ratio of medians", Value: ratio, Unit: "x"}, {Name: "median " + xName, Value: mx},
		{Name: "median " + yName, Value: my}, {Name: "samples a side", Value: float64(min(len(x), len(y)))},
		{Name: "min factor", Value: lo, Unit: "x"}}
	low, pLow := rankSide(x, scaled(y, lo))
	nums = append(nums, Number{Name: "p against min", Value: pLow})
	high, pHigh := -1, 0.0
	if hi != nil {
		high, pHigh = rankSide(x, scaled(y, *hi))
		nums = append(nums, Number{Name: "max factor", Value: *hi, Unit: "x"}, Number{Name: "p against max", Value: pHigh})
	}
	base := fmt.Sprintf("%s = %s (medians %s / %s, %d and %d samples)", what, FormatValue(ratio), FormatValue(mx), FormatValue(my), len(x), len(y))
	v := Verdict{Numbers: nums}
	switch {
	case low < 0:
		v.Verdict, v.Reason = NotReproduced, fmt.Sprintf("%s: below %s, p = %s", base, FormatValue(lo), formatP(pLow))
	case hi != nil && high > 0:
		v.Verdict, v.Reason = NotReproduced, fmt.Sprintf("%s: above %s, p = %s", base, FormatValue(*hi), formatP(pHigh))
	case low > 0 && high < 0:
		v.Verdict = Reproduced
		v.Reason = fmt.Sprintf("%s: above %s, p = %s", base, FormatValue(lo), formatP(pLow))
		if hi != nil {
			v.Reason += fmt.Sprintf(", and below %s, p = %s", FormatValue(*hi), formatP(pHigh))
		}
	case low == 0:
		v.Verdict, v.Reason = Inconclusive, fmt.Sprintf("%s: not distinguishable from %s within the noise, p = %s >= %g", base, FormatValue(lo), formatP(pLow), Alpha)
	default:
		v.Verdict, v.Reason = Inconclusive, fmt.Sprintf("%s: not distinguishable from %s within the noise, p = %s >= %g", base, FormatValue(*hi), formatP(pHigh), Alpha)
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
	case p >= Alpha:
		return 0, p
	case above > below:
		return 1, p
	}
	return -1, p
}

// rangeVerdict decides "metric lies in [lo, hi] (unit)" with a sign test
// against each bound. An absolute time is decided only under icount.
func (r *Result) rangeVerdict(metric string, labels map[string]string, unit string, lo, hi *float64) Verdict {
	xs := r.values(metric, labels)
	if len(xs) == 0 {
		return Verdict{Verdict: Inconclusive, Reason: fmt.Sprintf("this run has no samples of %s%s", metric, labelSuffix(labels))}
	}
	su := r.unitOf(metric)
	conv := func(b *float64) (*float64, bool) {
		if b == nil {
			return nil, true
		}
		v, ok := convert(*b, unit, su)
		return &v, ok
	}
	clo, ok1 := conv(lo)
	chi, ok2 := conv(hi)
	if !ok1 || !ok2 {
		return Verdict{Verdict: Inconclusive, Reason: fmt.Sprintf("the claim's bounds are in %s, the samples of %s in %s: not convertible", unit, metric, su)}
	}
	med := Median(xs)
	nums := []Number{{Name: "median " + metric, Value: med, Unit: su}, {Name: "samples", Value: float64(len(xs))}}
	if clo != nil {
		nums = append(nums, Number{Name: "min", Value: *clo, Unit: su})
	}
	if chi != nil {
		nums = append(nums, Number{Name: "max", Value: *chi, Unit: su})
	}
	base := fmt.Sprintf("median %s %s %s (%d samples, %s..%s), claimed %s", metric, FormatValue(med), su, len(xs),
		FormatValue(slices.Min(xs)), FormatValue(slices.Max(xs)), boundsText(clo, chi))
	v := Verdict{Numbers: nums}
	if isTime(su) {
		note, ok := ClockNote(r.Machine)
		if !ok {
			v.Verdict, v.Reason = NotComparable, base+": "+note
			return v
		}
		v.Note = note
	}
	if len(xs) < MinSignSamples {
		v.Verdict, v.Reason = Inconclusive, fmt.Sprintf("%s: too few samples for a %s (run with --repeat %d or more)", base, SignRule, MinSignSamples)
		return v
	}
	low, high := 1, -1
	var pLow, pHigh float64
	if clo != nil {
		low, pLow = signSide(xs, *clo)
		nums = append(nums, Number{Name: "p against min", Value: pLow})
	}
	if chi != nil {
		high, pHigh = signSide(xs, *chi)
		nums = append(nums, Number{Name: "p against max", Value: pHigh})
	}
	v.Numbers = nums
	switch {
	case low < 0:
		v.Verdict, v.Reason = NotReproduced, fmt.Sprintf("%s: below %s, p = %s", base, FormatValue(*clo), formatP(pLow))
	case high > 0:
		v.Verdict, v.Reason = NotReproduced, fmt.Sprintf("%s: above %s, p = %s", base, FormatValue(*chi), formatP(pHigh))
	case low > 0 && high < 0:
		v.Verdict, v.Reason = Reproduced, base+": inside"
		if clo != nil {
			v.Reason += ", above " + FormatValue(*clo) + " p = " + formatP(pLow)
		}
		if chi != nil {
			v.Reason += ", below " + FormatValue(*chi) + " p = " + formatP(pHigh)
		}
	default:
		v.Verdict, v.Reason = Inconclusive, base+": the samples straddle a bound (not significant at alpha 0.05)"
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
func crossoverVerdict(c *CrossoverRule, r *Result) Verdict {
	pts := map[string]*point{}
	firstName, secondName := seriesLabel(c.First, c.FirstLabels), seriesLabel(c.Second, c.SecondLabels)
	for _, s := range r.Samples {
		isFirst := s.Metric == c.First && hasLabels(s.Labels, c.FirstLabels)
		isSecond := s.Metric == c.Second && hasLabels(s.Labels, c.SecondLabels)
		if !isFirst && !isSecond {
			continue
		}
		sv, ok := s.Labels[c.Sweep]
		if !ok {
			continue
		}
		x, err := strconv.ParseFloat(sv, 64)
		if err != nil {
			return Verdict{Verdict: Inconclusive, Reason: fmt.Sprintf("sweep label %s=%q is not a number", c.Sweep, sv)}
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
		return Verdict{Verdict: Inconclusive, Reason: fmt.Sprintf("%d point(s) of the sweep over %s with both %s and %s; a crossover needs at least 2", len(sweep), c.Sweep, firstName, secondName)}
	}
	signs := make([]int, len(sweep))
	var order []string
	for i, p := range sweep {
		if len(p.first) < MinRankSamples || len(p.second) < MinRankSamples {
			return Verdict{Verdict: Inconclusive, Numbers: []Number{{Name: c.Sweep, Value: p.x},
				{Name: "samples of " + firstName, Value: float64(len(p.first))}, {Name: "samples of " + secondName, Value: float64(len(p.second))}}, Reason: fmt.Sprintf("too few samples at %s=%s: %d and %d; a %s (run with --repeat %d or more)",
				c.Sweep, FormatValue(p.x), len(p.first), len(p.second), RankRule, MinRankSamples)}
		}
		signs[i], _ = rankSide(p.first, p.second)
		order = append(order, FormatValue(p.x)+":"+map[int]string{-1: "<", 0: "~", 1: ">"}[signs[i]])
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
			da, db := Median(a.first)-Median(a.second), Median(b.first)-Median(b.second)
			cross = append(cross, crossing{lo: a.x, hi: b.x, at: a.x + (b.x-a.x)*da/(da-db), up: s > 0})
		}
		last = i
	}
	v := Verdict{Reason: orders}
	for _, p := range sweep {
		v.Numbers = append(v.Numbers, Number{Name: fmt.Sprintf("median %s - %s at %s=%s", firstName, secondName, c.Sweep, FormatValue(p.x)),
			Value: Median(p.first) - Median(p.second)})
	}
	for _, k := range cross {
		v.Numbers = append(v.Numbers, Number{Name: "crossing", Value: k.at}, Number{Name: "between", Value: k.lo}, Number{Name: "and", Value: k.hi})
	}
	first, lastX := sweep[0].x, sweep[len(sweep)-1].x
	switch {
	case c.None:
		switch {
		case len(cross) > 0:
			v.Verdict = NotReproduced
			v.Reason += fmt.Sprintf("; they cross near %s", FormatValue(cross[0].at))
		case ties:
			v.Verdict = Inconclusive
			v.Reason += "; no flip, but at some points the curves are within the noise"
		default:
			v.Verdict = Reproduced
			v.Reason += "; no crossing in the sweep"
		}
	case len(cross) > 1:
		v.Verdict = Inconclusive
		v.Reason += fmt.Sprintf("; the curves cross %d times", len(cross))
	case len(cross) == 1:
		k := cross[0]
		lo, hi := *c.At-c.Tolerance, *c.At+c.Tolerance
		v.Numbers = append(v.Numbers, Number{Name: "claimed", Value: *c.At}, Number{Name: "tolerance", Value: c.Tolerance})
		switch {
		case c.FirstLowerBefore && !k.up:
			v.Verdict = NotReproduced
			v.Reason += fmt.Sprintf("; crossing near %s (between %s and %s), but the wrong way: %s is higher before it and lower after", FormatValue(k.at), FormatValue(k.lo), FormatValue(k.hi), firstName)
		case k.at >= lo && k.at <= hi:
			v.Verdict = Reproduced
			v.Reason += fmt.Sprintf("; crossing near %s (between %s and %s), claimed %s +- %s", FormatValue(k.at), FormatValue(k.lo), FormatValue(k.hi), FormatValue(*c.At), FormatValue(c.Tolerance))
		case k.hi < lo || k.lo > hi:
			v.Verdict = NotReproduced
			v.Reason += fmt.Sprintf("; crossing between %s and %s (near %s), outside %s..%s", FormatValue(k.lo), FormatValue(k.hi), FormatValue(k.at), FormatValue(lo), FormatValue(hi))
		default:
			v.Verdict = Inconclusive
			v.Reason += fmt.Sprintf("; crossing between %s and %s (interpolated %s, outside %s..%s): the sweep is too coarse there, add points", FormatValue(k.lo), FormatValue(k.hi), FormatValue(k.at), FormatValue(lo), FormatValue(hi))
		}
	case ties || *c.At+c.Tolerance < first || *c.At-c.Tolerance > lastX:
		v.Verdict = Inconclusive
		v.Reason += fmt.Sprintf("; no flip found, but the curves are within the noise somewhere or the sweep %s..%s does not reach %s", FormatValue(first), FormatValue(lastX), FormatValue(*c.At))
	default:
		v.Verdict = NotReproduced
		v.Reason += fmt.Sprintf("; no crossing anywhere in %s..%s", FormatValue(first), FormatValue(lastX))
	}
	return v
}

// hasLabels says whether labels include every one of want.
func hasLabels(labels, want map[string]string) bool {
	for k, v := range want {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
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
func speedupVerdict(c *SpeedupRule, r *Result, store []*Result) Verdict {
	here := ProfileName(r.Machine)
	var other string
	switch here {
	case c.Baseline:
		other = c.Profile
	case c.Profile:
		other = c.Baseline
	default:
		return Verdict{Verdict: NotRun, Reason: fmt.Sprintf("decided by runs on %s and %s; this run is on %s", c.Baseline, c.Profile, orUnknown(here))}
	}
	var match *Result
	for _, o := range store {
		if o.ID != r.ID && o.Plugin == r.Plugin && o.Experiment == r.Experiment && ProfileName(o.Machine) == other &&
			o.Outcome.Status != "failed" && o.Outcome.Status != StatusInterrupted && sameParams(o.Parameters, r.Parameters) {
			match = o
			break
		}
	}
	if match == nil {
		return Verdict{Verdict: NotRun, Reason: fmt.Sprintf("needs a run on %s too (same experiment and parameters); none in the result store yet", other)}
	}
	base, fast := r, match
	if here == c.Profile {
		base, fast = match, r
	}
	runs := []string{base.ID, fast.ID}
	if base.Machine.Accelerator != fast.Machine.Accelerator || base.Machine.Clock != fast.Machine.Clock {
		return Verdict{Verdict: NotComparable, Runs: runs, Reason: fmt.Sprintf("%s ran under %s/%s, %s under %s/%s: times under different accelerators or clocks measure different things",
			base.ID, base.Machine.Accelerator, base.Machine.Clock, fast.ID, fast.Machine.Accelerator, fast.Machine.Clock)}
	}
	v := factorVerdict(c.Metric+" on "+c.Baseline, c.Metric+" on "+c.Profile, base.values(c.Metric, c.Labels), fast.values(c.Metric, c.Labels), c.Min, c.Max)
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
func decideCrash(c *CrashRule, r *Result) Verdict {
	sv, ok := r.Parameters[c.Param]
	size, err := strconv.ParseFloat(sv, 64)
	if !ok || err != nil {
		return Verdict{Verdict: Inconclusive, Reason: fmt.Sprintf("this run has no numeric parameter %s (got %q)", c.Param, sv)}
	}
	nums := []Number{{Name: c.Param, Value: size}, {Name: "from", Value: c.From}}
	reason := strings.ToLower(r.Outcome.Reason + " " + r.Outcome.StderrTail)
	named := strings.Contains(reason, strings.ToLower(c.Signal)) ||
		signalWords[strings.ToUpper(c.Signal)] != "" && strings.Contains(reason, signalWords[strings.ToUpper(c.Signal)])
	at := fmt.Sprintf("at %s=%s (claimed: crashes from %s)", c.Param, sv, FormatValue(c.From))
	v := Verdict{Numbers: nums}
	switch st := r.Outcome.Status; {
	case st == "failed" || st == StatusInterrupted:
		v.Verdict, v.Reason = Inconclusive, "the run failed otherwise ("+r.Outcome.Reason+") "+at
	case size >= c.From && st == "expected-crash" && named:
		v.Verdict, v.Reason = Reproduced, "crashed with "+c.Signal+" "+at+": "+r.Outcome.Reason
	case size >= c.From && st == "expected-crash":
		v.Verdict, v.Reason = NotReproduced, "crashed, but not with "+c.Signal+", "+at+": "+r.Outcome.Reason
	case size >= c.From:
		v.Verdict, v.Reason = NotReproduced, "ran to the end "+at
	case st == "expected-crash":
		v.Verdict, v.Reason = NotReproduced, "crashed below the claimed size "+at+": "+r.Outcome.Reason
	default:
		v.Verdict, v.Reason = Reproduced, "ran to the end below the claimed size "+at
	}
	return v
}

// orderVerdict decides an order: each pair of an above and a below series
// as a ratio (factorVerdict). Any pair significantly the wrong way makes
// it not reproduced; every pair significantly the right way, reproduced;
// anything else is inconclusive, naming the pairs left undecided.
func orderVerdict(o *OrderRule, r *Result) Verdict {
	series := func(v string) (string, []float64) {
		l := merged(o.Labels, map[string]string{o.Label: v})
		return seriesLabel(o.Metric, map[string]string{o.Label: v}), r.values(o.Metric, l)
	}
	var nums []Number
	seen := map[string]bool{}
	for _, v := range append(slices.Clone(o.Above), o.Below...) {
		name, xs := series(v)
		if !seen[v] && len(xs) > 0 {
			nums = append(nums, Number{Name: "median " + name, Value: Median(xs), Unit: r.unitOf(o.Metric)})
		}
		if !seen[v] {
			nums = append(nums, Number{Name: "samples of " + name, Value: float64(len(xs))})
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
				nums = append(nums, Number{Name: "ratio " + pair, Value: ratio, Unit: "x"})
			}
			switch v.Verdict {
			case NotReproduced:
				wrong = append(wrong, pair+": "+v.Reason)
			case Reproduced:
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
		return Verdict{Verdict: NotReproduced, Numbers: nums,
			Reason: fmt.Sprintf("%d of %d pairs the other way: %s", len(wrong), pairs, strings.Join(wrong, "; "))}
	case len(undecided) > 0:
		return Verdict{Verdict: Inconclusive, Numbers: nums,
			Reason: fmt.Sprintf("%d of %d pairs undecided: %s", len(undecided), pairs, strings.Join(undecided, "; "))}
	}
	return Verdict{Verdict: Reproduced, Numbers: nums,
		Reason: fmt.Sprintf("all %d pairs above %s; the weakest, %s", pairs, FormatValue(o.Min), weakest)}
}
