package claims

import (
	"fmt"
	"strings"

	"lab/plugins/contract"
	"lab/results"
)

func init() { register(func(r *contract.DiffRatioClaim) kind { return diffRatioKind{r: r} }) }

// diffRatioKind: a difference of two series at least a factor of others'
// differences from a baseline, per repeat (DiffRatio, diffratio.go).
type diffRatioKind struct {
	within
	r *contract.DiffRatioClaim
}

func (k diffRatioKind) text() string {
	d := k.r
	s := func(v string) string { return fmt.Sprintf("%s{%s=%s}", d.Metric, d.Label, v) }
	return fmt.Sprintf("(%s - %s) >= %s x (%s{%s=K} - %s) for K in %s, per repeat%s; the denominator must be above 0 first, else inconclusive (signed-rank; %s)",
		s(d.Numerator), s(d.Baseline), results.FormatValue(d.Factor), d.Metric, d.Label, s(d.Baseline), strings.Join(d.Denominators, ", "),
		seriesNote(d.Labels), testWords)
}

func (k diffRatioKind) minRepeats(s *spec) int {
	return signedN(max(len(k.r.Denominators), 1) * s.npoints())
}

func (k diffRatioKind) decide(s *spec, st *stratum) Decision {
	d := k.r
	at := func(v string) []Value {
		return s.series(st.units, d.Metric, merge(d.Labels, map[string]string{d.Label: v}))
	}
	a, z := at(d.Numerator), at(d.Baseline)
	var rows []DiffRow
	for _, den := range d.Denominators {
		rows = append(rows, rowsOf(s.withPoint(d.Label+"="+den, a), s.withPoint(d.Label+"="+den, at(den)), s.withPoint(d.Label+"="+den, z))...)
	}
	series := func(v string) string { return fmt.Sprintf("%s{%s=%s}", d.Metric, d.Label, v) }
	return DiffRatio(rows, DiffRatioRule{A: series(d.Numerator), B: series("K"), Z: series(d.Baseline), Factor: d.Factor})
}
