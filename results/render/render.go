// Package render writes results for people and tools: text and Markdown
// tables, CSV, JSON, JUnit, SVG plots and the HTML report.
package render

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"

	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/claims"
	"lab/results/compare"
	"lab/results/stats"
)

func formatCV(cv float64) string {
	return strconv.FormatFloat(cv*100, 'f', 1, 64) + "%"
}

// header is the provenance block shared by the text and Markdown output:
// what the run was, where it really ran and what that machine stands for.
func header(r *results.Result) [][2]string {
	profile := results.ProfileName(r.Machine)
	rows := [][2]string{{"run", r.ID}}
	plugin := r.Plugin
	if r.PluginVersion != "" {
		plugin += " " + r.PluginVersion
	}
	rows = append(rows, [2]string{"plugin", plugin + ", experiment " + r.Experiment})
	if len(r.Parameters) > 0 {
		rows = append(rows, [2]string{"parameters", results.FormatLabels(r.Parameters)})
	}
	outcome := r.Outcome.Status
	if outcome == "" {
		outcome = "unknown"
	}
	if r.Outcome.Reason != "" {
		outcome += ": " + r.Outcome.Reason
	}
	rows = append(rows, [2]string{"outcome", outcome})

	ran := "profile " + results.OrUnknown(profile)
	if r.Machine.Name != "" && r.Machine.Name != profile {
		ran += " (vm " + r.Machine.Name + ")"
	}
	ran += ", accelerator " + results.OrUnknown(r.Machine.Accelerator) + ", clock " + results.OrUnknown(r.Machine.Clock)
	if r.Machine.Boot != "" {
		ran += ", boot " + r.Machine.Boot
	}
	rows = append(rows, [2]string{"ran on", ran})

	kernel := results.OrUnknown(r.Machine.KernelID)
	if r.Machine.KernelPackage != "" {
		kernel += " (" + r.Machine.KernelPackage + ")"
	}
	if r.Guest.KernelRelease != "" {
		kernel += ", release " + r.Guest.KernelRelease
	}
	if r.Machine.KernelEntry != "" {
		kernel += ", entered as " + r.Machine.KernelEntry
	}
	rows = append(rows, [2]string{"kernel", kernel})
	if g := guestLine(r.Guest); g != "" {
		rows = append(rows, [2]string{"guest", g})
	}
	stands := standsFor(r, results.FiguresProfile(r.Machine))
	if stands == "" {
		stands = results.ProfileField(r.Machine.Profile, "summary", "Summary")
	}
	if stands != "" {
		rows = append(rows, [2]string{"stands for", stands})
		rows = append(rows, [2]string{"note", "emulated under " + results.OrUnknown(r.Machine.Accelerator) +
			" on the kernel above, not the original hardware or kernel"})
	}
	return rows
}

func guestLine(g results.GuestEnv) string {
	var parts []string
	if g.CPUModel != "" {
		parts = append(parts, g.CPUModel)
	}
	if g.OnlineCPUs > 0 {
		cpus := strconv.Itoa(g.OnlineCPUs)
		if g.PresentCPUs > 0 {
			cpus += "/" + strconv.Itoa(g.PresentCPUs)
		}
		parts = append(parts, cpus+" CPUs online")
	}
	if g.MemTotalKB > 0 {
		parts = append(parts, strconv.FormatInt(g.MemTotalKB/1024, 10)+" MB")
	}
	switch {
	case g.StackKB < 0:
		parts = append(parts, "stack unlimited")
	case g.StackKB > 0:
		parts = append(parts, "stack "+strconv.FormatInt(g.StackKB, 10)+" KB")
	}
	if g.Libc != "" {
		parts = append(parts, g.Libc)
	}
	return strings.Join(parts, ", ")
}

// comparisons are the result's own (every run records them), else what
// can be compared without the plugin's description.
func comparisons(r *results.Result) []results.Comparison {
	if len(r.Comparisons) > 0 {
		return r.Comparisons
	}
	return compare.ComparePublished(r, nil)
}

// standsFor describes the historical machines profile stands for: those of
// the figures the run was compared with (from its plugin's description),
// then those of declared, other figures the plugins declare.
func standsFor(r *results.Result, profile string, declared ...contract.Reference) string {
	if profile == "" {
		return ""
	}
	var machines []string
	for _, c := range comparisons(r) {
		if c.Profile == profile && !slices.Contains(machines, c.Machine) {
			machines = append(machines, c.Machine)
		}
	}
	for _, ref := range declared {
		if ref.Profile == profile && !slices.Contains(machines, ref.Machine) {
			machines = append(machines, ref.Machine)
		}
	}
	return strings.Join(machines, "; ")
}

// sameMark flags the figures of the machine the run's profile stands for.
func sameMark(c results.Comparison) string {
	if c.SameProfile {
		return "*"
	}
	return ""
}

// WriteTableAll is WriteSummary with every published figure the run was
// compared with and no notes: `lab results`' table.
func WriteTableAll(w io.Writer, r *results.Result) error { return WriteSummary(w, r, true, Notes{}) }

// Notes are what a run's summary says beyond its result, made by the
// caller from the plugin's description (`lab run`: engine.Run's Undecided and
// Elsewhere).
type Notes struct {
	// Undecided say which command decides the claims the run left
	// inconclusive for too few repeats; after the verdicts.
	Undecided []string
	// Elsewhere point at the claims of the plugin's other experiments
	// whose machine the profile stands for; after the published figures,
	// or instead of saying there are none.
	Elsewhere []string
	// Recap are claims whose verdicts the summary ends with, each with
	// what decided it (ours against the published): the claims `lab
	// run` chose the experiment for.
	Recap []string
}

// WriteSummary writes r for a terminal, compact, as `lab run` prints
// it: the verdicts on the experiment's claims first (then
// notes.Undecided), then our metrics (median with range and spread),
// then the published figures of the machine the profile stands for
// (then notes.Elsewhere), then where the run ran. The figures of other
// machines are in the result's comparisons, and shown when all is set
// (`lab run --all`). Summaries and comparisons are computed when r has
// none.
func WriteSummary(w io.Writer, r *results.Result, all bool, notes Notes) error {
	// A disturbed measurement is shown as such before anything it decided.
	if lines := interferenceLines(r); len(lines) > 0 {
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		for _, h := range lines {
			fmt.Fprintf(tw, "%s\t%s\n", h[0], h[1])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	writeVerdicts(w, r)
	for _, l := range notes.Undecided {
		fmt.Fprintln(w, "  "+l)
	}

	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	// trimmed is E1's own estimator (drop min and max, average), beside
	// the median we decide on.
	fmt.Fprintln(tw, "metric\tlabels\tn\tmedian\ttrimmed\tmin..max\tCV\tunit")
	for _, s := range stats.Summaries(r) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s..%s\t%s\t%s\n", s.Metric, results.LabelCell(s.Labels), s.N,
			results.FormatValue(s.Median), results.FormatValue(s.TrimmedMean), results.FormatValue(s.Min), results.FormatValue(s.Max), formatCV(s.CV), s.Unit)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	every := comparisons(r)
	cs := ownMachine(every)
	if all {
		cs = every
	}
	fmt.Fprintln(w)
	if len(cs) > 0 {
		title := "published, " + results.OrUnknown(standsFor(r, results.FiguresProfile(r.Machine)))
		if all {
			title = "published (* = the machine this profile stands for)"
		}
		fmt.Fprintln(w, title)
		tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		if all {
			fmt.Fprintln(tw, "\tmetric\tlabels\tours\tpublished\tunit\tours/published\tmachine\tsource")
		} else {
			fmt.Fprintln(tw, "metric\tlabels\tours\tpublished\tunit\tours/published\tsource")
		}
		for _, c := range cs {
			cells := []string{c.Metric, results.LabelCell(c.Labels), results.FormatValue(c.Ours), results.FormatValue(c.Published), c.Unit, ratioCell(c, r.Machine)}
			if all {
				cells = append(append([]string{sameMark(c)}, cells...), c.Machine)
			}
			fmt.Fprintln(tw, strings.Join(append(cells, sourceCell(c)), "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if note := ratioNote(cs, r.Machine); note != "" {
			fmt.Fprintln(w, note)
		}
	} else if len(notes.Elsewhere) == 0 {
		fmt.Fprintf(w, "no published figure of the machine %s stands for in this experiment\n", results.OrUnknown(results.ProfileName(r.Machine)))
	}
	for _, l := range notes.Elsewhere {
		fmt.Fprintln(w, l)
	}
	if n := len(every) - len(cs); n > 0 {
		fmt.Fprintf(w, "(%d figures of other machines: lab run --all, or the result's comparisons)\n", n)
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, h := range header(r) {
		fmt.Fprintf(tw, "%s\t%s\n", h[0], h[1])
	}
	if r.Outcome.StderrTail != "" {
		fmt.Fprintln(tw, "stderr tail:")
		for _, l := range strings.Split(strings.TrimRight(r.Outcome.StderrTail, "\n"), "\n") {
			fmt.Fprintln(tw, "  "+l)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeRecap(w, r, notes.Recap)
	return nil
}

// writeRecap ends a summary with the verdicts of the claims recap, each
// with its reason (the deciding numbers, ours against the published;
// the fidelity note, said above, left out) and, where the reason holds
// none of our numbers, the median of the metric its rule reads.
func writeRecap(w io.Writer, r *results.Result, recap []string) {
	var vs []results.Verdict
	for _, v := range r.Verdicts {
		if slices.Contains(recap, v.Claim) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nthe verdicts on %s's claims, ours beside the published:\n", results.OrUnknown(results.ProfileName(r.Machine)))
	idw, vw := 0, 0
	for _, v := range vs {
		idw, vw = max(idw, len(v.Claim)), max(vw, len(v.Verdict))
	}
	sums := stats.Summaries(r)
	for _, v := range vs {
		why, _, _ := strings.Cut(v.Reason, ". Fidelity: ")
		if len(v.Numbers) == 0 {
			metric, _, _ := strings.Cut(v.Rule, " ")
			for _, s := range sums {
				if s.Metric == metric && len(s.Labels) == 0 {
					why = fmt.Sprintf("ours: %s %s %s (median of %d); %s", metric, results.FormatValue(s.Median), s.Unit, s.N, why)
					break
				}
			}
		}
		fmt.Fprintf(w, "  %-*s  %-*s  %s\n", idw, v.Claim, vw, v.Verdict, why)
	}
}

// writeVerdicts writes the claims block: each claim's verdict, its
// statement, and the numbers that decided it.
func writeVerdicts(w io.Writer, r *results.Result) {
	fmt.Fprintf(w, "claims of %s/%s, run on %s (%s, clock %s)\n", r.Plugin, r.Experiment, results.OrUnknown(results.ProfileName(r.Machine)),
		results.OrUnknown(r.Machine.Accelerator), results.OrUnknown(r.Machine.Clock))
	if len(r.Verdicts) == 0 {
		fmt.Fprintln(w, "  none declared for this experiment")
		return
	}
	idw, vw := 0, 0
	for _, v := range r.Verdicts {
		idw, vw = max(idw, len(v.Claim)), max(vw, len(v.Verdict))
	}
	indent := strings.Repeat(" ", 2+idw+2+vw+2)
	for _, v := range r.Verdicts {
		fmt.Fprintf(w, "  %-*s  %-*s  %s\n", idw, v.Claim, vw, v.Verdict, v.Statement)
		fmt.Fprintf(w, "%s%s\n", indent, v.Reason)
		if v.Note != "" {
			fmt.Fprintf(w, "%snote: %s\n", indent, v.Note)
		}
	}
}

// interferenceLines warn about commands that ran during the run.
func interferenceLines(r *results.Result) [][2]string {
	n := len(r.Interference)
	if n == 0 {
		return nil
	}
	rows := [][2]string{{"WARNING", fmt.Sprintf("%d command(s) ran in the guest during this run (--no-wait); its numbers and verdicts may be disturbed: run it again", n)}}
	for _, in := range r.Interference {
		rows = append(rows, [2]string{"interference", in.Time.Local().Format("15:04:05") + " " + strings.Join(in.Command, " ")})
	}
	return rows
}

// ownMachine keeps the figures of the machine the run's profile stands
// for.
func ownMachine(cs []results.Comparison) []results.Comparison {
	var out []results.Comparison
	for _, c := range cs {
		if c.SameProfile {
			out = append(out, c)
		}
	}
	return out
}

// ratioCell is ours / published where that means something: for
// quantities the clock does not scale (ratios, counts), and for times
// only under icount, where guest time is deterministic (marked "g").
// Under the host clock a time is emulation speed: no ratio.
func ratioCell(c results.Comparison, m results.MachineRecord) string {
	if c.Published == 0 {
		return "-"
	}
	if !results.IsTimeUnit(c.Unit) {
		return results.FormatValue(c.Ratio)
	}
	if _, ok := claims.ClockNote(m); ok {
		return results.FormatValue(c.Ratio) + " g"
	}
	return "-"
}

// ratioNote explains the ratios of times, if the table has any.
func ratioNote(cs []results.Comparison, m results.MachineRecord) string {
	for _, c := range cs {
		if results.IsTimeUnit(c.Unit) {
			note, ok := claims.ClockNote(m)
			if ok {
				return "g: a ratio of times in guest time: " + note
			}
			return "no ratio for times: " + note
		}
	}
	return ""
}

func sourceCell(c results.Comparison) string {
	if c.Note != "" {
		return c.Source + " (" + c.Note + ")"
	}
	return c.Source
}

// WriteMarkdown writes r as a Markdown report with the same content as
// WriteTableAll, in the same order.
func WriteMarkdown(w io.Writer, r *results.Result) error {
	var b strings.Builder
	title := r.Plugin + " / " + r.Experiment
	fmt.Fprintf(&b, "## %s on %s\n\n", mdCell(title), mdCell(results.OrUnknown(results.ProfileName(r.Machine))))
	for _, h := range interferenceLines(r) {
		fmt.Fprintf(&b, "- **%s**: %s\n", h[0], mdCell(h[1]))
	}
	if len(r.Verdicts) > 0 {
		b.WriteString("\n| claim | verdict | statement | why |\n|---|---|---|---|\n")
		for _, v := range r.Verdicts {
			why := v.Reason
			if v.Note != "" {
				why += " (note: " + v.Note + ")"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCell(v.Claim), mdCell(v.Verdict), mdCell(v.Statement), mdCell(why))
		}
	} else {
		b.WriteString("\nNo claims declared for this experiment.\n")
	}
	b.WriteString("\n| metric | labels | n | median | trimmed | min..max | CV | unit |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---|\n")
	for _, s := range stats.Summaries(r) {
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s..%s | %s | %s |\n", mdCell(s.Metric), mdCell(results.LabelCell(s.Labels)),
			s.N, results.FormatValue(s.Median), results.FormatValue(s.TrimmedMean), results.FormatValue(s.Min), results.FormatValue(s.Max), formatCV(s.CV), mdCell(s.Unit))
	}
	if cs := comparisons(r); len(cs) > 0 {
		b.WriteString("\nPublished figures (* = the machine this profile stands for):\n\n")
		b.WriteString("| | metric | labels | ours | published | unit | ours/published | machine | source |\n")
		b.WriteString("|---|---|---|---:|---:|---|---:|---|---|\n")
		for _, c := range cs {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", sameMark(c), mdCell(c.Metric),
				mdCell(results.LabelCell(c.Labels)), results.FormatValue(c.Ours), results.FormatValue(c.Published), mdCell(c.Unit),
				ratioCell(c, r.Machine), mdCell(c.Machine), mdCell(sourceCell(c)))
		}
		if note := ratioNote(cs, r.Machine); note != "" {
			fmt.Fprintf(&b, "\n%s\n", mdCell(note))
		}
	}
	b.WriteString("\n")
	for _, h := range header(r) {
		fmt.Fprintf(&b, "- **%s**: %s\n", h[0], mdCell(h[1]))
	}
	if r.Outcome.StderrTail != "" {
		fmt.Fprintf(&b, "\nstderr tail:\n\n```\n%s\n```\n", strings.TrimRight(r.Outcome.StderrTail, "\n"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell escapes text for a Markdown table cell or list item.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`).Replace(s)
}

// CSVHeader is the first row WriteCSVRuns writes.
var CSVHeader = []string{"id", "plugin", "experiment", "profile", "accelerator", "clock",
	"metric", "labels", "repeat", "value", "unit"}

// WriteCSVRuns writes the samples of every run under one CSVHeader, one
// row per sample (values at full precision); labels are "k=v k=v".
func WriteCSVRuns(w io.Writer, runs []*results.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, r := range runs {
		profile := results.ProfileName(r.Machine)
		for _, s := range r.Samples {
			row := []string{r.ID, r.Plugin, r.Experiment, profile, r.Machine.Accelerator, r.Machine.Clock,
				s.Metric, results.FormatLabels(s.Labels), strconv.Itoa(s.Repeat),
				strconv.FormatFloat(s.Value, 'g', -1, 64), s.Unit}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes r as indented JSON, the same document Save stores.
func WriteJSON(w io.Writer, r *results.Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("result %s to json: %w", r.ID, err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
