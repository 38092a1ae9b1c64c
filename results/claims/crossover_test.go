package claims

import (
	"math/rand/v2"
	"testing"

	"lab/results"
)

func TestCrossover(t *testing.T) {
	t.Parallel()
	p5 := []float64{.60, .61, .59, .62, .60, .58, .61}
	r500 := []float64{.90, .92, .89, .93, .91, .88, .90}
	r1000 := []float64{1.10, 1.12, 1.08, 1.11, 1.09, 1.13, 1.10}
	r5000 := []float64{1.30, 1.28, 1.33, 1.31, 1.29, 1.32, 1.30}
	n500 := []float64{.85, .86, .84, .87, .85, .83, .86}
	n1000 := []float64{.90, .91, .89, .92, .90, .88, .91}
	n5000 := []float64{.97, 1.01, .96, 1.02, .98, .99, 1.03}
	i1000 := []float64{1.02, .97, 1.01, .99, 1.03, .98, 1.04}
	i5000 := []float64{1.20, 1.22, 1.18, 1.21, 1.19, 1.23, 1.20}
	sweep := func(v5, v500, v1000, v5000 []float64) []Pair {
		return concat(pairsAt("5", v5, nil), pairsAt("500", v500, nil), pairsAt("1000", v1000, nil), pairsAt("5000", v5000, nil))
	}
	six := func(v []float64) []float64 { return v[:6] }
	below := CrossoverRule{First: "thread", Second: "process", Sweep: "count", Band: [2]float64{500, 1000}}
	notAbove := below
	notAbove.NotAbove, notAbove.Margin = true, 0.10
	tests := []struct {
		name  string
		pairs []Pair
		rule  CrossoverRule
		want  want
	}{
		{"R", sweep(p5, r500, r1000, r5000), below,
			want{results.Reproduced, []string{"thread below process at count=500, p = 0.008", "interpolated near"},
				map[string]float64{"thread below process at count=500": 1.0 / 128, "thread above process at count=1000": 1.0 / 128, "at or before": 1, "at or after": 1}}},
		{"NR", sweep(p5, n500, n1000, n5000), below,
			want{results.NotReproduced, []string{"thread still below process at count=1000, at or after the band, p = 0.008", "Holm over 4 tests"},
				map[string]float64{"still below process at count=1000": 1.0 / 128}}},
		{"I", sweep(p5, r500, i1000, i5000), below,
			want{results.Inconclusive, []string{"within the noise", "thread above process at count=1000, p = 0.4"},
				map[string]float64{"still below process at count=1000": 0.66, "thread above process at count=1000": 0.41}}},
		// k = 4 points need 7 repeats: the NR set with 6 has p = 0.0156 > 0.0125.
		{"too few", sweep(six(p5), six(n500), six(n1000), six(n5000)), below,
			want{results.Inconclusive, []string{"too few pairs", "4 one-sided tests that can refute need 7", "--repeat 7"}, nil}},
		{"lacks band point", concat(pairsAt("5", p5, nil), pairsAt("500", r500, nil), pairsAt("5000", r5000, nil)), below,
			want{results.Inconclusive, []string{"lacks band point 1000"}, nil}},
		// Significantly on the wrong side before the band refutes even
		// when a band point is missing.
		{"wrong side before", concat(pairsAt("5", r5000, nil), pairsAt("5000", r5000, nil)), below,
			want{results.NotReproduced, []string{"thread above process at count=5, at or before the band"}, nil}},
		// not_above: 5 % ahead at 500 is within the "close" margin.
		{"not_above R", sweep(p5, []float64{1.05, 1.04, 1.06, 1.05, 1.03, 1.05, 1.04}, r1000, r5000), notAbove,
			want{results.Reproduced, []string{"thread not above process by 10% at count=500"}, nil}},
		{"not_above NR", sweep(p5, []float64{1.25, 1.24, 1.26, 1.25, 1.23, 1.25, 1.24}, r1000, r5000), notAbove,
			want{results.NotReproduced, []string{"thread above process by more than 10% at count=500"}, nil}},
		{"not a number", pairsAt("many", p5, nil), below, want{results.Inconclusive, []string{"not a number"}, nil}},
	}
	for _, tt := range tests {
		got := Crossover(tt.pairs, tt.rule)
		checkDecision(t, tt.name, got, tt.want)
		checkShuffled(t, tt.name, got, func(rng *rand.Rand) Decision { return Crossover(shuffled(rng, tt.pairs), tt.rule) })
	}
}
