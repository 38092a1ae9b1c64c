package claims

import (
	"math/rand/v2"
	"strings"
	"testing"

	"lab/plugins/contract"
	"lab/results"
)

// diffRows are E5.1-like repeats: Z about 0.412 and A about 1.330, B as
// given.
func diffRows(point string, b []float64) []DiffRow {
	z := []float64{.4120, .4122, .4119, .4121, .4120, .4118, .4121}
	a := []float64{1.330, 1.331, 1.329, 1.332, 1.330, 1.328, 1.331}
	out := make([]DiffRow, len(b))
	for i := range b {
		out[i] = DiffRow{Key: Key{Run: "r", Point: point, Repeat: i}, A: a[i], B: b[i], Z: z[i]}
	}
	return out
}

func TestDiffRatio(t *testing.T) {
	t.Parallel()
	far, _ := contract.ConventionNamed("far")
	rule := DiffRatioRule{A: "cpu_s[1]", B: "cpu_s[K]", Z: "cpu_s[0]", Factor: far.Number}
	z := []float64{.4120, .4122, .4119, .4121, .4120, .4118}
	noise := []float64{.001, -.002, .0005, -.001, .0015, -.003}
	var flat []float64
	for i := range noise {
		flat = append(flat, z[i]+noise[i])
	}
	tests := []struct {
		name string
		rows []DiffRow
		want want
	}{
		{"R", diffRows("2", []float64{.4500, .4506, .4497, .4503, .4502, .4498}),
			want{results.Reproduced, []string{"ratio of medians 24"}, map[string]float64{"cpu_s[K] - cpu_s[0] above 0": 1.0 / 64, "above 0 at 2": 1.0 / 64}}},
		{"NR", diffRows("2", []float64{.5200, .5206, .5197, .5203, .5202, .5198}),
			want{results.NotReproduced, []string{"ratio of medians 8.49", "below 0 at 2, p = 0.016"}, nil}},
		{"I: denominator within its noise", diffRows("2", flat),
			want{results.Inconclusive, []string{"the denominator cpu_s[K] - cpu_s[0] is within its noise"}, map[string]float64{"cpu_s[K] - cpu_s[0] above 0": 0.75}}},
		{"I: denominator below 0", diffRows("2", []float64{.40, .401, .399, .4, .402, .398}),
			want{results.Inconclusive, []string{"costs no more than cpu_s[0], no factor"}, nil}},
		// E5.1's four pairs: k = 4 needs 7.
		{"too few", concat(diffRows("2", []float64{.4500, .4506, .4497, .4503, .4502, .4498}), diffRows("3", []float64{.4500, .4506, .4497, .4503, .4502, .4498}),
			diffRows("4", []float64{.4500, .4506, .4497, .4503, .4502, .4498}), diffRows("5", []float64{.4500, .4506, .4497, .4503, .4502, .4498})),
			want{results.Inconclusive, []string{"too few repeats", "--repeat 7"}, nil}},
	}
	for _, tt := range tests {
		got := DiffRatio(tt.rows, rule)
		checkDecision(t, tt.name, got, tt.want)
		checkShuffled(t, tt.name, got, func(rng *rand.Rand) Decision { return DiffRatio(shuffled(rng, tt.rows), rule) })
		if strings.HasPrefix(tt.name, "I: denominator") {
			for _, n := range got.Numbers {
				if strings.HasPrefix(n.Name, "ratio") {
					t.Errorf("%s: reports %s = %v; a denominator within its noise gives no factor", tt.name, n.Name, n.Value)
				}
			}
		}
	}
}
