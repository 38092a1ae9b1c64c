package results

import (
	"bytes"
	_ "embed"
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
)

// ReportExperiment is one experiment of an installed plugin, as its
// description declares it: what the report shows for it before any run.
type ReportExperiment struct {
	Plugin        string
	PluginVersion string
	Name          string
	Summary       string
	// Metrics are the experiment's metrics, its main one first.
	Metrics []string
	// ParamHelp is each parameter's help text, for a plot's x axis.
	ParamHelp map[string]string
	// References are the published figures the experiment declares.
	References []Reference
	Claims     []Claim
}

// ReportInput is what WriteReport renders.
type ReportInput struct {
	Generated time.Time
	// Version is lab's version line.
	Version string
	// Store is the result store the runs come from; Filter picked them.
	Store  string
	Filter Filter
	// AllRuns uses every run in Runs; otherwise only the latest of each
	// (plugin, experiment, profile, clock, parameters) and the runs that
	// gave the verdicts shown.
	AllRuns bool
	// Runs are the stored runs that pass Filter, newest first.
	Runs []*Result
	// Skipped are the result files that did not load, each with why.
	Skipped []string
	// Experiments are the installed plugins' experiments.
	Experiments []ReportExperiment
	// Claims are every claim of Experiments with its verdict from Runs
	// (ClaimStatuses), in the order shown.
	Claims []ClaimStatus
	// SearchPath is where plugins were looked for, said when none is
	// installed.
	SearchPath []string
}

// writeUps are the write-ups of SEEDS.md, the report's top
// sections, in order; a claim's id starts with its write-up's.
var writeUps = []struct{ id, title string }{
	{"E1", "Processes vs threads printing (Chinese article, re-running a 2005 paper)"},
	{"E2", "fork() vs pthread_create() cost (2004 lecture notes)"},
	{"E3", "The cost of printf depends on where stdout goes (Chinese article)"},
	{"E4", "Thread-per-request vs one thread (Russian article, .NET on Windows)"},
	{"E5", "Server designs (Stevens, Unix Network Programming vol. 1, ch. 30)"},
}

// RunKey is what tells runs apart for the report's choice of the latest:
// plugin, experiment, profile, clock and parameters other than repeat (a
// newer run with more repeats supersedes an older one; a run under
// another clock measures something else, so it does not).
func RunKey(r *Result) string {
	params := make(map[string]string, len(r.Parameters))
	for k, v := range r.Parameters {
		if k != "repeat" {
			params[k] = v
		}
	}
	return strings.Join([]string{r.Plugin, r.Experiment, ProfileName(r.Machine), r.Machine.Clock, FormatLabels(params)}, "\x00")
}

// UsedRun is a run the report shows, with why it was chosen.
type UsedRun struct {
	Run *Result
	Why []string
}

// ChooseRuns picks the runs a report uses from runs (newest first): with
// all, every one; else the newest of each RunKey, plus the runs whose
// verdicts claims show (a claim's latest verdict may come from an older
// run, or from a run under another clock), so that every verdict shown
// has its run's provenance beside it. The order is that of runs.
func ChooseRuns(runs []*Result, claims []ClaimStatus, all bool) []UsedRun {
	why := map[string][]string{}
	seen := map[string]bool{}
	for _, r := range runs {
		k := RunKey(r)
		switch {
		case all:
			why[r.ID] = append(why[r.ID], "every run passing the filter is used (--all-runs)")
		case !seen[k]:
			seen[k] = true
			why[r.ID] = append(why[r.ID], "the latest run of "+r.Plugin+"/"+r.Experiment+" on "+orUnknown(ProfileName(r.Machine))+
				", clock "+orUnknown(r.Machine.Clock)+paramsClause(r))
		}
	}
	for _, s := range claims {
		if s.Latest == nil {
			continue
		}
		ids := s.Latest.Verdict.Runs
		if len(ids) == 0 {
			ids = []string{s.Latest.Run}
		}
		for _, id := range ids {
			why[id] = append(why[id], "gave the verdict shown for "+s.Claim.ID)
		}
	}
	var out []UsedRun
	for _, r := range runs {
		if w := why[r.ID]; len(w) > 0 {
			out = append(out, UsedRun{Run: r, Why: w})
		}
	}
	return out
}

func paramsClause(r *Result) string {
	if p := paramLine(r); p != "" {
		return ", parameters " + p
	}
	return ""
}

// WriteUpOf is the write-up (E1..E5, or another id's prefix) an experiment
// belongs to: that of its first claim, else of its first published figure
// of a write-up; "" if neither says.
func WriteUpOf(e ReportExperiment) string {
	for _, c := range e.Claims {
		if w := claimWriteUp(c.ID); w != "" {
			return w
		}
	}
	for _, r := range e.References {
		if w := claimWriteUp(r.Experiment); w != "" {
			return w
		}
	}
	return ""
}

// claimWriteUp is "E1" for "E1.6" (and for "E1"): the leading letters
// and digits before the first dot, when they look like a write-up id.
func claimWriteUp(id string) string {
	w, _, _ := strings.Cut(id, ".")
	if len(w) < 2 || w[0] != 'E' {
		return ""
	}
	if _, err := strconv.Atoi(w[1:]); err != nil {
		return ""
	}
	return w
}

// The page's view model: everything the template shows, already
// formatted, so the template only places and escapes it.
type (
	reportPage struct {
		Generated, Version, Store, Filter string
		Stored, Used                      int
		AllRuns                           bool
		// Narrowed: the filter picks plugins or experiments, so a
		// write-up without one says so rather than that none exists.
		Narrowed   bool
		Skipped    []string
		Counts     []verdictCount
		Claims     []claimView
		WriteUps   []writeUpView
		Orphans    []expView
		Runs       []provenanceView
		NoPlugins  bool
		SearchPath string
		HowTo      []string
	}
	verdictCount struct {
		Verdict, Class string
		N              int
	}
	claimView struct {
		ID, Anchor, Verdict, Class, Statement, Source, Machine, Rule, Rationale, Params string
		Plugin, Bench, ExpAnchor                                                        string
		Reason, Note                                                                    string
		Numbers                                                                         []numberView
		Runs                                                                            []runLink
		HowTo                                                                           string
		Decided                                                                         int
	}
	numberView  struct{ Name, Value, Unit string }
	runLink     struct{ ID, Anchor, Label string }
	writeUpView struct {
		ID, Title, Anchor string
		Experiments       []expView
		Others            []refView
	}
	expView struct {
		Anchor, Plugin, Version, Name, Summary string
		Installed                              bool
		Claims                                 []claimView
		Runs                                   []runView
		References                             []refView
	}
	refView struct {
		Metric, Labels, Value, Unit, Machine, Profile, Source, Note string
	}
	runView struct {
		ID, Anchor, Profile, Clock, Accelerator, Started, Params, Outcome, OutcomeClass string
		Verdicts                                                                        []verdictView
		NotRun                                                                          []string
		Summary                                                                         []summaryRow
		Comparisons                                                                     []comparisonRow
		RatioNote                                                                       string
		Plot                                                                            template.HTML
		PlotNote                                                                        string
		Interference                                                                    int
	}
	verdictView struct {
		Claim, ClaimAnchor, Verdict, Class, Statement, Reason, Note string
		Numbers                                                     []numberView
	}
	summaryRow struct {
		Metric, Labels, Median, Trimmed, Range, CV, Unit string
		N                                                int
	}
	comparisonRow struct {
		Same                                                          bool
		Metric, Labels, Ours, Published, Unit, Ratio, Machine, Source string
	}
	provenanceView struct {
		ID, Anchor string
		Why        []string
		Rows       [][2]string
		Argv       string
		Profile    string
		StderrTail string
	}
)

// verdictOrder is the order of the tallies.
var verdictOrder = []string{Reproduced, NotReproduced, Inconclusive, NotComparable, NotRun}

// verdictClass is the CSS class of a verdict's badge.
func verdictClass(v string) string {
	switch v {
	case Reproduced:
		return "v-ok"
	case NotReproduced:
		return "v-bad"
	case Inconclusive:
		return "v-unsure"
	case NotComparable:
		return "v-nc"
	case NotRun, "":
		return "v-none"
	}
	return "v-other"
}

// anchors hands out unique, safe fragment ids.
type anchors map[string]bool

func (a anchors) make(prefix, s string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	id := b.String()
	for i := 2; a[id]; i++ {
		id = b.String() + "-" + strconv.Itoa(i)
	}
	a[id] = true
	return id
}

//go:embed report.tmpl
var reportTemplate string

var reportTmpl = template.Must(template.New("report").Parse(reportTemplate))

// WriteReport writes the report of in as one self-contained HTML page
// (inline stylesheet and SVG plots, nothing fetched): a table of
// contents; every claim with its verdict; per write-up (E1..E5) and
// plugin experiment the claims with their deciding numbers, and for each
// run used its verdicts, plot, metrics and the published figures beside
// ours; then the full provenance of every run used. Everything shown is
// escaped (html/template); a plot is inlined only if it is well-formed
// SVG of the elements gonum/plot writes.
func WriteReport(w io.Writer, in ReportInput) error {
	page := buildReport(in)
	var buf bytes.Buffer
	if err := reportTmpl.Execute(&buf, page); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func buildReport(in ReportInput) *reportPage {
	ids := anchors{}
	used := ChooseRuns(in.Runs, in.Claims, in.AllRuns)
	page := &reportPage{
		Generated: in.Generated.UTC().Format(time.RFC3339), Version: in.Version, Store: in.Store,
		Filter: in.Filter.String(), Stored: len(in.Runs), Used: len(used), AllRuns: in.AllRuns, Skipped: in.Skipped,
		Narrowed: in.Filter.Plugin != "" || in.Filter.Experiment != "", NoPlugins: len(in.Experiments) == 0, SearchPath: strings.Join(in.SearchPath, ", "),
	}
	runAnchor := map[string]string{}
	for _, u := range used {
		runAnchor[u.Run.ID] = ids.make("run-", u.Run.ID)
	}
	expAnchor := map[string]string{}
	for _, e := range in.Experiments {
		expAnchor[e.Plugin+"/"+e.Name] = ids.make("exp-", e.Plugin+"-"+e.Name)
	}
	claimAnchor := map[string]string{}
	for _, s := range in.Claims {
		if _, ok := claimAnchor[s.Claim.ID]; !ok {
			claimAnchor[s.Claim.ID] = ids.make("claim-", s.Claim.ID)
		}
	}

	// Tallies and the claims list.
	n := map[string]int{}
	byExp := map[string][]claimView{}
	for _, s := range in.Claims {
		cv := claimViewOf(s, claimAnchor[s.Claim.ID], expAnchor[s.Claim.Plugin+"/"+s.Claim.Bench], runAnchor)
		page.Claims = append(page.Claims, cv)
		byExp[s.Claim.Plugin+"/"+s.Claim.Bench] = append(byExp[s.Claim.Plugin+"/"+s.Claim.Bench], cv)
		n[s.Verdict]++
	}
	for _, v := range verdictOrder {
		if n[v] > 0 {
			page.Counts = append(page.Counts, verdictCount{Verdict: v, Class: verdictClass(v), N: n[v]})
		}
	}

	// Runs by experiment.
	runsOf := map[string][]*Result{}
	for _, u := range used {
		k := u.Run.Plugin + "/" + u.Run.Experiment
		runsOf[k] = append(runsOf[k], u.Run)
	}

	// Metrics some installed experiment measures: the figures here of
	// other metrics are shown with their write-up.
	measured := map[string]bool{}
	for _, e := range in.Experiments {
		for _, m := range e.Metrics {
			measured[m] = true
		}
	}
	sections := map[string]*writeUpView{}
	var order []string
	section := func(id string) *writeUpView {
		if s := sections[id]; s != nil {
			return s
		}
		s := &writeUpView{ID: id, Anchor: ids.make("writeup-", id)}
		for _, w := range writeUps {
			if w.id == id {
				s.Title = w.title
			}
		}
		sections[id] = s
		order = append(order, id)
		return s
	}
	for _, w := range writeUps {
		s := section(w.id)
		for _, r := range Published(w.id) {
			if !measured[r.Metric] {
				s.Others = append(s.Others, refViewOf(r))
			}
		}
	}
	done := map[string]bool{}
	for _, e := range in.Experiments {
		k := e.Plugin + "/" + e.Name
		done[k] = true
		ev := expView{Anchor: expAnchor[k], Plugin: e.Plugin, Version: e.PluginVersion, Name: e.Name, Summary: e.Summary,
			Installed: true, Claims: byExp[k]}
		for _, r := range runsOf[k] {
			ev.Runs = append(ev.Runs, runViewOf(r, &e, runAnchor[r.ID], claimAnchor))
		}
		if len(ev.Runs) == 0 {
			for _, r := range e.References {
				ev.References = append(ev.References, refViewOf(r))
			}
		}
		w := WriteUpOf(e)
		if w == "" {
			w = "other"
		}
		s := section(w)
		s.Experiments = append(s.Experiments, ev)
	}
	for _, id := range order {
		s := sections[id]
		if page.Narrowed && len(s.Experiments) == 0 {
			continue // the filter left it out, it is not missing
		}
		if s.Title == "" {
			s.Title = "claims numbered " + id
			if id == "other" {
				s.Title = "experiments of no write-up"
			}
		}
		page.WriteUps = append(page.WriteUps, *s)
	}

	// Runs of experiments no installed plugin declares.
	var orphanKeys []string
	for _, u := range used {
		k := u.Run.Plugin + "/" + u.Run.Experiment
		if !done[k] && !slices.Contains(orphanKeys, k) {
			orphanKeys = append(orphanKeys, k)
		}
	}
	for _, k := range orphanKeys {
		rs := runsOf[k]
		ev := expView{Anchor: ids.make("exp-", strings.ReplaceAll(k, "/", "-")), Plugin: rs[0].Plugin, Version: rs[0].PluginVersion,
			Name: rs[0].Experiment}
		for _, r := range rs {
			ev.Runs = append(ev.Runs, runViewOf(r, nil, runAnchor[r.ID], claimAnchor))
		}
		page.Orphans = append(page.Orphans, ev)
	}

	for _, u := range used {
		page.Runs = append(page.Runs, provenanceOf(u, runAnchor[u.Run.ID]))
	}
	if len(in.Runs) == 0 {
		page.HowTo = howTo(in.Experiments)
	}
	return page
}

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
	for _, k := range sortedKeys(params) {
		parts = append(parts, "-p", k+"="+params[k])
	}
	return strings.Join(append(parts, "--repeat", "6"), " ")
}

// claimHint says how to make a run that decides c.
func claimHint(c Claim) string {
	switch {
	case c.Speedup != nil:
		s := c.Speedup
		return fmt.Sprintf("lab run %s -e %s --profile %s --profile %s%s --repeat 6", c.Plugin, c.Bench, s.Baseline, s.Profile, paramFlags(c.Params))
	case c.Crossover != nil:
		return fmt.Sprintf("lab run %s -e %s%s%s --sweep %s=V1,V2,... --repeat 6", c.Plugin, c.Bench, profileFlag(c.Profile), paramFlags(c.Params), c.Crossover.Sweep)
	}
	return runHint(c.Plugin, c.Bench, c.Profile, c.Params)
}

func profileFlag(p string) string {
	if p == "" {
		return ""
	}
	return " --profile " + p
}

func paramFlags(params map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(params) {
		b.WriteString(" -p " + k + "=" + params[k])
	}
	return b.String()
}

func claimViewOf(s ClaimStatus, anchor, expAnchor string, runAnchor map[string]string) claimView {
	c := s.Claim
	machine := c.Machine
	if c.Profile != "" {
		machine += " (profile " + c.Profile + ")"
	}
	cv := claimView{ID: c.ID, Anchor: anchor, Verdict: orNotRun(s.Verdict), Class: verdictClass(orNotRun(s.Verdict)),
		Statement: c.Statement, Source: c.Source, Machine: machine, Rule: s.Rule, Rationale: c.Rationale,
		Params: FormatLabels(c.Params), Plugin: c.Plugin, Bench: c.Bench, ExpAnchor: expAnchor, Decided: len(s.Runs)}
	if s.Latest == nil {
		cv.Reason = "no stored run decided it"
		cv.HowTo = claimHint(c)
		return cv
	}
	v := s.Latest.Verdict
	cv.Reason, cv.Note, cv.Numbers = v.Reason, v.Note, numberViews(v.Numbers)
	ids := v.Runs
	if len(ids) == 0 {
		ids = []string{s.Latest.Run}
	}
	for _, id := range ids {
		label := id
		if id == s.Latest.Run {
			label += " (" + orUnknown(s.Latest.Profile) + ", " + orUnknown(s.Latest.Accelerator) + ", clock " + orUnknown(s.Latest.Clock) + ")"
		}
		cv.Runs = append(cv.Runs, runLink{ID: id, Anchor: runAnchor[id], Label: label})
	}
	return cv
}

func orNotRun(v string) string {
	if v == "" {
		return NotRun
	}
	return v
}

func numberViews(ns []Number) []numberView {
	var out []numberView
	for _, n := range ns {
		out = append(out, numberView{Name: n.Name, Value: FormatValue(n.Value), Unit: n.Unit})
	}
	return out
}

func refViewOf(r Reference) refView {
	return refView{Metric: r.Metric, Labels: labelCell(r.Labels), Value: exactValue(r.Value), Unit: r.Unit, Machine: r.Machine,
		Profile: r.Profile, Source: r.Source, Note: r.Note}
}

// exactValue is a published figure as published (9076.9, not 9077).
func exactValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func outcomeClass(status string) string {
	switch status {
	case "ok":
		return "v-ok"
	case "expected-crash":
		return "v-nc"
	case StatusInterrupted:
		return "v-unsure"
	}
	return "v-bad"
}

// runViewOf is what an experiment's section shows of one run; e is its
// description, nil for a plugin not installed.
func runViewOf(r *Result, e *ReportExperiment, anchor string, claimAnchor map[string]string) runView {
	rv := runView{ID: r.ID, Anchor: anchor, Profile: orUnknown(ProfileName(r.Machine)), Clock: orUnknown(r.Machine.Clock),
		Accelerator: orUnknown(r.Machine.Accelerator), Started: r.Started.UTC().Format(time.RFC3339), Params: FormatLabels(r.Parameters),
		Outcome: orUnknown(r.Outcome.Status), OutcomeClass: outcomeClass(r.Outcome.Status), Interference: len(r.Interference)}
	if r.Outcome.Reason != "" {
		rv.Outcome += ": " + r.Outcome.Reason
	}
	for _, v := range r.Verdicts {
		if !v.Decided() {
			rv.NotRun = append(rv.NotRun, v.Claim+" ("+v.Reason+")")
			continue
		}
		rv.Verdicts = append(rv.Verdicts, verdictView{Claim: v.Claim, ClaimAnchor: claimAnchor[v.Claim], Verdict: v.Verdict,
			Class: verdictClass(v.Verdict), Statement: v.Statement, Reason: v.Reason, Note: v.Note, Numbers: numberViews(v.Numbers)})
	}
	for _, s := range summaries(r) {
		rv.Summary = append(rv.Summary, summaryRow{Metric: s.Metric, Labels: labelCell(s.Labels), N: s.N, Median: FormatValue(s.Median),
			Trimmed: FormatValue(s.TrimmedMean), Range: FormatValue(s.Min) + ".." + FormatValue(s.Max), CV: formatCV(s.CV), Unit: s.Unit})
	}
	cs := comparisons(r)
	for _, c := range cs {
		rv.Comparisons = append(rv.Comparisons, comparisonRow{Same: c.SameProfile, Metric: c.Metric, Labels: labelCell(c.Labels),
			Ours: FormatValue(c.Ours), Published: exactValue(c.Published), Unit: c.Unit, Ratio: ratioCell(c, r.Machine),
			Machine: c.Machine, Source: sourceCell(c)})
	}
	rv.RatioNote = ratioNote(cs, r.Machine)
	rv.Plot, rv.PlotNote = reportPlot(r, e)
	return rv
}

// reportPlot draws r's plot as lab run does (a sweep against its swept
// key, netbench's designs and a run by target or sink as bars) and
// returns it ready to inline,
// or a note saying why there is none.
func reportPlot(r *Result, e *ReportExperiment) (template.HTML, string) {
	var buf bytes.Buffer
	var err error
	switch {
	case r.Sweep != nil:
		err = WriteSweepPlot(&buf, []*Result{r}, reportPlotOptions(r, e))
	case IsDesigns(r):
		err = WriteDesignsPlot(&buf, r)
	case BarKey(r) != "":
		err = WriteBarPlot(&buf, r, BarKey(r))
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
func reportPlotOptions(r *Result, e *ReportExperiment) PlotOptions {
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
	o.Title = fmt.Sprintf("%s/%s on %s: %s against %s", r.Plugin, r.Experiment, orUnknown(ProfileName(r.Machine)),
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
func provenanceOf(u UsedRun, anchor string) provenanceView {
	r := u.Run
	m := r.Machine
	p := provenanceView{ID: r.ID, Anchor: anchor, Why: u.Why, Argv: shellJoin(m.QEMUArgv), StderrTail: r.Outcome.StderrTail}
	add := func(k, v string) { p.Rows = append(p.Rows, [2]string{k, v}) }
	add("run ID", r.ID)
	add("started", r.Started.UTC().Format(time.RFC3339Nano))
	if !r.Finished.IsZero() {
		add("finished", r.Finished.UTC().Format(time.RFC3339Nano)+" (after "+r.Finished.Sub(r.Started).Round(time.Millisecond).String()+")")
	}
	add("command", orUnknown(shellJoin(r.Command)))
	outcome := orUnknown(r.Outcome.Status)
	if r.Outcome.Reason != "" {
		outcome += ": " + r.Outcome.Reason
	}
	add("outcome", outcome)
	add("plugin", r.Plugin+" "+orUnknown(r.PluginVersion))
	add("experiment", r.Experiment)
	add("parameters", orDashText(FormatLabels(r.Parameters)))
	profile := orUnknown(ProfileName(m))
	if m.Name != "" && m.Name != ProfileName(m) {
		profile += " (vm " + m.Name + ")"
	}
	add("profile", profile)
	if s := standsFor(r, ProfileName(m)); s != "" {
		add("stands for", s)
	}
	add("QEMU version", orUnknown(m.QEMUVersion))
	add("accelerator", orUnknown(m.Accelerator))
	add("clock", orUnknown(m.Clock))
	if m.Boot != "" {
		add("boot", m.Boot)
	}
	add("kernel id", orUnknown(m.KernelID))
	add("kernel sha256", orUnknown(m.KernelSHA256))
	add("kernel package", orUnknown(m.KernelPackage))
	add("guest uname", orUnknown(r.Guest.Uname))
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
			if pt.Status != "ok" {
				line += "; " + FormatLabels(pt.Labels) + " " + pt.Status
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
