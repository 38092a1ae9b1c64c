package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// UTest is the result of a two-sided Mann–Whitney U test (the Wilcoxon
// rank-sum test) of sample x against sample y.
type UTest struct {
	// U is the statistic of x: the number of pairs (xi, yj) with xi > yj,
	// ties counting one half (R's W). The statistic of y is N1*N2 - U.
	U      float64
	N1, N2 int
	// P is the two-sided p-value: the probability, if x and y come from
	// the same distribution, of a U at least this far from N1*N2/2.
	P float64
	// PGreater and PLess are the one-sided p-values that x lies above y
	// (P(U >= U observed)) and below it (P(U <= U observed)).
	PGreater, PLess float64
	// Exact says P comes from the exact distribution of U (no ties, both
	// samples under 50 values); otherwise from the normal approximation
	// with tie and continuity corrections.
	Exact bool
}

// MannWhitneyU tests whether x and y come from distributions with the same
// location, two-sided, making no assumption about their shape. As R's
// wilcox.test(x, y): exact when both samples have fewer than 50 values and
// no value occurs in both or twice, else the normal approximation (with
// the tie-corrected variance and a continuity correction).
func MannWhitneyU(x, y []float64) (UTest, error) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return UTest{}, errors.New("Mann-Whitney U: a sample is empty")
	}
	for _, v := range append(slices.Clone(x), y...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return UTest{}, fmt.Errorf("Mann-Whitney U: %v is not a finite number", v)
		}
	}
	ranks, ties := midranks(x, y)
	var r1 float64
	for _, r := range ranks[:n1] {
		r1 += r
	}
	u := r1 - float64(n1*(n1+1))/2
	t := UTest{U: u, N1: n1, N2: n2}
	if !ties && n1 < 50 && n2 < 50 {
		t.Exact = true
		t.P, t.PGreater, t.PLess = exactUP(n1, n2, u)
		return t, nil
	}
	t.P, t.PGreater, t.PLess = normalUP(n1, n2, u, ranks)
	return t, nil
}

// midranks ranks x then y together (1-based, ties getting the mean of the
// ranks they span) and says whether any value occurs twice.
func midranks(x, y []float64) ([]float64, bool) {
	all := append(slices.Clone(x), y...)
	idx := make([]int, len(all))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case all[a] < all[b]:
			return -1
		case all[a] > all[b]:
			return 1
		}
		return 0
	})
	ranks := make([]float64, len(all))
	ties := false
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && all[idx[j]] == all[idx[i]] {
			j++
		}
		if j-i > 1 {
			ties = true
		}
		r := float64(i+1+j) / 2 // mean of ranks i+1..j
		for k := i; k < j; k++ {
			ranks[idx[k]] = r
		}
		i = j
	}
	return ranks, ties
}

// exactUP is the two-sided p-value of U = u for samples of n1 and n2
// distinct values, 2 * min(P(U <= u), P(U >= u)) at most 1, and the
// one-sided P(U >= u) and P(U <= u).
func exactUP(n1, n2 int, u float64) (two, greater, less float64) {
	dist := uDist(n1, n2)
	k := int(math.Round(u))
	var lo, hi float64
	for i, p := range dist {
		if i <= k {
			lo += p
		}
		if i >= k {
			hi += p
		}
	}
	return math.Min(1, 2*math.Min(lo, hi)), math.Min(1, hi), math.Min(1, lo)
}

// uDist is the null distribution of U for samples of m and n distinct
// values: dist[u] = P(U = u), u = 0..m*n. It uses the recurrence on the
// largest of the m+n values, which belongs to the first sample with
// probability m/(m+n) (and then adds n to U) or to the second:
// P_{m,n}(u) = m/(m+n) P_{m-1,n}(u-n) + n/(m+n) P_{m,n-1}(u).
func uDist(m, n int) []float64 {
	// prev[j] is P_{i-1,j}, cur[j] is P_{i,j}, each a slice over u.
	prev := make([][]float64, n+1)
	for j := range prev {
		prev[j] = []float64{1} // P_{0,j}: U = 0
	}
	for i := 1; i <= m; i++ {
		cur := make([][]float64, n+1)
		cur[0] = []float64{1} // P_{i,0}: U = 0
		for j := 1; j <= n; j++ {
			d := make([]float64, i*j+1)
			a := float64(i) / float64(i+j)
			for u, p := range prev[j] { // P_{i-1,j}, shifted by j
				d[u+j] += a * p
			}
			for u, p := range cur[j-1] { // P_{i,j-1}
				d[u] += (1 - a) * p
			}
			cur[j] = d
		}
		prev = cur
	}
	return prev[n]
}

// normalUP is exactUP from the normal approximation, with the variance
// corrected for ties and a continuity correction of 1/2 towards the mean.
func normalUP(n1, n2 int, u float64, ranks []float64) (two, greater, less float64) {
	n := float64(n1 + n2)
	tc := tieCorrection(ranks)
	sigma := math.Sqrt(float64(n1*n2) / 12 * ((n + 1) - tc/(n*(n-1))))
	if sigma == 0 {
		return 1, 1, 1 // every value the same
	}
	mean := float64(n1*n2) / 2
	greater = math.Erfc((u-0.5-mean)/sigma/math.Sqrt2) / 2
	less = math.Erfc(-(u+0.5-mean)/sigma/math.Sqrt2) / 2
	z := u - mean
	switch {
	case z > 0:
		z -= 0.5
	case z < 0:
		z += 0.5
	}
	z = math.Abs(z) / sigma
	return math.Min(1, math.Erfc(z/math.Sqrt2)), greater, less // 2 * (1 - Phi(z))
}

// tieCorrection is the sum over groups of tied ranks of t^3 - t, which
// the normal approximations' variances take off.
func tieCorrection(ranks []float64) float64 {
	sorted := slices.Clone(ranks)
	slices.Sort(sorted)
	var tc float64
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		t := float64(j - i)
		tc += t*t*t - t
		i = j
	}
	return tc
}
