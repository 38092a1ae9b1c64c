// Package claims decides the claims of a write-up on runs: each claim
// kind's rule, the verdicts recorded in a result, and claims' status across
// the store.
package claims

import (
	"fmt"
	"strconv"
	"strings"

	"lab/plugins/contract"
	"lab/results"
)

// The statistical rules, as the verdicts and docs/claims.md state them (the
// significance level is stats.Alpha).
const (
	// MinRankSamples: a two-sided Mann-Whitney U test cannot reach
	// p < 0.05 with fewer than 4 samples a side (3 and 3 give at best
	// p = 0.1; 4 and 4 give 0.029).
	MinRankSamples = 4
	// MinSignSamples: a two-sided exact sign test cannot reach p < 0.05
	// with fewer than 6 samples (5 give at best 0.0625; 6 give 0.031).
	MinSignSamples = 6

	RankRule = "two-sided Mann-Whitney U at alpha 0.05, which needs at least 4 samples a side"
	SignRule = "two-sided exact sign test against each bound at alpha 0.05, which needs at least 6 samples"
)

// RuleText says in words how the claim is decided: its rule and the test.
func RuleText(c *results.Claim) string {
	switch {
	case c.Ratio != nil:
		r := c.Ratio
		return fmt.Sprintf("%s / %s %s%s, from one run's samples (%s)", results.SeriesLabel(r.Numerator, r.NumeratorLabels),
			results.SeriesLabel(r.Denominator, r.DenominatorLabels), factorBounds(r.Min, r.Max), seriesNote(r.Labels), RankRule)
	case c.Range != nil:
		r := c.Range
		return fmt.Sprintf("%s in %s %s%s (%s)%s", r.Metric, boundsText(r.Min, r.Max), r.Unit, seriesNote(r.Labels),
			SignRule, absoluteNote(r.Unit))
	case c.Crossover != nil:
		x := c.Crossover
		where := fmt.Sprintf("inside [%s, %s]", results.FormatValue(x.BandStart), results.FormatValue(x.BandEnd))
		way := ""
		return fmt.Sprintf("the curves of %s and %s over %s cross %s%s; at each point which is larger by %s; the crossing interpolated linearly between the points where the order flips",
			results.SeriesLabel(x.First, x.FirstLabels), results.SeriesLabel(x.Second, x.SecondLabels), x.Sweep, where, way, RankRule)
	case c.Speedup != nil:
		s := c.Speedup
		return fmt.Sprintf("%s on %s / %s on %s %s%s, from the latest run of each in the result store (same experiment and parameters, same accelerator and clock; %s)",
			s.Metric, s.Baseline, s.Metric, s.Profile, factorBounds(s.Min, s.Max), seriesNote(s.Labels), RankRule)
	case c.Crash != nil:
		k := c.Crash
		return fmt.Sprintf("the run crashes (%s, outcome expected-crash) when %s >= %s and runs to the end below",
			k.Signal, k.Param, results.FormatValue(k.From))
	case c.Order != nil:
		o := c.Order
		return fmt.Sprintf("%s at %s=%s above %s times %s at %s=%s%s: every pair, from one run's samples (%s)",
			o.Metric, o.Label, strings.Join(o.Above, ","), results.FormatValue(o.Min), o.Metric, o.Label, strings.Join(o.Below, ","),
			seriesNote(o.Labels), RankRule)
	}
	return "no rule"
}

func factorBounds(lo float64, hi *float64) string {
	if hi == nil {
		return ">= " + results.FormatValue(lo)
	}
	return "in " + results.FormatValue(lo) + ".." + results.FormatValue(*hi)
}

func boundsText(lo, hi *float64) string {
	switch {
	case lo != nil && hi != nil:
		return results.FormatValue(*lo) + ".." + results.FormatValue(*hi)
	case lo != nil:
		return ">= " + results.FormatValue(*lo)
	case hi != nil:
		return "<= " + results.FormatValue(*hi)
	}
	return "any"
}

func seriesNote(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	return " at " + results.FormatLabels(labels)
}

func absoluteNote(unit string) string {
	if !results.IsTimeUnit(unit) {
		return ""
	}
	return "; an absolute time: decided only under an icount clock"
}

// ClockNote says what absolute times mean under a run's clock and
// accelerator, and whether they can be compared with a real machine's:
// under icount:N the guest's time is deterministic (one instruction =
// 2^N ns); under the host clock they are the speed of TCG's emulation
// (or, under KVM, of this host's CPU).
func ClockNote(m results.MachineRecord) (string, bool) {
	if shift, ok := strings.CutPrefix(m.Clock, "icount:"); ok {
		if n, err := strconv.Atoi(shift); err == nil {
			return fmt.Sprintf("guest time deterministic, one instruction = 2^%d ns (clock %s)", n, m.Clock), true
		}
	}
	if m.Accelerator == "kvm" {
		return "under KVM with the host clock absolute times are this host's CPU speed, not the original machine's", false
	}
	return "under " + results.OrUnknown(m.Accelerator) + " with the " + results.OrUnknown(m.Clock) +
		" clock absolute times are emulation speed; run with --clock icount:N to decide it", false
}

// Judge decides every claim of the run's experiment and records the
// verdicts in r. store holds other stored runs (newest first), from which
// a speedup takes its other run; it may be nil.
func Judge(r *results.Result, claims []results.Claim, store []*results.Result) {
	r.Verdicts = nil
	for i := range claims {
		if claims[i].Plugin != "" && claims[i].Plugin != r.Plugin || claims[i].Bench != "" && claims[i].Bench != r.Experiment {
			continue
		}
		r.Verdicts = append(r.Verdicts, Decide(&claims[i], r, store))
	}
}

// Decide applies claim c's rule to run r (and for a speedup to the latest
// matching run of store).
func Decide(c *results.Claim, r *results.Result, store []*results.Result) results.Verdict {
	v := decide(c, r, store)
	v.Claim, v.Kind, v.Statement = c.ID, c.Kind, c.Statement
	if v.Rule == "" {
		v.Rule = RuleText(c)
	}
	if v.Decided() && len(v.Runs) == 0 && r.ID != "" {
		v.Runs = []string{r.ID}
	}
	if v.Decided() && c.Profile != "" && c.Kind != contract.KindSpeedup {
		switch p := results.ProfileName(r.Machine); {
		case p == c.Profile:
		case results.FiguresProfile(r.Machine) == c.Profile:
			v.Note = joinNote(v.Note, fmt.Sprintf("ran on profile %s: %s's machine on another kernel (%s)", p, c.Profile, results.OrUnknown(r.Machine.KernelID)))
		default:
			v.Note = joinNote(v.Note, fmt.Sprintf("ran on profile %s, not %s (the profile standing for the claim's machine)", results.OrUnknown(p), c.Profile))
		}
	}
	return v
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func decide(c *results.Claim, r *results.Result, store []*results.Result) results.Verdict {
	if c.Scope != nil {
		for _, k := range results.SortedKeys(c.Scope.Params) {
			if got := r.Parameters[k]; got != c.Scope.Params[k] {
				return results.Verdict{Verdict: results.NotRun, Reason: fmt.Sprintf("decided only by runs with %s; this run had %s=%s",
					results.FormatLabels(c.Scope.Params), k, results.OrUnknown(got))}
			}
		}
	}
	if c.Kind == contract.KindCrash {
		return decideCrash(c.Crash, r)
	}
	if r.Outcome.Status == "failed" {
		return results.Verdict{Verdict: results.Inconclusive, Reason: "the run failed (" + r.Outcome.Reason + "); its samples decide nothing"}
	}
	if r.Outcome.Status == results.StatusInterrupted {
		return results.Verdict{Verdict: results.Inconclusive, Reason: "the run was interrupted (" + r.Outcome.Reason + "); its samples decide nothing"}
	}
	switch c.Kind {
	case contract.KindRatio:
		q := c.Ratio
		x := r.Values(q.Numerator, results.MergeLabels(q.Labels, q.NumeratorLabels))
		y := r.Values(q.Denominator, results.MergeLabels(q.Labels, q.DenominatorLabels))
		return factorVerdict(results.SeriesLabel(q.Numerator, q.NumeratorLabels), results.SeriesLabel(q.Denominator, q.DenominatorLabels), x, y, q.Min, q.Max)
	case contract.KindRange:
		return rangeVerdict(r, c.Range.Metric, c.Range.Labels, c.Range.Unit, c.Range.Min, c.Range.Max)
	case contract.KindCrossover:
		return crossoverVerdict(c.Crossover, r)
	case contract.KindSpeedup:
		return speedupVerdict(c.Speedup, r, store)
	case contract.KindOrder:
		return orderVerdict(c.Order, r)
	}
	return results.Verdict{Verdict: results.Inconclusive, Reason: fmt.Sprintf("claim %s has no rule lab knows (kind %q); upgrade lab", c.ID, c.Kind)}
}

func unitOf(r *results.Result, metric string) string {
	for _, s := range r.Samples {
		if s.Metric == metric {
			return s.Unit
		}
	}
	return ""
}
