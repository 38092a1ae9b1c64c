package claims

import (
	"fmt"
	"strconv"

	"lab/plugins/contract"
	"lab/results"
)

func init() { register(func(r *contract.CrossoverClaim) kind { return crossoverKind{r: r} }) }

// crossoverKind: two curves over a sweep cross inside a band (Crossover,
// crossover.go).
type crossoverKind struct {
	within
	r *contract.CrossoverClaim
}

func (k crossoverKind) text() string {
	x := k.r
	before := "below"
	if x.Before == contract.BeforeNotAbove {
		before = fmt.Sprintf("not above (by more than %s%%)", results.FormatValue(100*x.Margin))
	}
	return fmt.Sprintf("the curves of %s and %s over %s cross inside [%s, %s]: the first %s the second at %s and above it at %s; a point at or before the band with the first above, or at or after it with the first still below, refutes (signed-rank on the per-repeat log ratios; %s)",
		results.SeriesLabel(x.First, x.FirstLabels), results.SeriesLabel(x.Second, x.SecondLabels), x.Sweep,
		results.FormatValue(x.BandStart), results.FormatValue(x.BandEnd), before, results.FormatValue(x.BandStart), results.FormatValue(x.BandEnd), testWords)
}

func (k crossoverKind) pointKey() string { return k.r.Sweep }

// required: the band's edges.
func (k crossoverKind) required() []string {
	return []string{strconv.FormatFloat(k.r.BandStart, 'f', -1, 64), strconv.FormatFloat(k.r.BandEnd, 'f', -1, 64)}
}

// minRepeats: a signed-rank test at each point outside the band.
func (k crossoverKind) minRepeats(s *spec) int {
	outside := 0
	for _, p := range s.hintPoints(nil) {
		var x float64
		if _, err := fmt.Sscan(p, &x); err == nil && (x <= k.r.BandStart || x >= k.r.BandEnd) {
			outside++
		}
	}
	return signedN(max(outside, 1))
}

func (k crossoverKind) decide(s *spec, st *stratum) Decision {
	x := k.r
	first := values(s.samples(st.units, x.First, x.FirstLabels, true))
	second := values(s.samples(st.units, x.Second, x.SecondLabels, true))
	return Crossover(pairUp(first, second), CrossoverRule{First: results.SeriesLabel(x.First, x.FirstLabels),
		Second: results.SeriesLabel(x.Second, x.SecondLabels), Sweep: x.Sweep, Band: [2]float64{x.BandStart, x.BandEnd},
		NotAbove: x.Before == contract.BeforeNotAbove, Margin: x.Margin})
}
