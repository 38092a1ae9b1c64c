// Package stats computes the statistics of a run's samples: summaries,
// median, MAD, trimmed mean and the Mann-Whitney U test.
//
// Means and standard deviations come from gonum/stat. The median and MAD are
// written here because gonum's Quantile picks one sample rather than
// averaging the two middle ones, which is the convention reports (lmbench,
// the E1 write-ups) use.
package stats

import (
	"lab/results"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Summarize groups samples by metric, unit and labels and computes the
// statistics of each group. Groups come out in the order of their first
// sample, so the same samples always give the same summaries. The unit is
// part of the key: samples of one metric in two units are never averaged.
func Summarize(samples []results.Sample) []results.Summary {
	type group struct {
		first  results.Sample
		values []float64
	}
	var order []string
	groups := map[string]*group{}
	for _, s := range samples {
		k := results.SeriesKey(s.Metric, s.Unit, s.Labels)
		g, ok := groups[k]
		if !ok {
			g = &group{first: s}
			groups[k] = g
			order = append(order, k)
		}
		g.values = append(g.values, s.Value)
	}
	out := make([]results.Summary, 0, len(order))
	for _, k := range order {
		g := groups[k]
		sum := SummaryOf(g.values)
		sum.Metric = g.first.Metric
		sum.Unit = g.first.Unit
		sum.Labels = results.CloneLabels(g.first.Labels)
		out = append(out, sum)
	}
	return out
}

// SummaryOf computes the statistics of one series of values; Metric, Unit and
// Labels are left empty. Every field is finite (JSON cannot carry NaN): with
// one value the spread is 0, with none the Summary is zero.
func SummaryOf(values []float64) results.Summary {
	n := len(values)
	if n == 0 {
		return results.Summary{}
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	s := results.Summary{
		N:           n,
		Min:         sorted[0],
		Max:         sorted[n-1],
		Median:      medianSorted(sorted),
		Mean:        stat.Mean(sorted, nil),
		TrimmedMean: TrimmedMean(sorted),
		MAD:         MAD(sorted),
	}
	if n > 1 {
		// Sample standard deviation (n-1), as the source write-ups and
		// lmbench-style reports use.
		s.Stddev = stat.StdDev(sorted, nil)
	}
	if s.Mean != 0 {
		s.CV = math.Abs(s.Stddev / s.Mean)
	}
	return s
}

// Median returns the middle value, or the mean of the two middle values for
// an even count; 0 for no values.
func Median(values []float64) float64 {
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	return medianSorted(sorted)
}

func medianSorted(sorted []float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return sorted[n/2]
	default:
		return (sorted[n/2-1] + sorted[n/2]) / 2
	}
}

// MAD returns the median absolute deviation from the median, unscaled (not
// multiplied by 1.4826): the typical distance of a repeat from the median,
// in the metric's own unit.
func MAD(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	m := Median(values)
	dev := make([]float64, len(values))
	for i, v := range values {
		dev[i] = math.Abs(v - m)
	}
	return Median(dev)
}

// TrimmedMean is E1's method ("five runs per point; mean after dropping min
// and max"): the mean after dropping one smallest and one largest value.
// With fewer than three values nothing can be dropped and it is the plain
// mean; with none it is 0.
func TrimmedMean(values []float64) float64 {
	n := len(values)
	if n == 0 {
		return 0
	}
	if n < 3 {
		return stat.Mean(values, nil)
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	return stat.Mean(sorted[1:n-1], nil)
}

// Alpha is the significance level of every test: a claim's rules and a
// comparison of two sets of runs alike.
const Alpha = 0.05

// Summaries are r's summaries: those it records, else computed from its
// samples.
func Summaries(r *results.Result) []results.Summary {
	if len(r.Summary) > 0 {
		return r.Summary
	}
	return Summarize(r.Samples)
}
