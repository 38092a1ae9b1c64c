package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// SRTest is a Wilcoxon signed-rank test of whether values d (per-repeat
// log ratios, differences against a bound...) are centred on zero. Its
// one-sided p-values are what a claim's bounds are decided with: a bound
// is confirmed when the values lie significantly on its side, refuted
// when they lie significantly on the other.
type SRTest struct {
	// N is the number of non-zero values the test used; Zeros were
	// dropped (a value equal to the bound says nothing about its side).
	N, Zeros int
	// WPlus is the sum of the ranks of |d| over the positive values,
	// ties getting the mean of the ranks they span.
	WPlus float64
	// PGreater is the one-sided p-value that d is centred above zero:
	// P(W+ >= WPlus) if every sign were a coin toss. PLess is the other
	// tail, P(W+ <= WPlus).
	PGreater, PLess float64
	// Exact says the p-values come from the exact distribution of W+
	// given the ranks (ties included), as for N <= MaxExactSignedRank;
	// otherwise from the normal approximation with tie and continuity
	// corrections.
	Exact bool
}

// MaxExactSignedRank is the largest N whose signed-rank p-values are
// computed exactly (2^50 sign patterns, as counts in float64: exact).
const MaxExactSignedRank = 50

// SignedRank tests whether d is centred on zero, one-sided either way.
// Zeros are dropped; with nothing left both p-values are 1.
func SignedRank(d []float64) (SRTest, error) {
	var abs []float64
	var pos []bool
	t := SRTest{}
	for _, v := range d {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return SRTest{}, fmt.Errorf("signed-rank test: %v is not a finite number", v)
		}
		if v == 0 {
			t.Zeros++
			continue
		}
		abs = append(abs, math.Abs(v))
		pos = append(pos, v > 0)
	}
	t.N = len(abs)
	if t.N == 0 {
		t.PGreater, t.PLess, t.Exact = 1, 1, true
		return t, nil
	}
	ranks, _ := midranks(abs, nil)
	for i, r := range ranks {
		if pos[i] {
			t.WPlus += r
		}
	}
	if t.N <= MaxExactSignedRank {
		t.Exact = true
		t.PGreater, t.PLess = exactSRP(ranks, t.WPlus)
		return t, nil
	}
	t.PGreater, t.PLess = normalSRP(ranks, t.WPlus)
	return t, nil
}

// exactSRP is P(W+ >= w) and P(W+ <= w) when each rank counts towards W+
// with probability 1/2. Midranks are multiples of 1/2, so the doubled
// ranks are integers and the distribution is a convolution over them.
func exactSRP(ranks []float64, w float64) (greater, less float64) {
	total := 0
	doubled := make([]int, len(ranks))
	for i, r := range ranks {
		doubled[i] = int(math.Round(2 * r))
		total += doubled[i]
	}
	dist := make([]float64, total+1) // dist[s] = P(doubled W+ = s)
	dist[0] = 1
	top := 0
	for _, r := range doubled {
		for s := top; s >= 0; s-- {
			if dist[s] != 0 {
				dist[s+r] += dist[s] / 2
				dist[s] /= 2
			}
		}
		top += r
	}
	k := int(math.Round(2 * w))
	for s, p := range dist {
		if s >= k {
			greater += p
		}
		if s <= k {
			less += p
		}
	}
	return math.Min(1, greater), math.Min(1, less)
}

// normalSRP is exactSRP from the normal approximation: mean N(N+1)/4,
// variance N(N+1)(2N+1)/24 less the tie correction sum(t^3-t)/48, and a
// continuity correction of 1/2.
func normalSRP(ranks []float64, w float64) (greater, less float64) {
	n := float64(len(ranks))
	tc := tieCorrection(ranks)
	mean := n * (n + 1) / 4
	sigma := math.Sqrt(n*(n+1)*(2*n+1)/24 - tc/48)
	if sigma == 0 {
		return 1, 1
	}
	upper := (w - 0.5 - mean) / sigma // P(W >= w) = P(Z >= upper)
	lower := (w + 0.5 - mean) / sigma // P(W <= w) = P(Z <= lower)
	return math.Erfc(upper/math.Sqrt2) / 2, math.Erfc(-lower/math.Sqrt2) / 2
}

// Holm says which of the hypotheses with one-sided or two-sided p-values
// ps Holm's step-down procedure rejects at family-wise error rate alpha:
// the i-th smallest p-value (from 0) is rejected while it is at most
// alpha/(k-i), and the procedure stops at the first that is not. Equal
// p-values are taken in their order in ps, so the answer depends on the
// p-values alone, never on the order evidence arrived in.
func Holm(ps []float64, alpha float64) ([]bool, error) {
	for _, p := range ps {
		if math.IsNaN(p) || p < 0 || p > 1 {
			return nil, fmt.Errorf("Holm: p-value %v is not in [0, 1]", p)
		}
	}
	if alpha <= 0 || alpha >= 1 {
		return nil, errors.New("Holm: alpha must be in (0, 1)")
	}
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case ps[a] < ps[b]:
			return -1
		case ps[a] > ps[b]:
			return 1
		}
		return 0
	})
	reject := make([]bool, len(ps))
	for i, j := range idx {
		if ps[j] > alpha/float64(len(ps)-i) {
			break
		}
		reject[j] = true
	}
	return reject, nil
}

// MinSignedRankN is the smallest N of non-zero values with which a
// one-sided signed-rank test can reject at level alpha/k, as Holm's first
// step over a family of k tests needs: its smallest p-value is 2^-N.
func MinSignedRankN(alpha float64, k int) int {
	n := 1
	for math.Pow(2, -float64(n)) > alpha/float64(max(k, 1)) {
		n++
	}
	return n
}
