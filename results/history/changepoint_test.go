package history

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// noisy is n values around level with a relative spread cv (log-normal),
// drawn from a fixed seed.
func noisy(seed uint64, n int, level, cv float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	for i := range out {
		out[i] = level * math.Exp(cv*r.NormFloat64())
	}
	return out
}

func indexes(cps []ChangePoint) []int {
	out := []int{}
	for _, c := range cps {
		out = append(out, c.Index)
	}
	return out
}

// TestDetectSays shows the detector's three answers on synthetic series:
// a change where there is one, none in noise, and none it can claim from
// too few nights or from a change smaller than asked for.
func TestDetectSays(t *testing.T) {
	step := func(n, at int, cv, pct float64) []float64 {
		x := noisy(7, n, 100, cv)
		for i := at; i < n; i++ {
			x[i] *= 1 + pct/100
		}
		return x
	}
	cases := []struct {
		name string
		x    []float64
		o    Options
		want []int
	}{
		{"a 20% step in 1% noise", step(20, 12, 0.01, 20), Defaults(), []int{12}},
		{"a 10% step on the last night", step(20, 19, 0.01, 10), Defaults(), []int{19}},
		{"3 nights before, 2 after", step(5, 3, 0.005, 10), Defaults(), []int{3}},
		{"up, then back down", func() []float64 {
			x := step(30, 10, 0.01, 15)
			for i := 20; i < 30; i++ {
				x[i] /= 1.15
			}
			return x
		}(), Defaults(), []int{10, 20}},
		{"pure 1% noise", noisy(3, 30, 100, 0.01), Defaults(), []int{}},
		{"constant", []float64{5, 5, 5, 5, 5, 5}, Defaults(), []int{}},
		{"a 1% step, significant but under 5%", step(20, 10, 0.001, 1), Defaults(), []int{}},
		{"the same 1% step at 0.5%", step(20, 10, 0.001, 1), Options{Alpha: DefaultAlpha, MinChange: 0.5}, []int{10}},
		{"two nights: cannot tell", []float64{100, 200}, Defaults(), []int{}},
		{"a 2% step in 5% noise", step(30, 15, 0.05, 2), Defaults(), []int{}},
		// issue 31: a single night off is a change only far outside the
		// noise (SingleNightZ), and with enough nights to know it.
		{"the last night 40% off nights that repeat exactly", []float64{10, 10, 10, 10, 10, 14}, Options{Alpha: DefaultAlpha, MinChange: DefaultMinChange, MedianNoise: 12}, []int{}},
		{"the same with no repeat noise known", []float64{10, 10, 10, 10, 10, 14}, Defaults(), []int{5}},
		{"one night off after 3", []float64{10, 10.1, 10.05, 14}, Defaults(), []int{}},
		// A step whose sides end with a night a hair off: the split makes
		// single-night cuts beside the step, which must not take it away
		// (the make test run under load lost syscallbench's step so).
		{"a step beside single-night cuts", []float64{575, 575, 575.5, 779.1, 779.1, 779.6}, Options{Alpha: DefaultAlpha, MinChange: DefaultMinChange, MedianNoise: 2.9}, []int{3}},
		{"a spike in the middle", func() []float64 { x := noisy(5, 21, 100, 0.02); x[10] *= 1.15; return x }(), Defaults(), []int{}},
	}
	for _, c := range cases {
		got := indexes(Detect(c.x, c.o))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: change points at %v, want %v (series %.4g)", c.name, got, c.want, c.x)
		}
	}
}

// TestDetectReports: the change point's means, change and p-value are
// those of the segments on either side of it.
func TestDetectReports(t *testing.T) {
	x := []float64{10, 10.1, 9.9, 10, 12, 12.1, 11.9, 12}
	cps := Detect(x, Defaults())
	if len(cps) != 1 {
		t.Fatalf("change points %+v, want one", cps)
	}
	c := cps[0]
	if c.Index != 4 || math.Abs(c.Before-10) > 1e-9 || math.Abs(c.After-12) > 1e-9 || math.Abs(c.Change-20) > 1e-9 || !(c.P < 1e-5) {
		t.Errorf("change point %+v, want index 4, 10 -> 12, +20%%, p < 1e-5", c)
	}
}

// TestDetectDeterministic: the same history gives the same change points.
func TestDetectDeterministic(t *testing.T) {
	x := noisy(11, 40, 50, 0.03)
	for i := 25; i < 40; i++ {
		x[i] *= 1.12
	}
	first := Detect(x, Defaults())
	for i := 0; i < 5; i++ {
		if got := Detect(append([]float64(nil), x...), Defaults()); !reflect.DeepEqual(got, first) {
			t.Fatalf("run %d: %+v, first %+v", i, got, first)
		}
	}
}

// TestBestSplitNaive: the running-sum statistic picks the split the
// definition picks.
func TestBestSplitNaive(t *testing.T) {
	naive := func(z []float64) int {
		best, bestQ := -1, 0.0
		n := len(z)
		for tau := 1; tau < n; tau++ {
			x, y := z[:tau], z[tau:]
			m, k := float64(len(x)), float64(len(y))
			b := 0.0
			for _, a := range x {
				for _, c := range y {
					b += math.Abs(a - c)
				}
			}
			q := 2 * b / (m * k)
			within := func(s []float64) float64 {
				if len(s) < 2 {
					return 0
				}
				w := 0.0
				for i := range s {
					for j := i + 1; j < len(s); j++ {
						w += math.Abs(s[i] - s[j])
					}
				}
				l := float64(len(s))
				return w / (l * (l - 1) / 2)
			}
			q = (q - within(x) - within(y)) * m * k / (m + k)
			if q > bestQ*(1+1e-12) && q > 0 {
				best, bestQ = tau, q
			}
		}
		return best
	}
	for seed := uint64(0); seed < 50; seed++ {
		z := noisy(seed, 3+int(seed%25), 10, 0.2)
		if got, want := bestSplit(z), naive(z); got != want {
			t.Errorf("seed %d: bestSplit %d, naive %d (%v)", seed, got, want, z)
		}
	}
}

func TestTTest(t *testing.T) {
	// Means 2.5 and 4.5, pooled variance 10/6: t = 2/sqrt(10/6/2) =
	// 2.191 on 6 degrees of freedom, two-sided p = 0.0710.
	if p := tTest([]float64{1, 2, 3, 4}, []float64{3, 4, 5, 6}); math.Abs(p-0.0710) > 5e-4 {
		t.Errorf("p = %.4f, want 0.0710", p)
	}
	// The t table: t = 2.447 on 6 degrees of freedom is p = 0.05; shift
	// b so that the statistic is exactly that.
	d := 2.447 * math.Sqrt(10.0/6/2)
	if p := tTest([]float64{1, 2, 3, 4}, []float64{1 + d, 2 + d, 3 + d, 4 + d}); math.Abs(p-0.05) > 5e-4 {
		t.Errorf("t = 2.447, 6 df: p = %.4f, want 0.05", p)
	}
	if p := tTest([]float64{1, 1}, []float64{2}); p != 0 {
		t.Errorf("constant sides that differ: p = %v, want 0", p)
	}
	if p := tTest([]float64{1}, []float64{2}); p != 1 {
		t.Errorf("one value a side: p = %v, want 1 (cannot tell)", p)
	}
}
