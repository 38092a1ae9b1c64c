package compare

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"

	"lab/results"
)

// The rules of a comparison, as benchstat states them: medians with a
// 95% confidence interval (which needs 6 samples a side to exist at that
// level), and a Mann-Whitney U test at alpha 0.05 (which cannot reject
// with fewer than 4 samples a side).
const (
	CompareConfidence = 0.95
	MinCompareSamples = 4
	MinCISamples      = 6
)

// Side is one side of a comparison: one run, or the runs a filter picked.
type Side struct {
	// Name is what the user typed for it (a run ID, a filter).
	Name string
	Runs []*results.Result
}

// Change is one series compared across two sides.
type Change struct {
	Metric string            `json:"metric"`
	Labels map[string]string `json:"labels,omitempty"`
	Unit   string            `json:"unit"`
	// A and B are each side's median with its confidence interval.
	A SideSummary `json:"a"`
	B SideSummary `json:"b"`
	// Percent is (B - A) / |A| * 100.
	Percent float64 `json:"percent"`
	// P is the Mann-Whitney U p-value; Significant is P < Alpha.
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
	// Delta is benchstat's: "+2.9%", or "~" when not significant.
	Delta string `json:"delta"`
	// HigherIsBetter: the metric is a rate (its unit per second), so a
	// fall is the regression; otherwise a rise is.
	HigherIsBetter bool `json:"higher_is_better"`
	// Regression says whether the change is significant and the worse way.
	Regression bool     `json:"regression"`
	Warnings   []string `json:"warnings,omitempty"`
	// Only is "a" or "b" when the series exists on one side only.
	Only string `json:"only,omitempty"`
}

// SideSummary is a side's median of a series with its confidence interval
// (Lo, Hi are NaN-free: equal to the median when there is none).
type SideSummary struct {
	N          int     `json:"n"`
	Median     float64 `json:"median"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	// CI is benchstat's "± 2%", or "" when the side has too few samples
	// for one.
	CI string `json:"ci,omitempty"`
}

// ErrMixedRuns is returned when the runs compared were made with different
// accelerators, clocks, profiles, experiments or parameters.
var ErrMixedRuns = errors.New("the runs measure different things")

// CheckComparable refuses to set runs on different accelerators, clocks,
// profiles, experiments (plugin/experiment) or parameters against each
// other, within a side or across them, naming the first difference. The
// number of repeats is no difference, nor is a key either run swept: its
// values are the samples' labels, and series pair by label.
func CheckComparable(a, b Side) error {
	type key struct{ what, a, b string }
	all := append(slices.Clone(a.Runs), b.Runs...)
	if len(all) == 0 {
		return nil
	}
	first := all[0]
	for _, r := range all[1:] {
		for _, k := range []key{
			{"accelerator", first.Machine.Accelerator, r.Machine.Accelerator},
			{"clock", first.Machine.Clock, r.Machine.Clock},
			{"profile", results.ProfileName(first.Machine), results.ProfileName(r.Machine)},
			{"experiment", first.Plugin + "/" + first.Experiment, r.Plugin + "/" + r.Experiment},
		} {
			if k.a != k.b {
				return fmt.Errorf("run %s has %s %s and run %s has %s: %w (a change would be the %s's, not the code's); compare runs of one %s, or pass --force",
					first.ID, k.what, results.OrUnknown(k.a), r.ID, results.OrUnknown(k.b), ErrMixedRuns, k.what, k.what)
			}
		}
		if pa, pb := paramDiff(first, r); pa != "" {
			return fmt.Errorf("run %s has parameters %s and run %s has %s: %w (a change would be the parameters', not the code's); compare runs with the same parameters, or pass --force",
				first.ID, pa, r.ID, pb, ErrMixedRuns)
		}
	}
	return nil
}

// paramDiff is the parameters a and b set differently, as each has them
// ("n=50", "n unset"), in key order; "" when they agree. The repeat count
// and the keys either run swept are left out.
func paramDiff(a, b *results.Result) (string, string) {
	skip := map[string]bool{results.RepeatParam: true}
	for _, r := range []*results.Result{a, b} {
		if r.Sweep != nil {
			for _, ax := range r.Sweep.Axes {
				skip[ax.Key] = true
			}
		}
	}
	var keys []string
	for _, m := range []map[string]string{a.Parameters, b.Parameters} {
		for k := range m {
			if !skip[k] && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	show := func(m map[string]string, k string) string {
		if v, ok := m[k]; ok {
			return k + "=" + v
		}
		return k + " unset"
	}
	var da, db []string
	for _, k := range keys {
		va, oka := a.Parameters[k]
		vb, okb := b.Parameters[k]
		if va != vb || oka != okb {
			da, db = append(da, show(a.Parameters, k)), append(db, show(b.Parameters, k))
		}
	}
	return strings.Join(da, ","), strings.Join(db, ",")
}

// HigherIsBetter: rates (a unit per second, "conn/s", "ops/s") improve
// upwards; times, sizes and counts of cost do not.
func HigherIsBetter(metric, unit string) bool {
	return strings.HasSuffix(unit, "/s") || strings.HasSuffix(metric, "_per_s")
}

// sideSamples pools every sample of every run of a side, by series.
func sideSamples(s Side) (map[string][]float64, map[string]results.Sample, []string) {
	vals := map[string][]float64{}
	proto := map[string]results.Sample{}
	var order []string
	for _, r := range s.Runs {
		for _, x := range r.Samples {
			k := results.SeriesKey(x.Metric, x.Unit, x.Labels)
			if _, ok := vals[k]; !ok {
				order = append(order, k)
				proto[k] = x
			}
			vals[k] = append(vals[k], x.Value)
		}
	}
	return vals, proto, order
}

func summarize(vals []float64) (*benchmath.Sample, SideSummary) {
	s := benchmath.NewSample(vals, &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, CompareConfidence)
	out := SideSummary{N: len(vals), Median: sum.Center, Lo: sum.Lo, Hi: sum.Hi, Confidence: sum.Confidence}
	if math.IsInf(sum.Lo, 0) || math.IsInf(sum.Hi, 0) || math.IsNaN(sum.Lo) || math.IsNaN(sum.Hi) || len(vals) < MinCISamples {
		out.Lo, out.Hi = sum.Center, sum.Center
	} else {
		out.CI = sum.PctRangeString()
	}
	return s, out
}

// CompareSides compares two sides series by series (metric, unit and
// labels), in a's order, then the series only b has.
func CompareSides(a, b Side) []Change {
	va, pa, oa := sideSamples(a)
	vb, pb, ob := sideSamples(b)
	var out []Change
	for _, k := range oa {
		p := pa[k]
		c := Change{Metric: p.Metric, Labels: results.CloneLabels(p.Labels), Unit: p.Unit, HigherIsBetter: HigherIsBetter(p.Metric, p.Unit)}
		sa, suma := summarize(va[k])
		c.A = suma
		if _, ok := vb[k]; !ok {
			c.Only = "a"
			out = append(out, c)
			continue
		}
		sb, sumb := summarize(vb[k])
		c.B = sumb
		cmp := benchmath.AssumeNothing.Compare(sa, sb)
		c.P = cmp.P
		c.Significant = cmp.P < cmp.Alpha
		c.Delta = cmp.FormatDelta(suma.Median, sumb.Median)
		if suma.Median != 0 {
			c.Percent = (sumb.Median - suma.Median) / math.Abs(suma.Median) * 100
		}
		worse := sumb.Median > suma.Median
		if c.HigherIsBetter {
			worse = sumb.Median < suma.Median
		}
		c.Regression = c.Significant && worse
		if min(suma.N, sumb.N) >= MinCompareSamples {
			// benchmath's own warnings say what the one below does.
			for _, w := range append(append(sa.Warnings, sb.Warnings...), cmp.Warnings...) {
				c.Warnings = append(c.Warnings, w.Error())
			}
		}
		if n := min(suma.N, sumb.N); n < MinCompareSamples {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%d sample(s) on a side: below %d a side a Mann-Whitney U test cannot tell a change from noise (run with --repeat %d or more)", n, MinCompareSamples, MinCompareSamples))
		} else if n < MinCISamples {
			c.Warnings = append(c.Warnings, fmt.Sprintf("%d samples on one side: no %.0f%% confidence interval below %d", n, CompareConfidence*100, MinCISamples))
		}
		out = append(out, c)
	}
	for _, k := range ob {
		if _, ok := va[k]; ok {
			continue
		}
		p := pb[k]
		_, sumb := summarize(vb[k])
		out = append(out, Change{Metric: p.Metric, Labels: results.CloneLabels(p.Labels), Unit: p.Unit, B: sumb, Only: "b",
			HigherIsBetter: HigherIsBetter(p.Metric, p.Unit)})
	}
	return out
}

// Regressions are the changes that are significant, the worse way, and by
// more than pct percent.
func Regressions(cs []Change, pct float64) []Change {
	var out []Change
	for _, c := range cs {
		if c.Regression && math.Abs(c.Percent) > pct {
			out = append(out, c)
		}
	}
	return out
}

// WriteChanges prints a comparison the way benchstat does: each side's
// median with its confidence interval, then the change, "~" when the
// difference is within the noise, with the test's p-value and sample
// counts.
func WriteChanges(w io.Writer, a, b Side, cs []Change) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "METRIC\tLABELS\tA: %s\t\tB: %s\t\tCHANGE\tTEST\n", a.Name, b.Name)
	// Each warning once, naming the series it applies to.
	var notes []string
	notesFor := map[string][]string{}
	for _, c := range cs {
		side := func(s SideSummary, present bool) (string, string) {
			if !present {
				return "-", ""
			}
			return results.FormatValue(s.Median) + " " + c.Unit, plusMinus(s.CI)
		}
		av, aci := side(c.A, c.Only != "b")
		bv, bci := side(c.B, c.Only != "a")
		delta, test := c.Delta, fmt.Sprintf("p=%.3f n=%d+%d", c.P, c.A.N, c.B.N)
		switch c.Only {
		case "a":
			delta, test = "only in A", ""
		case "b":
			delta, test = "only in B", ""
		default:
			if c.Regression {
				delta += " (worse)"
			} else if c.Significant {
				delta += " (better)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Metric, results.LabelCell(c.Labels), av, aci, bv, bci, delta, test)
		for _, warn := range c.Warnings {
			if _, ok := notesFor[warn]; !ok {
				notes = append(notes, warn)
			}
			notesFor[warn] = append(notesFor[warn], results.SeriesLabel(c.Metric, c.Labels))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nmedians with %.0f%% confidence intervals (%d or more samples a side); CHANGE is ~ when a two-sided Mann-Whitney U test finds no difference at alpha %g\n",
		CompareConfidence*100, MinCISamples, benchmath.DefaultThresholds.CompareAlpha)
	for _, n := range notes {
		who := notesFor[n]
		if len(who) == len(cs) && len(cs) > 1 {
			who = []string{"every metric"}
		}
		fmt.Fprintf(w, "warning: %s: %s\n", strings.Join(who, ", "), n)
	}
	return nil
}

func plusMinus(ci string) string {
	if ci == "" {
		return ""
	}
	return "± " + strings.TrimPrefix(ci, "±")
}
