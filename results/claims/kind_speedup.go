package claims

import (
	"fmt"

	"lab/plugins/contract"
	"lab/results/stats"
)

func init() { register(func(r *contract.SpeedupClaim) kind { return speedupKind{r: r} }) }

// speedupKind: a metric on one profile against another's, unpaired
// (Speedup, unpaired.go).
type speedupKind struct {
	within
	r *contract.SpeedupClaim
}

func (k speedupKind) text() string {
	s := k.r
	return fmt.Sprintf("%s on %s / %s on %s %s%s, between the two profiles' in-scope runs under the same clock and accelerator (Mann-Whitney on the logs, unpaired; %s)",
		s.Metric, s.Baseline, s.Metric, s.Profile, bounds(&s.Min, s.Max), seriesNote(s.Labels), testWords)
}

func (k speedupKind) across() (string, string, bool) { return k.r.Baseline, k.r.Profile, true }

func (k speedupKind) minRepeats(s *spec) int {
	return minRankSumN(stats.Alpha, nbounds(k.r.Max)*s.npoints())
}

func (k speedupKind) decide(s *spec, st *stratum) Decision {
	sp := k.r
	return Speedup(s.series(st.base, sp.Metric, sp.Labels), s.series(st.other, sp.Metric, sp.Labels),
		SpeedupRule{Metric: sp.Metric, Base: sp.Baseline, Fast: sp.Profile, Bounds: lowerBound(sp.Min, sp.Max)})
}
