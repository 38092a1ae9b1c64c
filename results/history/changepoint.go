// Package history reads a series of nights (result stores, or lab
// matrix output directories) as a series: per cell and metric the median
// of each night, the change points in those medians, and per claim the
// verdict of each night with its flips.
//
// Change points are found the way Hunter (Fleming et al., "Hunter: Using
// Change Point Detection to Hunt for Performance Regressions", ICPE 2023;
// now Apache Otava) finds them: E-divisive means (Matteson and James, "A
// Nonparametric Approach for Multiple Change Point Analysis of
// Multivariate Data", JASA 2014) proposes where a series splits, and a
// two-sample Student's t-test between the nights before and after a
// split says whether it is significant, in place of E-divisive's
// permutation test. The t-test needs no random draws, so the same
// history always gives the same change points, and it can decide a split
// with few nights on one side: the permutation test cannot give p < 0.05
// to 3 nights against 2 (at best 2 of the C(5,2) = 10 arrangements are
// as extreme), while a nightly gate has to say something the night after
// a regression. The choice of split inflates the t-test's false-alarm
// rate above alpha; that rate is measured on synthetic series drawn from
// our own noise (BenchmarkChangePointNoise, docs/history.md), and the
// defaults are chosen from it.
package history

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultAlpha and DefaultMinChange are the detector's defaults: a
// change point is a split whose t-test gives p < DefaultAlpha and whose
// means differ by at least DefaultMinChange percent. They were chosen
// from the false-alarm and detection table in docs/history.md.
const (
	DefaultAlpha     = 0.001
	DefaultMinChange = 5.0
)

// splitAlpha is the t-test's threshold for a candidate split, before
// the merge holds each to Options.Alpha.
const splitAlpha = 0.05

// Options are a detector's thresholds.
type Options struct {
	// Alpha is the significance a split's t-test must reach (p < Alpha).
	Alpha float64 `json:"alpha"`
	// MinChange is the smallest change, in percent of the mean before,
	// reported.
	MinChange float64 `json:"min_change_pct"`
	// MedianNoise is how much one night's median varies from its own
	// repeats alone, in percent (their spread over the root of their
	// number); 0 when not known. It bounds from below the noise a single
	// night off is held against (SingleNightZ).
	MedianNoise float64 `json:"-"`
}

// SingleNightZ: a change point one of whose sides is a single night (the
// last night alone, a spike) is kept only if that night lies this many
// standard deviations of the series' noise from the other side's mean:
// the other side's night-to-night spread, or the night's own repeat
// noise (Options.MedianNoise) if larger, and the other side must hold at
// least minNoiseNights nights to say what its spread is. A single night
// off on a noisy series is not a new level (Otava's minimum segment
// length exists for this: "single spikes cause changepoints"); one far
// outside the noise is found the night it comes.
const SingleNightZ = 6

const minNoiseNights = 4

// Defaults are DefaultAlpha and DefaultMinChange.
func Defaults() Options { return Options{Alpha: DefaultAlpha, MinChange: DefaultMinChange} }

// ChangePoint is where a series shifts: Index is the first value of the
// new segment. Before and After are the means of the segments on either
// side (each up to its neighbouring change point), Change is After
// against Before in percent, P the t-test's two-sided p-value.
type ChangePoint struct {
	Index  int     `json:"index"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Change float64 `json:"change_pct"`
	P      float64 `json:"p"`
}

// Detect finds the change points of x (one value a night, in order).
//
// Split: a segment of at least 3 values is split where E-divisive's
// statistic is largest, if the t-test between its two sides gives
// p < splitAlpha (or o.Alpha if larger); both sides are then split the
// same way. The split is lenient so that a change that comes and goes
// (up for ten nights, then back) is found: across the whole series its
// two sides mix, and only the merge can judge each edge between its
// neighbours.
// Merge: each change point is tested again between its neighbours (the
// segments now on either side of it), and the weakest that fails (p >=
// o.Alpha, or a change smaller than o.MinChange) is dropped, until none
// fails. Same x, same answer.
func Detect(x []float64, o Options) []ChangePoint {
	var cuts []int
	var split func(lo, hi int)
	split = func(lo, hi int) {
		if hi-lo < 3 {
			return
		}
		tau := bestSplit(x[lo:hi])
		if tau < 0 {
			return
		}
		if p := tTest(x[lo:lo+tau], x[lo+tau:hi]); !(p < max(o.Alpha, splitAlpha)) {
			return
		}
		cuts = append(cuts, lo+tau)
		split(lo, lo+tau)
		split(lo+tau, hi)
	}
	split(0, len(x))
	slices.Sort(cuts)
	cuts = joinSingles(x, cuts, o)
	for {
		cps := describe(x, cuts)
		worst := -1
		for i, c := range cps {
			if c.P < o.Alpha && math.Abs(c.Change) >= o.MinChange {
				continue
			}
			if worst < 0 || c.P > cps[worst].P || (c.P == cps[worst].P && math.Abs(c.Change) < math.Abs(cps[worst].Change)) {
				worst = i
			}
		}
		if worst < 0 {
			return cps
		}
		cuts = slices.Delete(cuts, worst, worst+1)
	}
}

// joinSingles joins each single night the split left on a segment of
// its own to the neighbour it lies nearer to, unless it lies far
// (SingleNightZ) from every neighbour: before the merge tests each cut
// between its neighbours, so that a night a hair off beside a step does
// not leave the step's cut with one night on a side. Joining only grows
// segments, so the merge makes no new single night.
func joinSingles(x []float64, cuts []int, o Options) []int {
	cuts = slices.Clone(cuts)
	for {
		bounds := append(append([]int{0}, cuts...), len(x))
		joined := false
		for j := 0; j+1 < len(bounds); j++ {
			if bounds[j+1]-bounds[j] != 1 {
				continue
			}
			v := x[bounds[j]]
			best, bestDist, far := -1, math.Inf(1), true
			if j > 0 { // the segment before: drop the cut starting this one
				d, f := nightFrom(v, x[bounds[j-1]:bounds[j]], o)
				far = far && f
				if d < bestDist {
					best, bestDist = j-1, d
				}
			}
			if j+1 < len(bounds)-1 { // the segment after: drop the cut ending it
				d, f := nightFrom(v, x[bounds[j+1]:bounds[j+2]], o)
				far = far && f
				if d < bestDist {
					best, bestDist = j, d
				}
			}
			if best < 0 || far {
				continue
			}
			cuts = slices.Delete(cuts, best, best+1)
			joined = true
			break
		}
		if !joined {
			return cuts
		}
	}
}

// nightFrom is how far v lies from the nights rest, in their standard
// deviations (the larger of their spread and o.MedianNoise of their
// mean), and whether that is far: at least SingleNightZ, with at least
// minNoiseNights nights to say what their spread is.
func nightFrom(v float64, rest []float64, o Options) (z float64, far bool) {
	m := mean(rest)
	ss := 0.0
	for _, r := range rest {
		ss += (r - m) * (r - m)
	}
	sd := math.Abs(m) * o.MedianNoise / 100
	if len(rest) > 1 {
		sd = math.Max(sd, math.Sqrt(ss/float64(len(rest)-1)))
	}
	diff := math.Abs(v - m)
	if sd == 0 {
		if diff == 0 {
			return 0, false
		}
		return math.Inf(1), len(rest) >= minNoiseNights
	}
	z = diff / sd
	return z, len(rest) >= minNoiseNights && z >= SingleNightZ
}

// describe tests each cut between the segments on either side of it.
func describe(x []float64, cuts []int) []ChangePoint {
	out := make([]ChangePoint, len(cuts))
	for i, c := range cuts {
		lo, hi := 0, len(x)
		if i > 0 {
			lo = cuts[i-1]
		}
		if i+1 < len(cuts) {
			hi = cuts[i+1]
		}
		a, b := x[lo:c], x[c:hi]
		ma, mb := mean(a), mean(b)
		cp := ChangePoint{Index: c, Before: ma, After: mb, P: tTest(a, b)}
		switch {
		case ma != 0:
			cp.Change = (mb - ma) / math.Abs(ma) * 100
		case mb != 0:
			cp.Change = math.Copysign(math.Inf(1), mb)
		}
		out[i] = cp
	}
	return out
}

// bestSplit is where E-divisive's divergence (alpha = 1) between
// z[:tau] and z[tau:] is largest, each side at least one value; -1 when
// no split diverges (all values equal). Ties go to the earliest.
//
//	Q(tau) = m k / (m + k) * (2/(m k) sum|x-y| - sum|x-x'|/C(m,2) - sum|y-y'|/C(k,2))
//
// with m = tau, k = n - tau, a side of one value contributing no
// within-side term. O(n^2): the within sums are running sums.
func bestSplit(z []float64) int {
	n := len(z)
	// left[t] = sum over i < j < t of |z_i - z_j|; right[t] over t <= i < j.
	left := make([]float64, n+1)
	right := make([]float64, n+1)
	for t := 1; t <= n; t++ {
		left[t] = left[t-1]
		for i := 0; i < t-1; i++ {
			left[t] += math.Abs(z[i] - z[t-1])
		}
	}
	for t := n - 1; t >= 0; t-- {
		right[t] = right[t+1]
		for j := t + 1; j < n; j++ {
			right[t] += math.Abs(z[t] - z[j])
		}
	}
	total := left[n]
	best, bestQ := -1, 0.0
	for tau := 1; tau < n; tau++ {
		m, k := float64(tau), float64(n-tau)
		between := total - left[tau] - right[tau]
		q := 2 * between / (m * k)
		if tau >= 2 {
			q -= left[tau] / (m * (m - 1) / 2)
		}
		if n-tau >= 2 {
			q -= right[tau] / (k * (k - 1) / 2)
		}
		q *= m * k / (m + k)
		if q > bestQ*(1+1e-12) && q > 0 {
			best, bestQ = tau, q
		}
	}
	return best
}

// tTest is the two-sided p-value of Student's two-sample t-test (pooled
// variance) of a against b: 1 when it cannot be computed (fewer than 3
// values in all), 0 when neither side varies and their means differ.
func tTest(a, b []float64) float64 {
	na, nb := float64(len(a)), float64(len(b))
	df := na + nb - 2
	if len(a) == 0 || len(b) == 0 || df < 1 {
		return 1
	}
	ma, mb := mean(a), mean(b)
	ss := 0.0
	for _, v := range a {
		ss += (v - ma) * (v - ma)
	}
	for _, v := range b {
		ss += (v - mb) * (v - mb)
	}
	se := math.Sqrt(ss / df * (1/na + 1/nb))
	diff := math.Abs(mb - ma)
	if se == 0 || diff/se > 1e12 {
		if diff == 0 {
			return 1
		}
		return 0
	}
	t := diff / se
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(t)
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
