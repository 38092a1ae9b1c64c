// Package compare puts runs beside published figures and beside other
// runs: ratios to the figures, per-series deltas, and benchstat-style
// comparisons of two sets of runs.
package compare

import (
	"errors"
	"fmt"
	"math"

	"lab/results"
	"lab/results/stats"
)

// ErrIncomparable is returned (wrapped) by Diff for two runs whose numbers
// cannot be compared: different accelerators or clocks.
var ErrIncomparable = errors.New("runs are not comparable")

// Compare puts each summary's median beside every published figure of the
// same metric. A reference with labels matches only a summary with the same
// labels; one without labels matches every summary of its metric. Figures in
// a time unit other than the summary's are converted to it ("us" and "µs"
// are the same); figures in an unrelated unit are skipped. For each summary
// the figures measured on the machine profile stands for come first
// (SameProfile), then the others in published order: a report shows ours
// next to every published machine.
func Compare(summaries []results.Summary, refs []results.Reference, profile string) []results.Comparison {
	var out []results.Comparison
	for _, s := range summaries {
		var same, other []results.Comparison
		for _, ref := range refs {
			if ref.Metric != s.Metric {
				continue
			}
			if len(ref.Labels) > 0 && results.LabelKey(ref.Labels) != results.LabelKey(s.Labels) {
				continue
			}
			pub, ok := results.ConvertUnit(ref.Value, ref.Unit, s.Unit)
			if !ok {
				continue
			}
			c := results.Comparison{
				Metric:      s.Metric,
				Labels:      results.CloneLabels(s.Labels),
				Ours:        s.Median,
				Published:   pub,
				Unit:        s.Unit,
				Machine:     ref.Machine,
				Source:      ref.Source,
				Experiment:  ref.Experiment,
				Profile:     ref.Profile,
				SameProfile: profile != "" && ref.Profile == profile,
				Note:        ref.Note,
			}
			if pub != 0 {
				c.Ratio = s.Median / pub
			}
			if c.SameProfile {
				same = append(same, c)
			} else {
				other = append(other, c)
			}
		}
		out = append(out, same...)
		out = append(out, other...)
	}
	return out
}

// ComparePublished compares r's summaries (computed from its samples if it
// has none) with refs, the published figures its experiment declares (the
// plugin's description), preferring the figures of the profile it ran
// (FiguresProfile: for an era profile, those of the machine it is a
// variant of).
func ComparePublished(r *results.Result, refs []results.Reference) []results.Comparison {
	return Compare(stats.Summaries(r), refs, results.FiguresProfile(r.Machine))
}

// Delta is one metric's change between two runs.
type Delta struct {
	Metric string            `json:"metric"`
	Labels map[string]string `json:"labels,omitempty"`
	Unit   string            `json:"unit"`
	// A and B are the medians of the first and the second run.
	A float64 `json:"a"`
	B float64 `json:"b"`
	// MADA and MADB are their spreads, to judge whether Percent is noise.
	MADA float64 `json:"mad_a"`
	MADB float64 `json:"mad_b"`
	// Percent is (B - A) / A * 100; 0 when A is 0 or Only is set.
	Percent float64 `json:"percent"`
	// Only is "a" or "b" when the series exists in one run only.
	Only string `json:"only,omitempty"`
}

// Diff compares the medians of two runs, series by series (metric, unit
// and labels), in a's order followed by series only b has. Runs on
// different accelerators or clocks measure different things (TCG vs KVM,
// wall time vs icount) and are refused with ErrIncomparable unless force.
func Diff(a, b *results.Result, force bool) ([]Delta, error) {
	if !force {
		if a.Machine.Accelerator != b.Machine.Accelerator {
			return nil, fmt.Errorf("diff %s vs %s: accelerator %q vs %q: %w (force to compare anyway)",
				a.ID, b.ID, a.Machine.Accelerator, b.Machine.Accelerator, ErrIncomparable)
		}
		if a.Machine.Clock != b.Machine.Clock {
			return nil, fmt.Errorf("diff %s vs %s: clock %q vs %q: %w (force to compare anyway)",
				a.ID, b.ID, a.Machine.Clock, b.Machine.Clock, ErrIncomparable)
		}
	}
	sa, sb := stats.Summaries(a), stats.Summaries(b)
	inB := make(map[string]results.Summary, len(sb))
	for _, s := range sb {
		inB[results.SeriesKey(s.Metric, s.Unit, s.Labels)] = s
	}
	seen := map[string]bool{}
	var out []Delta
	for _, s := range sa {
		k := results.SeriesKey(s.Metric, s.Unit, s.Labels)
		seen[k] = true
		d := Delta{Metric: s.Metric, Labels: results.CloneLabels(s.Labels), Unit: s.Unit, A: s.Median, MADA: s.MAD}
		t, ok := inB[k]
		if !ok {
			d.Only = "a"
			out = append(out, d)
			continue
		}
		d.B, d.MADB = t.Median, t.MAD
		if s.Median != 0 {
			d.Percent = (t.Median - s.Median) / math.Abs(s.Median) * 100
		}
		out = append(out, d)
	}
	for _, t := range sb {
		if seen[results.SeriesKey(t.Metric, t.Unit, t.Labels)] {
			continue
		}
		out = append(out, Delta{Metric: t.Metric, Labels: results.CloneLabels(t.Labels), Unit: t.Unit,
			B: t.Median, MADB: t.MAD, Only: "b"})
	}
	return out, nil
}

// Analyze fills Summary from Samples and Comparisons with refs, the
// published figures the run's experiment declares (the figures of its
// own profile first).
func Analyze(r *results.Result, refs []results.Reference) {
	r.Summary = stats.Summarize(r.Samples)
	r.Comparisons = ComparePublished(r, refs)
}
