package results

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// ProfileName returns the name of the profile a run used. Machine.Profile
// holds the resolved profile as whatever type the caller had (a struct with
// a Name field, or a map after Load); this package must not import images,
// so the name is read through its JSON form ("name" or "Name"). A string
// Profile is the name itself. Without one it falls back to Machine.Name.
func ProfileName(m Machine) string {
	if s, ok := m.Profile.(string); ok && s != "" {
		return s
	}
	if n := profileField(m.Profile, "name", "Name"); n != "" {
		return n
	}
	return m.Name
}

// profileField reads a top-level string field of the profile's JSON form.
func profileField(p any, keys ...string) string {
	if p == nil {
		return ""
	}
	var fields map[string]any
	if m, ok := p.(map[string]any); ok {
		fields = m
	} else {
		data, err := json.Marshal(p)
		if err != nil || json.Unmarshal(data, &fields) != nil {
			return ""
		}
	}
	for _, k := range keys {
		if s, ok := fields[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// FormatValue renders v with three significant digits (trailing zeros
// dropped), and values of 1000 or more as whole numbers: 0.18, 12.2, 386,
// 9077.
func FormatValue(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	prec := max(2-int(math.Floor(math.Log10(math.Abs(v)))), 0)
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func formatCV(cv float64) string {
	return strconv.FormatFloat(cv*100, 'f', 1, 64) + "%"
}

func labelCell(labels map[string]string) string {
	if l := FormatLabels(labels); l != "" {
		return l
	}
	return "-"
}

// header is the provenance block shared by the text and Markdown output:
// what the run was, where it really ran and what that machine stands for.
func header(r *Result) [][2]string {
	profile := ProfileName(r.Machine)
	rows := [][2]string{{"run", r.ID}}
	plugin := r.Plugin
	if r.PluginVersion != "" {
		plugin += " " + r.PluginVersion
	}
	rows = append(rows, [2]string{"plugin", plugin + ", experiment " + r.Experiment})
	if len(r.Parameters) > 0 {
		rows = append(rows, [2]string{"parameters", FormatLabels(r.Parameters)})
	}
	outcome := r.Outcome.Status
	if outcome == "" {
		outcome = "unknown"
	}
	if r.Outcome.Reason != "" {
		outcome += ": " + r.Outcome.Reason
	}
	rows = append(rows, [2]string{"outcome", outcome})
	// A disturbed measurement is shown as such wherever it is read.
	if n := len(r.Interference); n > 0 {
		rows = append(rows, [2]string{"WARNING", fmt.Sprintf("%d command(s) ran in the guest during this run (--no-wait); its numbers may be disturbed: run it again", n)})
		for _, in := range r.Interference {
			rows = append(rows, [2]string{"interference", in.Time.Local().Format("15:04:05") + " " + strings.Join(in.Command, " ")})
		}
	}

	ran := "profile " + orUnknown(profile)
	if r.Machine.Name != "" && r.Machine.Name != profile {
		ran += " (vm " + r.Machine.Name + ")"
	}
	ran += ", accelerator " + orUnknown(r.Machine.Accelerator) + ", clock " + orUnknown(r.Machine.Clock)
	if r.Machine.Boot != "" {
		ran += ", boot " + r.Machine.Boot
	}
	rows = append(rows, [2]string{"ran on", ran})

	kernel := orUnknown(r.Machine.KernelID)
	if r.Machine.KernelPackage != "" {
		kernel += " (" + r.Machine.KernelPackage + ")"
	}
	if r.Guest.KernelRelease != "" {
		kernel += ", release " + r.Guest.KernelRelease
	}
	rows = append(rows, [2]string{"kernel", kernel})
	if g := guestLine(r.Guest); g != "" {
		rows = append(rows, [2]string{"guest", g})
	}
	stands := standsFor(r, profile)
	if stands == "" {
		stands = profileField(r.Machine.Profile, "summary", "Summary")
	}
	if stands != "" {
		rows = append(rows, [2]string{"stands for", stands})
		rows = append(rows, [2]string{"note", "emulated under " + orUnknown(r.Machine.Accelerator) +
			" on the kernel above, not the original hardware or kernel"})
	}
	return rows
}

func guestLine(g GuestEnv) string {
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

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// comparisons are the result's own (every run records them), else what
// can be compared without the plugin's description.
func comparisons(r *Result) []Comparison {
	if len(r.Comparisons) > 0 {
		return r.Comparisons
	}
	return ComparePublished(r, nil)
}

// standsFor describes the historical machines profile stands for: those of
// the figures the run was compared with (from its plugin's description),
// then those of the figures here.
func standsFor(r *Result, profile string) string {
	if profile == "" {
		return ""
	}
	var machines []string
	for _, c := range comparisons(r) {
		if c.Profile == profile && !slices.Contains(machines, c.Machine) {
			machines = append(machines, c.Machine)
		}
	}
	for _, m := range publishedMachines(profile) {
		if !slices.Contains(machines, m) {
			machines = append(machines, m)
		}
	}
	return strings.Join(machines, "; ")
}

// sameMark flags the figures of the machine the run's profile stands for.
func sameMark(c Comparison) string {
	if c.SameProfile {
		return "*"
	}
	return ""
}

// WriteTable writes r for a terminal: the provenance header, a table of the
// summaries (median with range and spread) and a table of our medians beside
// every published figure. Summaries and comparisons are computed when r has
// none.
func WriteTable(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
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

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tlabels\tn\tmedian\tmin..max\tCV\tunit")
	for _, s := range summaries(r) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s..%s\t%s\t%s\n", s.Metric, labelCell(s.Labels), s.N,
			FormatValue(s.Median), FormatValue(s.Min), FormatValue(s.Max), formatCV(s.CV), s.Unit)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	all := comparisons(r)
	cs := primary(all)
	if len(cs) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "published (* = the machine this profile stands for)")
	if n := len(all) - len(cs); n > 0 {
		defer fmt.Fprintf(w, "(%d more figures from other sources are in the result's comparisons)\n", n)
	}
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "\tmetric\tlabels\tours\tpublished\tunit\tratio\tmachine\tsource")
	for _, c := range cs {
		src := c.Source
		if c.Note != "" {
			src += " (" + c.Note + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", sameMark(c), c.Metric, labelCell(c.Labels),
			FormatValue(c.Ours), FormatValue(c.Published), c.Unit, FormatValue(c.Ratio), c.Machine, src)
	}
	return tw.Flush()
}

// WriteMarkdown writes r as a Markdown report with the same content as
// WriteTable.
func WriteMarkdown(w io.Writer, r *Result) error {
	var b strings.Builder
	title := r.Plugin + " / " + r.Experiment
	fmt.Fprintf(&b, "## %s on %s\n\n", mdCell(title), mdCell(orUnknown(ProfileName(r.Machine))))
	for _, h := range header(r) {
		fmt.Fprintf(&b, "- **%s**: %s\n", h[0], mdCell(h[1]))
	}
	if r.Outcome.StderrTail != "" {
		fmt.Fprintf(&b, "\nstderr tail:\n\n```\n%s\n```\n", strings.TrimRight(r.Outcome.StderrTail, "\n"))
	}
	b.WriteString("\n| metric | labels | n | median | min..max | CV | unit |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|\n")
	for _, s := range summaries(r) {
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s..%s | %s | %s |\n", mdCell(s.Metric), mdCell(labelCell(s.Labels)),
			s.N, FormatValue(s.Median), FormatValue(s.Min), FormatValue(s.Max), formatCV(s.CV), mdCell(s.Unit))
	}
	if cs := comparisons(r); len(cs) > 0 {
		b.WriteString("\nPublished figures (* = the machine this profile stands for):\n\n")
		b.WriteString("| | metric | labels | ours | published | unit | ratio | machine | source |\n")
		b.WriteString("|---|---|---|---:|---:|---|---:|---|---|\n")
		for _, c := range cs {
			src := c.Source
			if c.Note != "" {
				src += " (" + c.Note + ")"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", sameMark(c), mdCell(c.Metric),
				mdCell(labelCell(c.Labels)), FormatValue(c.Ours), FormatValue(c.Published), mdCell(c.Unit),
				FormatValue(c.Ratio), mdCell(c.Machine), mdCell(src))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell escapes text for a Markdown table cell or list item.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`).Replace(s)
}

// CSVHeader is the first row WriteCSV writes.
var CSVHeader = []string{"id", "plugin", "experiment", "profile", "accelerator", "clock",
	"metric", "labels", "repeat", "value", "unit"}

// WriteCSV writes one row per sample (values at full precision) under
// CSVHeader; labels are "k=v k=v".
func WriteCSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	profile := ProfileName(r.Machine)
	for _, s := range r.Samples {
		row := []string{r.ID, r.Plugin, r.Experiment, profile, r.Machine.Accelerator, r.Machine.Clock,
			s.Metric, FormatLabels(s.Labels), strconv.Itoa(s.Repeat),
			strconv.FormatFloat(s.Value, 'g', -1, 64), s.Unit}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes r as indented JSON, the same document Save stores.
func WriteJSON(w io.Writer, r *Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("result %s to json: %w", r.ID, err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// primary keeps the comparisons a summary table shows: the figures of the
// profile's own machine and those of the experiments' own sources (E1..E5),
// not the other anchors or the figures measured here for orientation.
func primary(cs []Comparison) []Comparison {
	var out []Comparison
	for _, c := range cs {
		if c.SameProfile || (strings.HasPrefix(c.Experiment, "E") && !strings.Contains(c.Source, "not published")) {
			out = append(out, c)
		}
	}
	return out
}
