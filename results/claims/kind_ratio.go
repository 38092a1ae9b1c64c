package claims

import (
	"fmt"

	"lab/plugins/contract"
	"lab/results"
)

func init() { register(func(r *contract.RatioClaim) kind { return ratioKind{r: r} }) }

// ratioKind: numerator / denominator in bounds, the two series paired by
// repeat within a run (Ratio, kinds.go).
type ratioKind struct {
	within
	r *contract.RatioClaim
}

func (k ratioKind) text() string {
	r := k.r
	return fmt.Sprintf("%s / %s %s%s, per repeat within a run (signed-rank on the log ratios; %s)",
		results.SeriesLabel(r.Numerator, r.NumeratorLabels), results.SeriesLabel(r.Denominator, r.DenominatorLabels),
		bounds(&r.Min, r.Max), seriesNote(r.Labels), testWords)
}

func (k ratioKind) minRepeats(s *spec) int { return signedN(nbounds(k.r.Max) * s.npoints()) }

func (k ratioKind) decide(s *spec, st *stratum) Decision {
	r := k.r
	num := s.series(st.units, r.Numerator, merge(r.Labels, r.NumeratorLabels))
	den := s.series(st.units, r.Denominator, merge(r.Labels, r.DenominatorLabels))
	return Ratio(pairUp(num, den), RatioRule{Num: results.SeriesLabel(r.Numerator, r.NumeratorLabels),
		Den: results.SeriesLabel(r.Denominator, r.DenominatorLabels), Bounds: lowerBound(r.Min, r.Max)})
}
