package history

import "math"

// DefaultLast is how many of the latest nights a gate looks at: a
// change point whose new segment began in one of them fails it. A change
// is only seen some nights after it began (docs/history.md measures how
// many), and a gate that looked at tonight alone would miss every change
// not seen the night it came.
const DefaultLast = 5

// Worse says whether the change c is the worse way for a metric: up for
// times and sizes, down for rates (higherIsBetter).
func Worse(c ChangePoint, higherIsBetter bool) bool {
	if higherIsBetter {
		return c.After < c.Before
	}
	return c.After > c.Before
}

// Alarming is the latest change point of cps that a gate over the last
// `last` of n values fails on: its new segment began at index n-last or
// later, and it is the worse way. nil if none.
func Alarming(cps []ChangePoint, n, last int, higherIsBetter bool) *ChangePoint {
	for i := len(cps) - 1; i >= 0; i-- {
		if cps[i].Index >= n-last && Worse(cps[i], higherIsBetter) {
			return &cps[i]
		}
	}
	return nil
}

// Noise is how much x varies around the means of the segments its
// change points cut it into: the residual standard deviation in percent
// of x's mean (0 for fewer than two values a segment).
func Noise(x []float64, cps []ChangePoint) float64 {
	if len(x) == 0 {
		return 0
	}
	ss, df := 0.0, 0
	lo := 0
	for i := 0; i <= len(cps); i++ {
		hi := len(x)
		if i < len(cps) {
			hi = cps[i].Index
		}
		m := mean(x[lo:hi])
		for _, v := range x[lo:hi] {
			ss += (v - m) * (v - m)
		}
		df += hi - lo - 1
		lo = hi
	}
	m := mean(x)
	if df < 1 || m == 0 {
		return 0
	}
	return math.Sqrt(ss/float64(df)) / math.Abs(m) * 100
}

// Unstable says whether a series whose nights vary by noise percent
// (Noise) is too noisy to gate at o.MinChange: its nights vary by more
// than half the smallest change asked for. Its change points are shown,
// marked unstable, and a gate does not fail on them. From the table of
// BenchmarkChangePointNoise (docs/history.md): gating such series failed
// on 2-4% of pure-noise series for every change it could find.
func Unstable(noise float64, o Options) bool { return noise > o.MinChange/2 }
