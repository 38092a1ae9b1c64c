package stats

import (
	"math"
	"testing"
)

func TestMannWhitneyU(t *testing.T) {
	// 60 integers 0..9 against 60 integers 1..10: many ties, normal
	// approximation.
	tiesX := []float64{3, 7, 4, 3, 1, 9, 5, 8, 5, 0, 6, 8, 2, 6, 6, 8, 4, 3, 0, 3, 3, 9, 3, 2, 6, 7, 3, 3, 8, 1,
		7, 0, 5, 2, 3, 2, 7, 7, 4, 2, 9, 0, 6, 1, 5, 0, 9, 8, 3, 7, 2, 9, 6, 6, 1, 4, 3, 0, 8, 1}
	tiesY := []float64{4, 9, 10, 8, 10, 1, 9, 4, 2, 6, 7, 2, 4, 4, 3, 8, 8, 7, 4, 8, 2, 4, 2, 9, 7, 1, 3, 6, 6, 6,
		8, 1, 1, 9, 2, 5, 8, 2, 7, 2, 7, 4, 10, 3, 6, 8, 9, 5, 5, 3, 7, 1, 2, 1, 5, 6, 2, 3, 8, 9}
	var sep1, sep2 []float64
	for i := 0; i < 20; i++ {
		sep1 = append(sep1, float64(i))
		sep2 = append(sep2, float64(100+i))
	}
	tests := []struct {
		name  string
		x, y  []float64
		u, p  float64
		exact bool
	}{
		// R's ?wilcox.test, permeability constants: W = 35, one-sided
		// ("greater") exact p-value 0.1272; two-sided twice that.
		{"R wilcox.test example", []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
			[]float64{1.15, 0.88, 0.90, 0.74, 1.21}, 35, 0.2544122544122544, true},
		// SciPy's mannwhitneyu example (method="exact"): U1 = 17, p = 0.1111.
		{"SciPy mannwhitneyu example", []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}, 17, 1.0 / 9, true},
		// Complete separation: U = 0 is 1 of C(6,3) = 20 arrangements,
		// two-sided 2/20.
		{"separated 3 v 3", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1, true},
		// 20 v 20 separated: 2 / C(40,20) = 2 / 137846528820.
		{"separated 20 v 20", sep2, sep1, 400, 2.0 / 137846528820, true},
		{"identical samples", []float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, 8, 1, false},
		// Cross-checked against github.com/aclements/go-moremath/stats
		// MannWhitneyUTest (LocationDiffers), which gives the same U and p.
		{"ties, 60 v 60", tiesX, tiesY, 1510.5, 0.12721862490686792, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MannWhitneyU(tt.x, tt.y)
			if err != nil {
				t.Fatal(err)
			}
			if got.U != tt.u || !approx(got.P, tt.p) || got.Exact != tt.exact || got.N1 != len(tt.x) || got.N2 != len(tt.y) {
				t.Errorf("got %+v, want U=%v P=%v exact=%v", got, tt.u, tt.p, tt.exact)
			}
			// Swapping the samples mirrors U and keeps P.
			sw, err := MannWhitneyU(tt.y, tt.x)
			if err != nil {
				t.Fatal(err)
			}
			if sw.U != float64(len(tt.x)*len(tt.y))-tt.u || !approx(sw.P, got.P) {
				t.Errorf("swapped: got %+v, want U=%v P=%v", sw, float64(len(tt.x)*len(tt.y))-tt.u, got.P)
			}
		})
	}
}

// The normal approximation alone: SciPy's mannwhitneyu example with
// method="asymptotic" (continuity correction on) gives p = 0.11134688653314041.
func TestMannWhitneyUNormal(t *testing.T) {
	x, y := []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}
	ranks, ties := midranks(x, y)
	if ties {
		t.Fatal("midranks found ties where there are none")
	}
	p, greater, less := normalUP(5, 4, 17, ranks)
	if !approx(p, 0.11134688653314041) {
		t.Errorf("normal p = %.17g, want 0.11134688653314041", p)
	}
	// One-sided, the same continuity correction: SciPy's
	// alternative="greater" gives half the two-sided p here.
	if !approx(greater, 0.11134688653314041/2) || less < 0.9 {
		t.Errorf("normal one-sided p: greater %.17g (want %.17g), less %v", greater, 0.11134688653314041/2, less)
	}
}

// The one-sided exact tails: x entirely above y is the single most
// extreme of C(8,4) = 70 arrangements.
func TestMannWhitneyUOneSided(t *testing.T) {
	u, err := MannWhitneyU([]float64{5, 6, 7, 8}, []float64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if !u.Exact || !approx(u.PGreater, 1.0/70) || !approx(u.PLess, 1) || !approx(u.P, 2.0/70) {
		t.Errorf("MannWhitneyU(above) = %+v, want P> 1/70, P< 1, P 2/70", u)
	}
	u, _ = MannWhitneyU([]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8})
	if !approx(u.PLess, 1.0/70) || !approx(u.PGreater, 1) {
		t.Errorf("MannWhitneyU(below) = %+v, want P< 1/70, P> 1", u)
	}
}

// The exact null distribution sums to 1 and is symmetric about m*n/2.
func TestUDist(t *testing.T) {
	for _, mn := range [][2]int{{1, 1}, {3, 5}, {7, 4}, {20, 20}} {
		d := uDist(mn[0], mn[1])
		if len(d) != mn[0]*mn[1]+1 {
			t.Fatalf("%v: %d values", mn, len(d))
		}
		var sum float64
		for i, p := range d {
			sum += p
			if math.Abs(p-d[len(d)-1-i]) > 1e-15 {
				t.Errorf("%v: P(%d) = %v, P(%d) = %v", mn, i, p, len(d)-1-i, d[len(d)-1-i])
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("%v: sums to %v", mn, sum)
		}
	}
	// m = 1: U is uniform on 0..n.
	for _, p := range uDist(1, 4) {
		if !approx(p, 0.2) {
			t.Errorf("uDist(1, 4) = %v, want 0.2 each", uDist(1, 4))
		}
	}
}

func TestMannWhitneyURefuses(t *testing.T) {
	for _, tt := range []struct{ x, y []float64 }{
		{nil, []float64{1}},
		{[]float64{1}, nil},
		{[]float64{1, math.NaN()}, []float64{2}},
		{[]float64{1}, []float64{math.Inf(1)}},
	} {
		if _, err := MannWhitneyU(tt.x, tt.y); err == nil {
			t.Errorf("MannWhitneyU(%v, %v) accepted", tt.x, tt.y)
		}
	}
}
func approx(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}
