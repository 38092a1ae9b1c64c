package stats_test

import (
	"math"
	"reflect"
	"testing"

	"lab/results"
	"lab/results/compare"

	"lab/internal/fixture"

	"lab/results/stats"
)

func approx(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

func TestSummaryOf(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		want   results.Summary
	}{
		{
			name:   "outlier",
			values: []float64{3, 1, 100, 2, 4},
			want: results.Summary{N: 5, Median: 3, Mean: 22, TrimmedMean: 3, Min: 1, Max: 100, MAD: 1,
				Stddev: math.Sqrt(7610.0 / 4), CV: math.Sqrt(7610.0/4) / 22},
		},
		{
			name:   "even count",
			values: []float64{2, 4, 4, 4, 5, 5, 7, 9},
			want: results.Summary{N: 8, Median: 4.5, Mean: 5, TrimmedMean: 29.0 / 6, Min: 2, Max: 9, MAD: 0.5,
				Stddev: math.Sqrt(32.0 / 7), CV: math.Sqrt(32.0/7) / 5},
		},
		{
			name:   "one value has no spread",
			values: []float64{7},
			want:   results.Summary{N: 1, Median: 7, Mean: 7, TrimmedMean: 7, Min: 7, Max: 7},
		},
		{
			name:   "zero mean gives zero CV, not NaN",
			values: []float64{-1, 1},
			want:   results.Summary{N: 2, Min: -1, Max: 1, MAD: 1, Stddev: math.Sqrt2},
		},
		{name: "empty", values: nil, want: results.Summary{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stats.SummaryOf(tt.values)
			g := []float64{float64(got.N), got.Median, got.Mean, got.TrimmedMean, got.Min, got.Max, got.MAD, got.Stddev, got.CV}
			w := []float64{float64(tt.want.N), tt.want.Median, tt.want.Mean, tt.want.TrimmedMean, tt.want.Min, tt.want.Max, tt.want.MAD, tt.want.Stddev, tt.want.CV}
			names := []string{"N", "Median", "Mean", "TrimmedMean", "Min", "Max", "MAD", "Stddev", "CV"}
			for i := range g {
				if !approx(g[i], w[i]) {
					t.Errorf("%s = %v, want %v", names[i], g[i], w[i])
				}
			}
		})
	}
}

func TestDescribeDoesNotReorderInput(t *testing.T) {
	in := []float64{3, 1, 2}
	stats.SummaryOf(in)
	if want := []float64{3, 1, 2}; !reflect.DeepEqual(in, want) {
		t.Errorf("input = %v after Describe, want %v", in, want)
	}
}

func TestTrimmedMean(t *testing.T) {
	tests := []struct {
		values []float64
		want   float64
	}{
		{nil, 0},
		{[]float64{5}, 5},
		{[]float64{1, 3}, 2},
		{[]float64{1, 2, 9}, 2},
		// E1: five runs, drop min and max, mean of the middle three.
		{[]float64{10, 1, 12, 11, 100}, 11},
		// Only one copy of a repeated extreme is dropped.
		{[]float64{1, 1, 5, 9, 9}, 5},
	}
	for _, tt := range tests {
		if got := stats.TrimmedMean(tt.values); !approx(got, tt.want) {
			t.Errorf("TrimmedMean(%v) = %v, want %v", tt.values, got, tt.want)
		}
	}
}

func TestSummarizeGroups(t *testing.T) {
	samples := []results.Sample{
		{Metric: "b", Value: 10, Unit: "ms", Labels: map[string]string{"count": "5", "p": "255"}},
		{Metric: "a", Value: 1, Unit: "µs"},
		{Metric: "b", Value: 30, Unit: "ms", Labels: map[string]string{"count": "50", "p": "255"}},
		{Metric: "b", Value: 20, Unit: "ms", Labels: map[string]string{"p": "255", "count": "5"}},
		{Metric: "a", Value: 3, Unit: "µs"},
		{Metric: "a", Value: 2, Unit: "µs", Repeat: 2},
		// Same metric, other unit: its own series, never averaged in.
		{Metric: "a", Value: 9, Unit: "ms"},
	}
	got := stats.Summarize(samples)
	type row struct {
		metric, unit, labels string
		n                    int
		median               float64
	}
	want := []row{
		{"b", "ms", "count=5 p=255", 2, 15},
		{"a", "µs", "", 3, 2},
		{"b", "ms", "count=50 p=255", 1, 30},
		{"a", "ms", "", 1, 9},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d summaries, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := row{got[i].Metric, got[i].Unit, results.FormatLabels(got[i].Labels), got[i].N, got[i].Median}
		if g != w {
			t.Errorf("summary %d = %+v, want %+v", i, g, w)
		}
	}
	// Labels are copied, not shared with the samples.
	got[0].Labels["count"] = "changed"
	if samples[0].Labels["count"] != "5" {
		t.Errorf("Summarize shares label maps with its input")
	}
}

func TestAnalyze(t *testing.T) {
	r := fixture.Result()
	r.Machine.Profile = map[string]any{"name": "rockhopper-2.4"}
	compare.Analyze(r, fixture.ForkbenchRefs(t, "forktime"))
	if len(r.Summary) != 3 || r.Summary[0].Median != 386.25 {
		t.Errorf("Summary = %+v, want 3 series, fork median 386.25", r.Summary)
	}
	if len(r.Comparisons) == 0 || r.Comparisons[0].Published != 721.7 || !r.Comparisons[0].SameProfile {
		t.Errorf("first comparison = %+v, want Rockhopper's 721.7 µs", r.Comparisons)
	}
}
