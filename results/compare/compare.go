// Package compare puts runs beside published figures and beside other
// runs: ratios to the figures and benchstat-style comparisons of two
// sets of runs.
package compare

import (
	"lab/results"
	"lab/results/stats"
)

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

// Analyze fills Summary from Samples and Comparisons with refs, the
// published figures the run's experiment declares (the figures of its
// own profile first).
func Analyze(r *results.Result, refs []results.Reference) {
	r.Summary = stats.Summarize(r.Samples)
	r.Comparisons = ComparePublished(r, refs)
}
