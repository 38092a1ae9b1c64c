package claims

import (
	"math/rand/v2"
	"testing"

	"lab/plugins/contract"
	"lab/results"
)

func TestSpeedup(t *testing.T) {
	t.Parallel()
	fast := []float64{1.0, 1.02, .98, 1.01}
	about2 := SpeedupRule{Metric: "real_s", Base: "xeon5130-1core", Fast: "xeon5130-2core", Bounds: Bounds{Min: ptr(1.5), Max: ptr(2.5)}}
	tests := []struct {
		name       string
		base, fast []Value
		want       want
	}{
		{"R", valuesAt("", []float64{2.0, 2.1, 1.9, 2.05}), valuesAt("", fast),
			want{results.Reproduced, []string{"above 1.5, p = 0.014", "below 2.5, p = 0.014"}, map[string]float64{"above 1.5": 1.0 / 70, "below 2.5": 1.0 / 70}}},
		{"NR", valuesAt("", []float64{1.0, 1.05, .98, 1.02}), valuesAt("", []float64{1.0, 1.01, .99, 1.02}),
			want{results.NotReproduced, []string{"below 1.5, p = 0.014", "Holm over 2 tests"}, map[string]float64{"below 1.5": 1.0 / 70}}},
		{"I", valuesAt("", []float64{1.4, 1.6, 1.52, 1.55}), valuesAt("", []float64{1.0, 1.01, .99, 1.02}),
			want{results.Inconclusive, []string{"within the noise"}, map[string]float64{"above 1.5": 0.24, "below 1.5": 0.83}}},
		{"too few", valuesAt("", []float64{2.0, 2.1, 1.9}), valuesAt("", []float64{1.0, 1.02, .98}),
			want{results.Inconclusive, []string{"too few samples a side", "run each with --repeat 4 or more"}, nil}},
		// E1.8: two modes x two bounds, k = 4, needs 5 a side.
		{"two modes short", concat(valuesAt("process", []float64{2.0, 2.1, 1.9, 2.05}), valuesAt("thread", []float64{2.0, 2.1, 1.9, 2.05})),
			concat(valuesAt("process", fast), valuesAt("thread", fast)),
			want{results.Inconclusive, []string{"--repeat 5"}, nil}},
		{"one side missing", valuesAt("", []float64{2.0, 2.1, 1.9, 2.05}), nil,
			want{results.Inconclusive, []string{"too few samples a side"}, nil}},
	}
	for _, tt := range tests {
		got := Speedup(tt.base, tt.fast, about2)
		checkDecision(t, tt.name, got, tt.want)
		checkShuffled(t, tt.name, got, func(rng *rand.Rand) Decision {
			return Speedup(shuffled(rng, tt.base), shuffled(rng, tt.fast), about2)
		})
	}
}

func TestEquivalenceUnpaired(t *testing.T) {
	t.Parallel()
	close, _ := contract.ConventionNamed("close")
	rule := EquivalenceRule{Num: "real_s on 2 cores", Den: "real_s on 1 core", Margin: close.Number}
	one := []float64{1.0, 1.01, .99, 1.02, 1.0}
	tests := []struct {
		name     string
		num, den []Value
		want     want
	}{
		{"R", valuesAt("", []float64{1.01, 1.0, 1.02, .99, 1.0}), valuesAt("", one), want{results.Reproduced, nil, nil}},
		{"NR", valuesAt("", []float64{.5, .51, .49, .52, .5}), valuesAt("", one), want{results.NotReproduced, []string{"below 0.909"}, nil}},
		{"I", valuesAt("", []float64{.88, .95, .9, .93, .91}), valuesAt("", one), want{results.Inconclusive, []string{"within the noise"}, nil}},
		{"too few", valuesAt("", []float64{1.01, 1.0, 1.02}), valuesAt("", one[:3]), want{results.Inconclusive, []string{"--repeat 4"}, nil}},
	}
	for _, tt := range tests {
		got := EquivalenceUnpaired(tt.num, tt.den, rule)
		checkDecision(t, tt.name, got, tt.want)
		checkShuffled(t, tt.name, got, func(rng *rand.Rand) Decision {
			return EquivalenceUnpaired(shuffled(rng, tt.num), shuffled(rng, tt.den), rule)
		})
	}
}

func TestTrend(t *testing.T) {
	t.Parallel()
	trend, _ := contract.ConventionNamed("trend")
	rule := TrendRule{A: "thread", B: "process", Param: "workers", Margin: trend.Number}
	at350 := pairsAt("350", []float64{1.00, 1.02, .98, 1.01}, nil)
	tests := []struct {
		name  string
		pairs []Pair
		want  want
	}{
		{"R", concat(at350, pairsAt("1000", []float64{.80, .82, .79, .81}, nil)),
			want{results.Reproduced, []string{"more than 10% below its value at workers=350, p = 0.014"}, map[string]float64{"more than": 1.0 / 70}}},
		{"NR", concat(at350, pairsAt("1000", []float64{1.00, 1.01, .99, 1.02}, nil)),
			want{results.NotReproduced, []string{"less than 10% below"}, map[string]float64{"less than": 1.0 / 70}}},
		{"I", concat(at350, pairsAt("1000", []float64{.90, .93, .88, .95}, nil)),
			want{results.Inconclusive, []string{"within the noise"}, map[string]float64{"more than": 0.66, "less than": 0.44}}},
		{"points between are reported", concat(at350, pairsAt("500", []float64{5, 5, 5, 5}, nil), pairsAt("1000", []float64{.80, .82, .79, .81}, nil)),
			want{results.Reproduced, []string{"5 at 500"}, nil}},
		{"too few", concat(at350[:3], pairsAt("1000", []float64{.80, .82, .79}, nil)),
			want{results.Inconclusive, []string{"too few pairs", "--repeat 4"}, nil}},
		{"one point", at350, want{results.Inconclusive, []string{"a trend needs two", "--repeat 4"}, nil}},
	}
	for _, tt := range tests {
		got := Trend(tt.pairs, rule)
		checkDecision(t, tt.name, got, tt.want)
		checkShuffled(t, tt.name, got, func(rng *rand.Rand) Decision { return Trend(shuffled(rng, tt.pairs), rule) })
	}
}
