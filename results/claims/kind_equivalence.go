package claims

import (
	"fmt"
	"strings"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/stats"
)

func init() { register(func(r *contract.EquivalenceClaim) kind { return equivalenceKind{r: r} }) }

// equivalenceKind: "about the same" or "no advantage", two one-sided
// tests, paired within a run or between two profiles' runs
// (Equivalence, EquivalenceUnpaired).
type equivalenceKind struct {
	within
	r *contract.EquivalenceClaim
}

func (k equivalenceKind) text() string {
	e := k.r
	num := results.SeriesLabel(e.Numerator, e.NumeratorLabels)
	den := results.SeriesLabel(e.Denominator, e.DenominatorLabels)
	if e.Label != "" {
		num += fmt.Sprintf(" at %s=%s", e.Label, strings.Join(e.Numerators, "|"))
		den += fmt.Sprintf(" at %s=%s", e.Label, strings.Join(e.Denominators, "|"))
	}
	how := "paired within a run, signed-rank on the per-repeat log ratios"
	if e.Baseline != "" {
		num += " on " + e.Profile
		den += " on " + e.Baseline
		how = "between the two profiles' in-scope runs, Mann-Whitney on the logs"
	}
	claimed := fmt.Sprintf("within [%s, %s] (about the same, margin %s%%)", results.FormatValue(1/(1+e.Margin)), results.FormatValue(1+e.Margin), results.FormatValue(100*e.Margin))
	if e.Sides == contract.SidesLower {
		claimed = fmt.Sprintf("at least %s (no advantage beyond %s%%)", results.FormatValue(1/(1+e.Margin)), results.FormatValue(100*e.Margin))
	}
	return fmt.Sprintf("%s / %s %s%s, two one-sided tests (%s; %s)", num, den, claimed, seriesNote(e.Labels), how, testWords)
}

// across: with a baseline and a profile, numerator on the profile against
// denominator on the baseline.
func (k equivalenceKind) across() (string, string, bool) {
	if k.r.Baseline == "" && k.r.Profile == "" {
		return "", "", false
	}
	return k.r.Baseline, k.r.Profile, true
}

func (k equivalenceKind) minRepeats(s *spec) int {
	e := k.r
	sides := 2
	if e.Sides == contract.SidesLower {
		sides = 1
	}
	pairs := max(len(e.Numerators)*len(e.Denominators), 1)
	if s.across {
		// Unpaired: a rank-sum test a bound, pair and point.
		return minRankSumN(stats.Alpha, sides*pairs*s.npoints())
	}
	return signedN(sides * pairs * s.npoints())
}

// decide: one pair of series, or each numerator and denominator value
// of a label.
func (k equivalenceKind) decide(s *spec, st *stratum) Decision {
	e := k.r
	type sides struct {
		name     string
		num, den map[string]string
	}
	var all []sides
	if e.Label == "" {
		all = []sides{{"", merge(e.Labels, e.NumeratorLabels), merge(e.Labels, e.DenominatorLabels)}}
	}
	for _, n := range e.Numerators {
		for _, d := range e.Denominators {
			if e.Label != "" {
				all = append(all, sides{fmt.Sprintf("%s=%s / %s=%s", e.Label, n, e.Label, d),
					merge(e.Labels, e.NumeratorLabels, map[string]string{e.Label: n}), merge(e.Labels, e.DenominatorLabels, map[string]string{e.Label: d})})
			}
		}
	}
	rule := EquivalenceRule{Num: results.SeriesLabel(e.Numerator, e.NumeratorLabels), Den: results.SeriesLabel(e.Denominator, e.DenominatorLabels),
		Margin: e.Margin, Lower: e.Sides == contract.SidesLower}
	named := func(name string, vs []Value) []Value {
		if name == "" {
			return vs
		}
		return s.withPoint(name, vs)
	}
	if s.across {
		rule.Num += " on " + e.Profile
		rule.Den += " on " + e.Baseline
		var num, den []Value
		for _, x := range all {
			num = append(num, named(x.name, s.series(st.other, e.Numerator, x.num))...)
			den = append(den, named(x.name, s.series(st.base, e.Denominator, x.den))...)
		}
		return EquivalenceUnpaired(num, den, rule)
	}
	var pairs []Pair
	for _, x := range all {
		pairs = append(pairs, pairUp(named(x.name, s.series(st.units, e.Numerator, x.num)), named(x.name, s.series(st.units, e.Denominator, x.den)))...)
	}
	return Equivalence(pairs, rule)
}
