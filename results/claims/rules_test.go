package claims

import (
	"lab/results/stats"
	"testing"
)

func TestSignTest(t *testing.T) {
	tests := []struct {
		xs           []float64
		above, below int
		p            float64
	}{
		{[]float64{1, 1, 1, 1, 1, 1}, 6, 0, 2.0 / 64},
		{[]float64{1, 1, 1, 1, 1}, 5, 0, 2.0 / 32},
		{[]float64{1, 1, 1, 1, -1, -1}, 4, 2, 2 * 22.0 / 64},
		{[]float64{0, 0, 1}, 1, 0, 1},
	}
	for _, tt := range tests {
		a, b, p := signTest(tt.xs, 0)
		if a != tt.above || b != tt.below || abs(p-tt.p) > 1e-12 {
			t.Errorf("signTest(%v, 0) = %d, %d, %v; want %d, %d, %v", tt.xs, a, b, p, tt.above, tt.below, tt.p)
		}
	}
}

// The thresholds docs/claims.md states are the tests' real limits.
func TestMinimumSamples(t *testing.T) {
	lo, hi := []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}
	if u, _ := stats.MannWhitneyU(lo[:3], hi[:3]); u.P < stats.Alpha {
		t.Errorf("3 a side reach p = %v < %v; MinRankSamples would be too strict", u.P, stats.Alpha)
	}
	if u, _ := stats.MannWhitneyU(lo, hi); u.P >= stats.Alpha {
		t.Errorf("4 a side give at best p = %v; MinRankSamples is wrong", u.P)
	}
	if _, _, p := signTest([]float64{1, 1, 1, 1, 1}, 0); p < stats.Alpha {
		t.Errorf("5 samples reach p = %v; MinSignSamples would be too strict", p)
	}
	if _, _, p := signTest([]float64{1, 1, 1, 1, 1, 1}, 0); p >= stats.Alpha {
		t.Errorf("6 samples give at best p = %v; MinSignSamples is wrong", p)
	}
}
func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
