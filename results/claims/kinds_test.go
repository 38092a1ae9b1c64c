package claims

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/stats"
)

// The kinds' tests use the example sets of docs/proposals/verdicts.md §1
// and check the p-values it quotes. Every kind reaches reproduced, not
// reproduced and inconclusive, and inconclusive with the repeats it needs
// when they are too few; shuffling the evidence changes nothing.

func ptr(v float64) *float64 { return &v }

// pairsAt are the pairs (nums[i], dens[i]) at point, repeats 1.., split
// over two runs so that keys differ by run as well as repeat; a nil dens
// is all 1.
func pairsAt(point string, nums, dens []float64) []Pair {
	out := make([]Pair, len(nums))
	for i, n := range nums {
		den := 1.0
		if dens != nil {
			den = dens[i]
		}
		out[i] = Pair{Key: Key{Run: "run-" + string(rune('a'+i%2)), Point: point, Repeat: i / 2}, Num: n, Den: den}
	}
	return out
}

func valuesAt(point string, xs []float64) []Value {
	out := make([]Value, len(xs))
	for i, x := range xs {
		out[i] = Value{Key: Key{Run: "run-" + string(rune('a'+i%2)), Point: point, Repeat: i / 2}, X: x}
	}
	return out
}

func concat[E any](parts ...[]E) []E {
	var out []E
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func shuffled[E any](rng *rand.Rand, in []E) []E {
	out := append([]E(nil), in...)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// want is what a case expects of a decision: the verdict, words of the
// reason, and p-values of the tests whose names contain a key (within
// 0.01, the precision the design quotes them to).
type want struct {
	verdict string
	reason  []string
	p       map[string]float64
}

func checkDecision(t *testing.T, name string, got Decision, w want) {
	t.Helper()
	if got.Verdict != w.verdict {
		t.Errorf("%s: verdict %q, want %q (%s)", name, got.Verdict, w.verdict, got.Reason)
	}
	for _, s := range w.reason {
		if !strings.Contains(got.Reason, s) {
			t.Errorf("%s: reason %q lacks %q", name, got.Reason, s)
		}
	}
	if strings.Contains(got.Reason, "\n") {
		t.Errorf("%s: reason %q is more than one line", name, got.Reason)
	}
	for key, p := range w.p {
		found := false
		for _, tt := range got.Tests {
			if strings.Contains(tt.Name, key) {
				found = true
				if math.Abs(tt.P-p) > 0.01 {
					t.Errorf("%s: p of %q = %.4f, want %.4f", name, tt.Name, tt.P, p)
				}
			}
		}
		if !found {
			t.Errorf("%s: no test named like %q in %+v", name, key, got.Tests)
		}
	}
	for _, n := range got.Numbers {
		if math.IsNaN(n.Value) || math.IsInf(n.Value, 0) {
			t.Errorf("%s: number %s = %v is not finite (JSON cannot carry it)", name, n.Name, n.Value)
		}
	}
}

// checkShuffled decides three shuffles of the evidence and wants the
// decision of the original, to the letter.
func checkShuffled(t *testing.T, name string, got Decision, decide func(rng *rand.Rand) Decision) {
	t.Helper()
	for seed := range uint64(3) {
		if again := decide(rand.New(rand.NewPCG(seed, 20))); !reflect.DeepEqual(again, got) {
			t.Errorf("%s: shuffle %d decided\n%+v\nwant\n%+v", name, seed, again, got)
		}
	}
}

func TestRatio(t *testing.T) {
	t.Parallel()
	den := []float64{1.0, 2.0, 1.5, 3.0, 1.2, 2.5}
	drift := []float64{1.00, .97, 1.02, .99, 1.01, .98}
	var num, den10 []float64
	for i := range den {
		num = append(num, 12*den[i]*drift[i])
		den10 = append(den10, 10*den[i])
	}
	atLeast10 := RatioRule{Num: "process_ms", Den: "thread_ms", Bounds: Bounds{Min: ptr(10)}}
	tests := []struct {
		name  string
		pairs []Pair
		rule  RatioRule
		want  want
	}{
		{"R", pairsAt("", []float64{12.0, 12.4, 11.8, 12.9, 12.2, 12.6}, nil), atLeast10,
			want{results.Reproduced, []string{"process_ms / thread_ms = 12.3", "above 10, p = 0.016"}, map[string]float64{"above 10": 1.0 / 64}}},
		{"NR", pairsAt("", []float64{8.0, 8.4, 7.9, 8.8, 8.1, 8.3}, nil), atLeast10,
			want{results.NotReproduced, []string{"below 10, p = 0.016"}, map[string]float64{"below 10": 1.0 / 64}}},
		{"I", pairsAt("", []float64{9.0, 11.0, 9.5, 10.8, 9.8, 10.3}, nil), atLeast10,
			want{results.Inconclusive, []string{"within the noise"}, map[string]float64{"above 10": 0.50, "below 10": 0.58}}},
		// Host drift moves both series of a repeat: paired, it cancels.
		{"paired despite drift", pairsAt("", num, den), atLeast10,
			want{results.Reproduced, nil, map[string]float64{"above 10": 1.0 / 64}}},
		{"too few", pairsAt("", []float64{12.0, 12.4, 11.8, 12.9}, nil), atLeast10,
			want{results.Inconclusive, []string{"too few pairs", "run with --repeat 5 or more"}, nil}},
		// Min and max: k = 2 needs 6; 5 all inside is still short.
		{"band short", pairsAt("", []float64{12.0, 12.4, 11.8, 12.9, 12.2}, nil), RatioRule{Num: "a", Den: "b", Bounds: Bounds{Min: ptr(10), Max: ptr(15)}},
			want{results.Inconclusive, []string{"--repeat 6"}, nil}},
		{"band above max", pairsAt("", []float64{16.0, 16.4, 15.8, 16.9, 16.2, 16.6}, nil), RatioRule{Num: "a", Den: "b", Bounds: Bounds{Min: ptr(10), Max: ptr(15)}},
			want{results.NotReproduced, []string{"above 15"}, nil}},
		// A ratio at several points: one test a point, refutations under Holm.
		{"points", concat(pairsAt("5", []float64{12.0, 12.4, 11.8, 12.9, 12.2, 12.6}, nil), pairsAt("100", []float64{8.0, 8.4, 7.9, 8.8, 8.1, 8.3}, nil)), atLeast10,
			want{results.NotReproduced, []string{"below 10 at 100", "Holm over 2 tests"}, nil}},
		{"none", nil, atLeast10, want{results.Inconclusive, []string{"no pairs", "--repeat 5"}, nil}},
	}
	for _, tt := range tests {
		got := Ratio(tt.pairs, tt.rule)
		checkDecision(t, tt.name, got, tt.want)
		checkShuffled(t, tt.name, got, func(rng *rand.Rand) Decision { return Ratio(shuffled(rng, tt.pairs), tt.rule) })
	}
	// The old unpaired test of the drift set: the reason E1.1, E1.2 and
	// E3.1 went inconclusive.
	if u, err := stats.MannWhitneyU(num, den10); err != nil || math.Abs(u.PGreater-0.31) > 0.01 {
		t.Errorf("unpaired MW of the drift set: %+v, %v; want P> 0.31", u, err)
	}
}

func TestRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		values []Value
		rule   RangeRule
		want   want
	}{
		{"R", valuesAt("", []float64{3054, 3055, 3054, 3055, 3054}), RangeRule{Metric: "max_threads", Bounds: Bounds{Min: ptr(1000)}},
			want{results.Reproduced, []string{"median max_threads 3054", "above 1000, p = 0.031"}, map[string]float64{"above 1000": 1.0 / 32}}},
		{"NR", valuesAt("", []float64{64.1, 64.1, 64.2, 64.1, 64.1}), RangeRule{Metric: "committed_kb", Bounds: Bounds{Min: ptr(256)}},
			want{results.NotReproduced, []string{"below 256, p = 0.031"}, map[string]float64{"below 256": 1.0 / 32}}},
		{"I", valuesAt("", []float64{990, 1010, 1005, 995, 1002}), RangeRule{Metric: "max_threads", Bounds: Bounds{Min: ptr(1000)}},
			want{results.Inconclusive, []string{"within the noise"}, map[string]float64{"above 1000": 0.59, "below 1000": 0.50}}},
		{"band", valuesAt("", []float64{381, 381, 381, 381, 381, 381}), RangeRule{Metric: "max_threads", Bounds: Bounds{Min: ptr(349), Max: ptr(384)}},
			want{results.Reproduced, []string{"above 349", "below 384"}, nil}},
		{"too few", valuesAt("", []float64{3054, 3055, 3054, 3055}), RangeRule{Metric: "max_threads", Bounds: Bounds{Min: ptr(1000)}},
			want{results.Inconclusive, []string{"too few samples", "--repeat 5"}, nil}},
		{"linear", valuesAt("", []float64{0.2, 0.25, 0.22, 0.21, 0.23}), RangeRule{Metric: "share", Bounds: Bounds{Max: ptr(0.5)}, Linear: true},
			want{results.Reproduced, []string{"below 0.5"}, nil}},
	}
	for _, tt := range tests {
		got := Range(tt.values, tt.rule)
		checkDecision(t, tt.name, got, tt.want)
		checkShuffled(t, tt.name, got, func(rng *rand.Rand) Decision { return Range(shuffled(rng, tt.values), tt.rule) })
	}
}

func partsOf(pairs [][2]float64) []Part {
	out := make([]Part, len(pairs))
	for i, p := range pairs {
		out[i] = Part{Key: Key{Run: "r", Repeat: i}, Rest: p[0], Of: p[1]}
	}
	return out
}

func TestShare(t *testing.T) {
	t.Parallel()
	sys := RangeRule{Metric: "sys share", Bounds: Bounds{Min: ptr(0.5)}}
	tests := []struct {
		name  string
		parts []Part // Rest = user, Of = sys
		want  want
	}{
		{"R", partsOf([][2]float64{{.003, .411}, {.002, .410}, {.003, .412}, {.002, .409}, {.003, .410}, {.002, .411}}),
			want{results.Reproduced, nil, map[string]float64{"above 0.5": 1.0 / 64}}},
		{"NR", partsOf([][2]float64{{.028, .001}, {.027, .002}, {.029, .001}, {.028, .001}, {.028, .002}, {.029, .001}}),
			want{results.NotReproduced, nil, map[string]float64{"below 0.5": 1.0 / 64}}},
		// Two shares of exactly 0.5 say nothing about the side: n = 4.
		{"I, too few after ties", partsOf([][2]float64{{.004, .004}, {.003, .005}, {.005, .003}, {.004, .0045}, {.0045, .004}, {.004, .004}}),
			want{results.Inconclusive, []string{"too few samples", ": 4;", "--repeat 5"}, nil}},
		{"both zero dropped", partsOf([][2]float64{{0, 0}, {.003, .411}, {.002, .410}, {.003, .412}, {.002, .409}, {.003, .410}, {.002, .411}}),
			want{results.Reproduced, []string{"1 repeat with both parts 0 dropped"}, nil}},
	}
	for _, tt := range tests {
		got := Share(tt.parts, sys)
		checkDecision(t, tt.name, got, tt.want)
		checkShuffled(t, tt.name, got, func(rng *rand.Rand) Decision { return Share(shuffled(rng, tt.parts), sys) })
	}
	for _, tt := range tests[:3] {
		for _, p := range Share(tt.parts, sys).Tests {
			if p.Name == "" {
				t.Errorf("%s: a test has no name", tt.name)
			}
		}
	}
}

func TestOrder(t *testing.T) {
	t.Parallel()
	d1 := []float64{1.33, 1.34, 1.33, 1.35, 1.32, 1.33}
	d2 := []float64{.417, .418, .416, .419, .417, .415}
	d3 := []float64{.475, .476, .474, .477, .475, .473}
	set := func(a, b, c []float64) map[string][]Value {
		return map[string][]Value{"1": valuesAt("", a), "2": valuesAt("", b), "3": valuesAt("", c)}
	}
	rule := OrderRule{Label: "design", Above: []string{"1"}, Below: []string{"2", "3"}, Min: 1}
	tests := []struct {
		name   string
		values map[string][]Value
		want   want
	}{
		{"R", set(d1, d2, d3), want{results.Reproduced, []string{"2 pairs above 1", "design=1 / design=3 above 1, p = 0.016"},
			map[string]float64{"design=1 / design=2 above 1": 1.0 / 64, "design=1 / design=3 above 1": 1.0 / 64}}},
		{"NR", set(d1, d2, []float64{1.40, 1.41, 1.39, 1.42, 1.40, 1.38}),
			want{results.NotReproduced, []string{"design=1 / design=3 below 1, p = 0.016", "Holm over 2 tests"}, map[string]float64{"design=1 / design=3 below 1": 1.0 / 64}}},
		{"I", set(d1, d2, []float64{1.30, 1.36, 1.31, 1.37, 1.30, 1.35}),
			want{results.Inconclusive, []string{"within the noise: not design=1 / design=3 above 1"},
				map[string]float64{"design=1 / design=3 above 1": 0.22, "design=1 / design=3 below 1": 0.84}}},
		{"too few", set(d1[:5], d2[:5], d3[:5]), want{results.Inconclusive, []string{"too few pairs", "--repeat 6"}, nil}},
		{"a series missing", map[string][]Value{"1": valuesAt("", d1), "2": valuesAt("", d2)},
			want{results.Inconclusive, []string{"design=1 / design=3 none", "too few pairs"}, nil}},
	}
	for _, tt := range tests {
		got := Order(tt.values, rule)
		checkDecision(t, tt.name, got, tt.want)
		checkShuffled(t, tt.name, got, func(rng *rand.Rand) Decision {
			v := map[string][]Value{}
			for k, s := range tt.values {
				v[k] = shuffled(rng, s)
			}
			r := rule
			r.Below = shuffled(rng, r.Below)
			return Order(v, r)
		})
	}
}

func TestEquivalence(t *testing.T) {
	t.Parallel()
	close, _ := contract.ConventionNamed("close")
	both := EquivalenceRule{Num: "thread", Den: "process", Margin: close.Number}
	lower := both
	lower.Lower = true
	tests := []struct {
		name  string
		pairs []Pair
		rule  EquivalenceRule
		want  want
	}{
		{"R both", pairsAt("", []float64{1.01, .99, 1.02, .98, 1.005, 1.03}, nil), both,
			want{results.Reproduced, []string{"above 0.909", "below 1.1"}, map[string]float64{"above 0.909": 1.0 / 64, "below 1.1": 1.0 / 64}}},
		{"NR both", pairsAt("", []float64{.80, .82, .79, .81, .83, .78}, nil), both,
			want{results.NotReproduced, []string{"below 0.909", "p = 0.016"}, map[string]float64{"below 0.909": 1.0 / 64}}},
		{"I both", pairsAt("", []float64{.90, .95, .88, .93, .91, .92}, nil), both,
			want{results.Inconclusive, []string{"within the noise"}, map[string]float64{"above 0.909": 0.28}}},
		// "No faster" is one-sided: 5-15 % slower reproduces it.
		{"R lower", pairsAt("", []float64{1.15, 1.05, 1.10, 1.12, 1.08, 1.06}, nil), lower,
			want{results.Reproduced, nil, map[string]float64{"above 0.909": 1.0 / 64}}},
		// ...but not "about the same": 1.10 ties with the bound 1.1 and is
		// dropped, and 5 pairs cannot refute at k = 2.
		{"the same both ways", pairsAt("", []float64{1.15, 1.05, 1.10, 1.12, 1.08, 1.06}, nil), both,
			want{results.Inconclusive, []string{"too few pairs for thread / process below 1.1: 5", "--repeat 6"}, nil}},
		{"NR lower", pairsAt("", []float64{.80, .82, .79, .81, .83, .78}, nil), lower,
			want{results.NotReproduced, nil, nil}},
		{"too few", pairsAt("", []float64{1.01, .99, 1.02, .98, 1.005}, nil), both,
			want{results.Inconclusive, []string{"too few pairs", "--repeat 6"}, nil}},
		// E1.5: three points, one-sided, k = 3 needs 6 a point.
		{"points", concat(pairsAt("5", []float64{1.01, .99, 1.02, .98, 1.005, 1.03}, nil), pairsAt("100", []float64{1.01, .99, 1.02, .98, 1.005, 1.03}, nil),
			pairsAt("1000", []float64{.80, .82, .79, .81, .83, .78}, nil)), lower,
			want{results.NotReproduced, []string{"below 0.909 at 1000", "Holm over 3 tests"}, nil}},
	}
	for _, tt := range tests {
		got := Equivalence(tt.pairs, tt.rule)
		checkDecision(t, tt.name, got, tt.want)
		checkShuffled(t, tt.name, got, func(rng *rand.Rand) Decision { return Equivalence(shuffled(rng, tt.pairs), tt.rule) })
	}
	// Both sides: "equal times now reproduce" applies to the lower side
	// alone too.
	if got := Equivalence(pairsAt("", []float64{1.01, .99, 1.02, .98, 1.005, 1.03}, nil), lower); got.Verdict != results.Reproduced {
		t.Errorf("equal times, lower: %s (%s), want reproduced", got.Verdict, got.Reason)
	}
}

// TestMinRepeats: the minimum n of §0, from the refutation family's size.
func TestMinRepeats(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ k, signed, rankSum int }{
		{1, 5, 4}, {2, 6, 4}, {3, 6, 4}, {4, 7, 5}, {6, 7, 5}, {7, 8, 5}, {12, 8, 5}, {13, 9, 6}, {25, 9, 6}, {46, 10, 6},
	} {
		if got := stats.MinSignedRankN(stats.Alpha, tt.k); got != tt.signed {
			t.Errorf("MinSignedRankN(k=%d) = %d, want %d", tt.k, got, tt.signed)
		}
		if got := minRankSumN(stats.Alpha, tt.k); got != tt.rankSum {
			t.Errorf("minRankSumN(k=%d) = %d, want %d", tt.k, got, tt.rankSum)
		}
	}
}
