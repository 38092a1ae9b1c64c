package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSignedRankKnown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		d        []float64
		n, zeros int
		wplus    float64
		greater  float64
		less     float64
	}{
		// Five values, all above: the most extreme of 2^5 sign patterns.
		{"five above", []float64{1, 2, 3, 4, 5}, 5, 0, 15, 1.0 / 32, 1},
		{"five below", []float64{-1, -2, -3, -4, -5}, 5, 0, 0, 1, 1.0 / 32},
		// Six, one barely below: W+ = 20 of 21; two patterns reach it.
		{"one small outlier", []float64{1, 2, 3, 4, 5, -0.5}, 6, 0, 20, 2.0 / 64, 63.0 / 64},
		// Zeros say nothing about the side: dropped.
		{"zeros dropped", []float64{0, 1, 0, 2, 3, 4, 5}, 5, 2, 15, 1.0 / 32, 1},
		{"all zero", []float64{0, 0}, 0, 2, 0, 1, 1},
		// Ties: |d| = 1,1,2,2 get ranks 1.5,1.5,3.5,3.5; of the 16
		// patterns, {a,c,d}, {b,c,d} and all four reach W+ >= 8.5.
		{"ties", []float64{1, -1, 2, 2}, 4, 0, 8.5, 3.0 / 16, 15.0 / 16},
	}
	for _, tt := range tests {
		got, err := SignedRank(tt.d)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got.N != tt.n || got.Zeros != tt.zeros || got.WPlus != tt.wplus || !got.Exact ||
			math.Abs(got.PGreater-tt.greater) > 1e-12 || math.Abs(got.PLess-tt.less) > 1e-12 {
			t.Errorf("%s: SignedRank(%v) = %+v, want N %d zeros %d W+ %v P> %v P< %v", tt.name, tt.d, got, tt.n, tt.zeros, tt.wplus, tt.greater, tt.less)
		}
	}
}

// bruteSR enumerates every sign pattern of |d|'s midranks.
func bruteSR(d []float64) (greater, less float64) {
	var abs []float64
	var pos []bool
	for _, v := range d {
		if v != 0 {
			abs = append(abs, math.Abs(v))
			pos = append(pos, v > 0)
		}
	}
	ranks, _ := midranks(abs, nil)
	var w float64
	for i, r := range ranks {
		if pos[i] {
			w += r
		}
	}
	n := len(ranks)
	for mask := 0; mask < 1<<n; mask++ {
		var s float64
		for i, r := range ranks {
			if mask&(1<<i) != 0 {
				s += r
			}
		}
		if s >= w-1e-9 {
			greater++
		}
		if s <= w+1e-9 {
			less++
		}
	}
	return greater / float64(int(1)<<n), less / float64(int(1)<<n)
}

// The exact distribution agrees with enumerating every sign pattern, ties
// and all, whatever the order of the values.
func TestSignedRankMatchesEnumeration(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + r.IntN(12)
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(r.IntN(7) - 3) // ties and zeros on purpose
		}
		got, err := SignedRank(d)
		if err != nil {
			t.Fatal(err)
		}
		g, l := bruteSR(d)
		if math.Abs(got.PGreater-g) > 1e-12 || math.Abs(got.PLess-l) > 1e-12 {
			t.Fatalf("trial %d: SignedRank(%v): P> %v P< %v, enumeration %v %v", trial, d, got.PGreater, got.PLess, g, l)
		}
		shuffled := slices.Clone(d)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if again, _ := SignedRank(shuffled); again != got {
			t.Fatalf("trial %d: order changed the test: %+v vs %+v", trial, again, got)
		}
	}
}

// Past MaxExactSignedRank the normal approximation takes over; at the
// boundary it is close to the exact answer.
func TestSignedRankNormal(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	d := make([]float64, MaxExactSignedRank)
	for i := range d {
		d[i] = r.NormFloat64() + 0.3
	}
	exact, err := SignedRank(d)
	if err != nil || !exact.Exact {
		t.Fatalf("SignedRank: %+v, %v", exact, err)
	}
	ranks, _ := midranks(absAll(d), nil)
	g, l := normalSRP(ranks, exact.WPlus)
	if math.Abs(g-exact.PGreater) > 0.005 || math.Abs(l-exact.PLess) > 0.005 {
		t.Errorf("normal approximation P> %v P< %v, exact %v %v", g, l, exact.PGreater, exact.PLess)
	}
	big, err := SignedRank(append(d, 1))
	if err != nil || big.Exact || big.PGreater >= 0.05 == (exact.PGreater < 0.05) {
		t.Errorf("N=%d: %+v, %v", MaxExactSignedRank+1, big, err)
	}
	if _, err := SignedRank([]float64{1, math.NaN()}); err == nil {
		t.Error("SignedRank accepted NaN")
	}
}

func absAll(d []float64) []float64 {
	out := make([]float64, len(d))
	for i, v := range d {
		out[i] = math.Abs(v)
	}
	return out
}

func TestHolm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ps    []float64
		alpha float64
		want  []bool
	}{
		{[]float64{0.01, 0.04, 0.03}, 0.05, []bool{true, false, false}}, // 0.01 <= 0.05/3; 0.03 > 0.05/2: stop
		{[]float64{0.01, 0.02, 0.04}, 0.05, []bool{true, true, true}},   // 0.01 <= .0167, 0.02 <= .025, 0.04 <= .05
		{[]float64{0.2, 0.001}, 0.05, []bool{false, true}},
		{[]float64{0.03}, 0.05, []bool{true}},
		{[]float64{0.025, 0.025}, 0.05, []bool{true, true}},
		{nil, 0.05, []bool{}},
	}
	for _, tt := range tests {
		got, err := Holm(tt.ps, tt.alpha)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Holm(%v, %v) = %v, want %v", tt.ps, tt.alpha, got, tt.want)
		}
	}
	if _, err := Holm([]float64{1.5}, 0.05); err == nil {
		t.Error("Holm accepted p = 1.5")
	}
}

func TestMinSignedRankN(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ k, want int }{{1, 5}, {2, 6}, {3, 6}, {4, 7}, {6, 7}, {7, 8}, {12, 8}, {13, 9}} {
		if got := MinSignedRankN(0.05, tt.k); got != tt.want {
			t.Errorf("MinSignedRankN(0.05, %d) = %d, want %d", tt.k, got, tt.want)
		}
	}
}
