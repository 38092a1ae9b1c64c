package render

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/claims"
	"lab/results/stats"
)

// How each part of the report is shown: claims, runs, plots, provenance,
// and the commands that would make the runs missing.

// howTo is a command line per installed experiment that makes a run the
// report can show, on the profile of its first claim.
func howTo(exps []ReportExperiment) []string {
	var out []string
	for _, e := range exps {
		out = append(out, runHint(e.Plugin, e.Name, firstProfile(e), nil))
	}
	return out
}

// firstProfile is the profile of e's first claim that names one, else
// of its first published figure that does.
func firstProfile(e ReportExperiment) string {
	for _, c := range e.Claims {
		if c.Profile != "" {
			return c.Profile
		}
	}
	for _, r := range e.References {
		if r.Profile != "" {
			return r.Profile
		}
	}
	return ""
}

// runHint is `lab run PLUGIN -e EXP --profile P -p k=v --repeat 6`: six
// repeats are what a sign test needs (a rank test needs four).
func runHint(plugin, exp, profile string, params map[string]string) string {
	parts := []string{"lab run", plugin, "-e", exp}
	if profile != "" {
		parts = append(parts, "--profile", profile)
	}
	for _, k := range results.SortedKeys(params) {
		parts = append(parts, "-p", k+"="+params[k])
	}
	return strings.Join(append(parts, "--repeat", "6"), " ")
}

func claimViewOf(s claims.ClaimStatus, anchor, expAnchor string, runAnchor map[string]string) claimView {
	c := s.Claim
	machine := c.Machine
	if c.Profile != "" {
		machine += " (profile " + c.Profile + ")"
	}
	cv := claimView{ID: c.ID, Anchor: anchor, Verdict: orNotRun(s.Verdict), Class: verdictClass(orNotRun(s.Verdict)),
		Statement: c.Statement, Source: c.Source, Machine: machine, Rule: s.Rule, Rationale: c.Rationale,
		Scope: ScopeText(&c), Plugin: c.Plugin, Bench: c.Bench, ExpAnchor: expAnchor, Decided: len(s.Judged.Runs),
		Words: c.SourceWords, Digest: c.DigestWords, DigestNote: DigestNote, Fidelity: c.Fidelity, ByConstruction: c.ByConstruction, OutOfScope: len(s.Judged.OutOfScope)}
	v := s.Judged
	for _, st := range v.Strata {
		cv.Strata = append(cv.Strata, stratumView{Profile: st.Profile, Clock: st.Clock, Accelerator: st.Accelerator,
			Verdict: st.Verdict, Class: verdictClass(st.Verdict), Reason: st.Reason})
	}
	if len(v.Runs) == 0 {
		cv.Reason = "no stored run decided it"
		if v.Reason != "" {
			cv.Reason = v.Reason
		}
		if c.Untestable == nil {
			cv.HowTo = claims.DecideCommand(&c)
		}
		return cv
	}
	cv.Reason, cv.Note, cv.Numbers = v.Reason, v.Note, numberViews(v.Numbers)
	where := map[string]string{}
	for _, st := range v.Strata {
		for _, id := range st.Runs {
			if _, ok := where[id]; !ok {
				where[id] = " (" + results.OrUnknown(st.Profile) + ", " + results.OrUnknown(st.Accelerator) + ", clock " + results.OrUnknown(st.Clock) + ")"
			}
		}
	}
	for _, id := range v.Runs {
		cv.Runs = append(cv.Runs, runLink{ID: id, Anchor: runAnchor[id], Label: id + where[id]})
	}
	return cv
}

func orNotRun(v string) string {
	if v == "" {
		return results.NotRun
	}
	return v
}

func numberViews(ns []results.Number) []numberView {
	var out []numberView
	for _, n := range ns {
		out = append(out, numberView{Name: n.Name, Value: results.FormatValue(n.Value), Unit: n.Unit})
	}
	return out
}

func refViewOf(r contract.Reference) refView {
	return refView{Metric: r.Metric, Labels: results.LabelCell(r.Labels), Value: exactValue(r.Value), Unit: r.Unit, Machine: r.Machine,
		Profile: r.Profile, Source: r.Source, Note: r.Note}
}

// exactValue is a published figure as published (9076.9, not 9077).
func exactValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func outcomeClass(status string) string {
	switch status {
	case results.StatusOK:
		return "v-ok"
	case "expected-crash":
		return "v-nc"
	case results.StatusInterrupted:
		return "v-unsure"
	}
	return "v-bad"
}

// runViewOf is what an experiment's section shows of one run; e is its
// description, nil for a plugin not installed.
func runViewOf(r *results.Result, e *ReportExperiment, anchor string, claimAnchor map[string]string) runView {
	rv := runView{ID: r.ID, Anchor: anchor, Profile: results.OrUnknown(results.ProfileName(r.Machine)), Clock: results.OrUnknown(r.Machine.Clock),
		Accelerator: results.OrUnknown(r.Machine.Accelerator), Started: r.Started.UTC().Format(time.RFC3339), Params: results.FormatLabels(r.Parameters),
		Outcome: results.OrUnknown(r.Outcome.Status), OutcomeClass: outcomeClass(r.Outcome.Status), Interference: len(r.Interference)}
	if r.Outcome.Reason != "" {
		rv.Outcome += ": " + r.Outcome.Reason
	}
	for _, v := range r.Verdicts {
		if !v.Judged() {
			rv.NotRun = append(rv.NotRun, v.Claim+" ("+v.Reason+")")
			continue
		}
		rv.Verdicts = append(rv.Verdicts, verdictView{Claim: v.Claim, ClaimAnchor: claimAnchor[v.Claim], Verdict: v.Verdict,
			Class: verdictClass(v.Verdict), Statement: v.Statement, Reason: v.Reason, Note: v.Note, Numbers: numberViews(v.Numbers)})
	}
	for _, s := range stats.Summaries(r) {
		rv.Summary = append(rv.Summary, summaryRow{Metric: s.Metric, Labels: results.LabelCell(s.Labels), N: s.N, Median: results.FormatValue(s.Median),
			Trimmed: results.FormatValue(s.TrimmedMean), Range: results.FormatValue(s.Min) + ".." + results.FormatValue(s.Max), CV: formatCV(s.CV), Unit: s.Unit})
	}
	cs := comparisons(r)
	rv.Comparisons = comparisonRows(r, cs)
	rv.RatioNote = ratioNote(cs, r.Machine)
	rv.Plot, rv.PlotNote = reportPlot(r, e)
	return rv
}

// comparisonRows are the rows of r's table beside the published
// figures, one per comparison in cs; for a sweep, one per figure and
// labels other than the swept keys, with ours (and the ratio) at each
// point in it, "count=5: 0.12": a figure is the same at every point,
// so listing it again for each one would only repeat it.
func comparisonRows(r *results.Result, cs []results.Comparison) []comparisonRow {
	var swept []string
	if r.Sweep != nil {
		for _, a := range r.Sweep.Axes {
			swept = append(swept, a.Key)
		}
	}
	var rows []comparisonRow
	at := map[string]int{} // the row of a figure and labels
	for _, c := range cs {
		rest, point := map[string]string{}, map[string]string{}
		for k, v := range c.Labels {
			if slices.Contains(swept, k) {
				point[k] = v
			} else {
				rest[k] = v
			}
		}
		row := comparisonRow{Same: c.SameProfile, Metric: c.Metric, Labels: results.LabelCell(rest), Published: exactValue(c.Published),
			Unit: c.Unit, Machine: c.Machine, Source: sourceCell(c)}
		ours, ratio := results.FormatValue(c.Ours), ratioCell(c, r.Machine)
		if len(swept) == 0 {
			row.Labels = results.LabelCell(c.Labels)
			row.Ours, row.Ratio = []string{ours}, []string{ratio}
			rows = append(rows, row)
			continue
		}
		key := fmt.Sprint(row)
		i, ok := at[key]
		if !ok {
			i = len(rows)
			at[key] = i
			rows = append(rows, row)
		}
		p := results.FormatLabels(point)
		rows[i].Ours = append(rows[i].Ours, p+": "+ours)
		rows[i].Ratio = append(rows[i].Ratio, p+": "+ratio)
	}
	// A figure no ratio applies to says so once.
	for i := range rows {
		if len(rows[i].Ratio) > 1 && !slices.ContainsFunc(rows[i].Ratio, func(s string) bool { return !strings.HasSuffix(s, ": -") }) {
			rows[i].Ratio = []string{"-"}
		}
	}
	return rows
}

// reportPlot draws r's plot as lab run does (a sweep against its swept
// key, the chart of a table or the chart its experiment e declares) and
// returns it ready to inline, or a note saying why there is none.
func reportPlot(r *results.Result, e *ReportExperiment) (template.HTML, string) {
	var buf bytes.Buffer
	var err error
	switch {
	case r.Sweep != nil:
		err = WriteSweepPlot(&buf, []*results.Result{r}, reportPlotOptions(r, e))
	case e != nil && TableFor(r, e.Views) != nil && TableFor(r, e.Views).Chart != nil:
		err = WriteTableChart(&buf, r, TableFor(r, e.Views))
	case e != nil && ChartFor(r, e.Views) != nil:
		err = WriteChart(&buf, r, e.Views)
	default:
		return "", ""
	}
	if err != nil {
		if errors.Is(err, ErrNothingToPlot) {
			return "", "no plot: " + err.Error()
		}
		return "", "the plot could not be drawn: " + err.Error()
	}
	svg, err := InlineSVG(buf.Bytes())
	if err != nil {
		return "", "the plot was not inlined: " + err.Error()
	}
	return svg, ""
}

// reportPlotOptions are those of `lab run`'s plot of the same sweep.
func reportPlotOptions(r *results.Result, e *ReportExperiment) PlotOptions {
	x := PlotX(r.Sweep)
	o := PlotOptions{X: x}
	main := ""
	if e != nil {
		o.Claims = e.Claims
		if h := e.ParamHelp[x]; h != "" {
			o.XLabel = x + " (" + h + ")"
		}
		if len(e.Metrics) > 0 {
			main = e.Metrics[0]
		}
	}
	if main == "" && len(r.Summary) > 0 {
		main = r.Summary[0].Metric
	}
	o.Metrics = PlotMetrics(main, x, o.Claims)
	o.Title = fmt.Sprintf("%s/%s on %s: %s against %s", r.Plugin, r.Experiment, results.OrUnknown(results.ProfileName(r.Machine)),
		strings.Join(o.Metrics, ", "), x)
	return o
}

// svgElements are the elements gonum/plot's SVG canvas writes (images
// aside, which the plots here do not draw).
var svgElements = map[string]bool{"svg": true, "g": true, "path": true, "text": true, "tspan": true}

// InlineSVG makes an SVG document (as gonum/plot writes it) fit to put
// inside an HTML page: the XML prolog and comments before the <svg>
// element are dropped, and it is refused unless it is well-formed XML of
// svg, g, path, text and tspan elements without event-handler or link
// attributes. Plot text is escaped by the SVG canvas; this check is what
// lets the report trust the bytes it inlines.
func InlineSVG(b []byte) (template.HTML, error) {
	i := bytes.Index(b, []byte("<svg"))
	if i < 0 {
		return "", errors.New("no <svg> element")
	}
	b = b[i:]
	d := xml.NewDecoder(bytes.NewReader(b))
	roots := 0
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("not well-formed SVG: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if !svgElements[t.Name.Local] {
				return "", fmt.Errorf("SVG element <%s> is not one a plot draws", t.Name.Local)
			}
			for _, a := range t.Attr {
				name := strings.ToLower(a.Name.Local)
				if strings.HasPrefix(name, "on") || name == "href" || name == "src" || strings.Contains(strings.ToLower(a.Value), "url(") {
					return "", fmt.Errorf("SVG attribute %s=%q is not one a plot draws", a.Name.Local, a.Value)
				}
			}
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.ProcInst, xml.Directive:
			return "", errors.New("SVG with a processing instruction or directive after <svg>")
		case xml.CharData:
			if depth == 0 && len(bytes.TrimSpace(t)) > 0 {
				return "", errors.New("text outside the <svg> element")
			}
		}
	}
	if roots != 1 || depth != 0 {
		return "", fmt.Errorf("want exactly one <svg> element, got %d", roots)
	}
	return template.HTML(b), nil // #nosec: checked above
}

// provenanceOf is everything known about where and how u's run was made.
func provenanceOf(u UsedRun, anchor string, declared []contract.Reference) provenanceView {
	r := u.Run
	m := r.Machine
	p := provenanceView{ID: r.ID, Anchor: anchor, Why: u.Why, Argv: shellJoin(m.QEMUArgv), StderrTail: r.Outcome.StderrTail}
	add := func(k, v string) { p.Rows = append(p.Rows, [2]string{k, v}) }
	add("run ID", r.ID)
	add("started", r.Started.UTC().Format(time.RFC3339Nano))
	if !r.Finished.IsZero() {
		add("finished", r.Finished.UTC().Format(time.RFC3339Nano)+" (after "+r.Finished.Sub(r.Started).Round(time.Millisecond).String()+")")
	}
	add("command", results.OrUnknown(shellJoin(r.Command)))
	outcome := results.OrUnknown(r.Outcome.Status)
	if r.Outcome.Reason != "" {
		outcome += ": " + r.Outcome.Reason
	}
	add("outcome", outcome)
	add("plugin", r.Plugin+" "+results.OrUnknown(r.PluginVersion))
	add("experiment", r.Experiment)
	add("parameters", orDashText(results.FormatLabels(r.Parameters)))
	profile := results.OrUnknown(results.ProfileName(m))
	if m.Name != "" && m.Name != results.ProfileName(m) {
		profile += " (vm " + m.Name + ")"
	}
	add("profile", profile)
	if s := standsFor(r, results.ProfileName(m), declared...); s != "" {
		add("stands for", s)
	}
	add("QEMU version", results.OrUnknown(m.QEMUVersion))
	add("accelerator", results.OrUnknown(m.Accelerator))
	add("clock", results.OrUnknown(m.Clock))
	if m.Boot != "" {
		add("boot", m.Boot)
	}
	add("kernel id", results.OrUnknown(m.KernelID))
	add("kernel sha256", results.OrUnknown(m.KernelSHA256))
	if m.KernelEntry != "" {
		add("kernel entry", m.KernelEntry)
	}
	add("kernel package", results.OrUnknown(m.KernelPackage))
	add("guest uname", results.OrUnknown(r.Guest.Uname))
	if g := guestLine(r.Guest); g != "" {
		add("guest", g)
	}
	if h := r.Harness; h != nil {
		line := fmt.Sprintf("start %.3g s (push %.3g s, open %.3g s), %d file(s) sent, %d cached", h.StartSeconds, h.PushSeconds,
			h.OpenSeconds, h.FilesSent, h.FilesCached)
		if h.StartRetried != "" {
			line += "; plugin started twice: " + h.StartRetried
		}
		add("harness", line)
	} else {
		add("harness", "not recorded")
	}
	if sw := r.Sweep; sw != nil {
		line := fmt.Sprintf("%s: %d of %d points done", sw.String(), sw.Done(), len(sw.Points))
		for _, pt := range sw.Points {
			if pt.Status != results.StatusOK {
				line += "; " + results.FormatLabels(pt.Labels) + " " + pt.Status
			}
		}
		add("sweep", line)
	}
	for _, in := range r.Interference {
		add("interference", in.Time.UTC().Format(time.RFC3339)+" "+shellJoin(in.Command)+" (ran in the guest during the run)")
	}
	if m.Profile != nil {
		if b, err := json.MarshalIndent(m.Profile, "", "  "); err == nil {
			p.Profile = string(b)
		}
	}
	return p
}

func orDashText(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shellJoin joins args as a shell would read them back: single quotes
// around an argument with anything but letters, digits and -_=./:,@+%.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		safe := a != ""
		for _, r := range a {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=./:,@+%", r)) {
				safe = false
				break
			}
		}
		if safe {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
