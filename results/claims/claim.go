// Package claims decides the claims of a write-up from stored runs
// (docs/proposals/verdicts.md): which runs are in a claim's scope
// (scope.go), the evidence they hold (evidence.go), the rule kinds as pure
// functions of it (kinds.go, unpaired.go, crossover.go, crash.go,
// diffratio.go), the calibration of absolute times (calibrate.go) and
// the verdict a claim gets from the strata of its evidence (judge.go).
package claims

import (
	"fmt"
	"strconv"
	"strings"

	"lab/plugins/contract"
	"lab/results"
)

// testWords says how every rule tests, for RuleText.
const testWords = "one-sided exact tests at alpha 0.05, every confirming test needed, refutations under Holm; each profile, clock and accelerator decided apart"

// RuleText says in words how the claim is decided: its rule and the test.
func RuleText(c *results.Claim) string {
	switch {
	case c.Ratio != nil:
		r := c.Ratio
		return fmt.Sprintf("%s / %s %s%s, per repeat within a run (signed-rank on the log ratios; %s)",
			results.SeriesLabel(r.Numerator, r.NumeratorLabels), results.SeriesLabel(r.Denominator, r.DenominatorLabels),
			bounds(&r.Min, r.Max), seriesNote(r.Labels), testWords)
	case c.Range != nil:
		r := c.Range
		what := r.Metric
		if r.ShareWith != "" {
			what = fmt.Sprintf("%s / (%s + %s) of each repeat", r.Metric, r.Metric, r.ShareWith)
		}
		unit := ""
		if r.Unit != "" && r.ShareWith == "" {
			unit = " " + r.Unit
		}
		how := "one-sample signed-rank against each bound; " + testWords
		if r.ShareWith == "" && results.IsTimeUnit(r.Unit) {
			how = "an absolute time: never decided under the host clock; under icount:N the instructions (time / 2^N ns) at the machine's calibrated instructions per ns give a predicted interval, decided only when the published band lies outside it (not reproduced) or holds it whole (reproduced)"
		}
		return fmt.Sprintf("%s %s%s%s (%s)", what, bounds(r.Min, r.Max), unit, seriesNote(r.Labels), how)
	case c.Crossover != nil:
		x := c.Crossover
		before := "below"
		if x.Before == contract.BeforeNotAbove {
			before = fmt.Sprintf("not above (by more than %s%%)", results.FormatValue(100*x.Margin))
		}
		return fmt.Sprintf("the curves of %s and %s over %s cross inside [%s, %s]: the first %s the second at %s and above it at %s; a point at or before the band with the first above, or at or after it with the first still below, refutes (signed-rank on the per-repeat log ratios; %s)",
			results.SeriesLabel(x.First, x.FirstLabels), results.SeriesLabel(x.Second, x.SecondLabels), x.Sweep,
			results.FormatValue(x.BandStart), results.FormatValue(x.BandEnd), before, results.FormatValue(x.BandStart), results.FormatValue(x.BandEnd), testWords)
	case c.Speedup != nil:
		s := c.Speedup
		return fmt.Sprintf("%s on %s / %s on %s %s%s, between the two profiles' in-scope runs under the same clock and accelerator (Mann-Whitney on the logs, unpaired; %s)",
			s.Metric, s.Baseline, s.Metric, s.Profile, bounds(&s.Min, s.Max), seriesNote(s.Labels), testWords)
	case c.Crash != nil:
		k := c.Crash
		if k.Never {
			return fmt.Sprintf("runs to the end at every %s in scope (every run at a point must agree, or the point is flaky)", k.Param)
		}
		return fmt.Sprintf("crashes with %s when %s >= %s and runs to the end below (every run at a point must agree, or the point is flaky)",
			k.Signal, k.Param, results.FormatValue(k.From))
	case c.Order != nil:
		o := c.Order
		var pairs []string
		for _, a := range o.Above {
			for _, b := range o.Below {
				pairs = append(pairs, a+" > "+b)
			}
		}
		for _, p := range o.Pairs {
			pairs = append(pairs, p.Above+" > "+p.Below)
		}
		return fmt.Sprintf("%s by %s, each pair's ratio above %s within a run: %s%s (signed-rank on the per-repeat log ratios; %s)",
			o.Metric, o.Label, results.FormatValue(o.Min), strings.Join(pairs, ", "), seriesNote(o.Labels), testWords)
	case c.Equivalence != nil:
		e := c.Equivalence
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
	case c.DiffRatio != nil:
		d := c.DiffRatio
		s := func(v string) string { return fmt.Sprintf("%s{%s=%s}", d.Metric, d.Label, v) }
		return fmt.Sprintf("(%s - %s) >= %s x (%s{%s=K} - %s) for K in %s, per repeat%s; the denominator must be above 0 first, else inconclusive (signed-rank; %s)",
			s(d.Numerator), s(d.Baseline), results.FormatValue(d.Factor), d.Metric, d.Label, s(d.Baseline), strings.Join(d.Denominators, ", "),
			seriesNote(d.Labels), testWords)
	case c.Trend != nil:
		t := c.Trend
		return fmt.Sprintf("%s / %s at the largest %s more than %s%% below its value at the smallest%s (Mann-Whitney on the per-repeat log ratios; %s)",
			results.SeriesLabel(t.Numerator, t.NumeratorLabels), results.SeriesLabel(t.Denominator, t.DenominatorLabels), t.Sweep,
			results.FormatValue(100*t.Margin), seriesNote(t.Labels), testWords)
	case c.Untestable != nil:
		u := c.Untestable
		s := "untestable here: " + u.Property
		if u.Instead != "" {
			s += "; measured instead: " + results.SeriesLabel(u.Instead, u.InsteadLabels)
		}
		return s
	}
	return "no rule"
}

// bounds is "in [lo, hi]", "at least lo", "at most hi".
func bounds(lo, hi *float64) string {
	return Bounds{Min: lo, Max: hi}.String()
}

func seriesNote(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	return " at " + results.FormatLabels(labels)
}

// ClockNote says what absolute times mean under a run's clock and
// accelerator, and whether they can be compared with a real machine's:
// under icount:N the guest's time is deterministic (one instruction =
// 2^N ns); under the host clock they are the speed of TCG's emulation
// (or, under KVM, of this host's CPU).
func ClockNote(m results.MachineRecord) (string, bool) {
	if shift, ok := icountShift(m.Clock); ok {
		return fmt.Sprintf("guest time deterministic, one instruction = 2^%d ns (clock %s)", shift, m.Clock), true
	}
	if m.Accelerator == "kvm" {
		return "under KVM with the host clock absolute times are this host's CPU speed, not the original machine's", false
	}
	return "under " + results.OrUnknown(m.Accelerator) + " with the " + results.OrUnknown(m.Clock) +
		" clock absolute times are emulation speed; run with --clock icount:N to decide it", false
}

// icountShift is N of a clock "icount:N"; "icount" alone is shift 0.
func icountShift(clock string) (int, bool) {
	if clock == contract.ClockIcount {
		return 0, true
	}
	shift, ok := strings.CutPrefix(clock, contract.ClockIcount+":")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(shift)
	return n, err == nil && n >= 0
}

// clockKind is the kind of a run's clock a scope names: host or icount,
// "" for neither (not recorded).
func clockKind(clock string) string {
	if _, ok := icountShift(clock); ok {
		return contract.ClockIcount
	}
	if clock == contract.ClockHost {
		return contract.ClockHost
	}
	return ""
}
