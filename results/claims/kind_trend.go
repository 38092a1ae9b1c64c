package claims

import (
	"fmt"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/stats"
)

func init() { register(func(r *contract.TrendClaim) kind { return trendKind{r: r} }) }

// trendKind: a ratio falling by more than a margin from the smallest
// point of a sweep to its largest (Trend, unpaired.go).
type trendKind struct {
	within
	r *contract.TrendClaim
}

func (k trendKind) text() string {
	t := k.r
	return fmt.Sprintf("%s / %s at the largest %s more than %s%% below its value at the smallest%s (Mann-Whitney on the per-repeat log ratios; %s)",
		results.SeriesLabel(t.Numerator, t.NumeratorLabels), results.SeriesLabel(t.Denominator, t.DenominatorLabels), t.Sweep,
		results.FormatValue(100*t.Margin), seriesNote(t.Labels), testWords)
}

func (k trendKind) pointKey() string { return k.r.Sweep }

func (k trendKind) minRepeats(_ *spec) int { return minRankSumN(stats.Alpha, 1) }

func (k trendKind) decide(s *spec, st *stratum) Decision {
	t := k.r
	num := s.series(st.units, t.Numerator, merge(t.Labels, t.NumeratorLabels))
	den := s.series(st.units, t.Denominator, merge(t.Labels, t.DenominatorLabels))
	return Trend(pairUp(num, den), TrendRule{A: results.SeriesLabel(t.Numerator, t.NumeratorLabels),
		B: results.SeriesLabel(t.Denominator, t.DenominatorLabels), Param: t.Sweep, Margin: t.Margin})
}
