package results

import (
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"
)

// Summarize groups samples by metric, unit and labels and computes the
// statistics of each group. Groups come out in the order of their first
// sample, so the same samples always give the same summaries. The unit is
// part of the key: samples of one metric in two units are never averaged.
func Summarize(samples []Sample) []Summary {
	type group struct {
		first  Sample
		values []float64
	}
	var order []string
	groups := map[string]*group{}
	for _, s := range samples {
		k := seriesKey(s.Metric, s.Unit, s.Labels)
		g, ok := groups[k]
		if !ok {
			g = &group{first: s}
			groups[k] = g
			order = append(order, k)
		}
		g.values = append(g.values, s.Value)
	}
	out := make([]Summary, 0, len(order))
	for _, k := range order {
		g := groups[k]
		sum := Describe(g.values)
		sum.Metric = g.first.Metric
		sum.Unit = g.first.Unit
		sum.Labels = cloneLabels(g.first.Labels)
		out = append(out, sum)
	}
	return out
}

// Describe computes the statistics of one series of values; Metric, Unit and
// Labels are left empty. Every field is finite (JSON cannot carry NaN): with
// one value the spread is 0, with none the Summary is zero.
func Describe(values []float64) Summary {
	n := len(values)
	if n == 0 {
		return Summary{}
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	s := Summary{
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

// seriesKey identifies one series: metric, unit and the label set in key
// order. The separators cannot occur in ordinary metric names.
func seriesKey(metric, unit string, labels map[string]string) string {
	var b strings.Builder
	b.WriteString(metric)
	b.WriteByte(0)
	b.WriteString(unit)
	for _, k := range sortedKeys(labels) {
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte(1)
		b.WriteString(labels[k])
	}
	return b.String()
}

// labelKey identifies a label set regardless of map order.
func labelKey(labels map[string]string) string {
	return seriesKey("", "", labels)
}

// FormatLabels renders labels as "k=v k=v" in key order, "" for none.
func FormatLabels(labels map[string]string) string {
	keys := sortedKeys(labels)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, " ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func cloneLabels(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
