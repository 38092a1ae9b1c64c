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

// Noise is how much x varies around the means of the segments its
// change points cut it into: the residual standard deviation in percent
// of x's mean (pooledCV; 0 for fewer than two values a segment).
func Noise(x []float64, cps []ChangePoint) float64 {
	var segments [][]float64
	lo := 0
	for _, c := range cps {
		segments = append(segments, x[lo:c.Index])
		lo = c.Index
	}
	return pooledCV(append(segments, x[lo:]))
}

// pooledCV is the pooled standard deviation of each group's values
// around the group's mean, in percent of the mean of every value: 0 when
// no group has two values, or the mean is 0.
func pooledCV(groups [][]float64) float64 {
	ss, df, sum, n := 0.0, 0, 0.0, 0
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		m := mean(g)
		for _, v := range g {
			ss += (v - m) * (v - m)
			sum += v
		}
		df += len(g) - 1
		n += len(g)
	}
	if df < 1 || sum == 0 {
		return 0
	}
	return math.Sqrt(ss/float64(df)) / math.Abs(sum/float64(n)) * 100
}

// Unstable says whether a series whose nights vary by noise percent
// (Noise) is too noisy to gate at o.MinChange: its nights vary by more
// than half the smallest change asked for. Its change points are shown,
// marked unstable, and a gate does not fail on them. From the table of
// BenchmarkChangePointNoise (docs/history.md): gating such series failed
// on 2-4% of pure-noise series for every change it could find.
func Unstable(noise float64, o Options) bool { return noise > o.MinChange/2 }
