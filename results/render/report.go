package render

import (
	"bytes"
	_ "embed"
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
	rclaims "lab/results/claims"
	"lab/results/history"
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
	References []results.Reference
	Claims     []results.Claim
	// Views are the tables, charts and write-ups the experiment
	// declares.
	Views results.Views
}

// ReportInput is what WriteReport renders.
type ReportInput struct {
	Generated time.Time
	// Version is lab's version line.
	Version string
	// Store is the result store the runs come from; Filter picked them.
	Store  string
	Filter results.Filter
	// AllRuns uses every run in Runs; otherwise only the latest of each
	// (plugin, experiment, profile, clock, parameters) and the runs that
	// gave the verdicts shown.
	AllRuns bool
	// Runs are the stored runs that pass Filter, newest first.
	Runs []*results.Result
	// Skipped are the result files that did not load, each with why.
	Skipped []string
	// Experiments are the installed plugins' experiments.
	Experiments []ReportExperiment
	// Claims are every claim of Experiments with its verdict from Runs
	// (ClaimStatuses), in the order shown.
	Claims []rclaims.ClaimStatus
	// SearchPath is where plugins were looked for, said when none is
	// installed.
	SearchPath []string
	// WriteUps are the write-ups the installed plugins declare
	// (WriteUpsOf), the report's top sections in this order.
	WriteUps []contract.WriteUp
	// History, when set, is a series of nights (lab history): the page
	// then has a History section, a plot of each series that changed.
	History *history.History
}

// WriteUpsOf merges the write-ups exps declare, for ReportInput.WriteUps:
// one per id, with the references of every declaration, ordered by id
// (digits by value: E2 before E10). An id declared with two titles is an
// error naming both; the first title is kept.
func WriteUpsOf(exps []ReportExperiment) ([]contract.WriteUp, error) {
	var out []contract.WriteUp
	var errs []error
	for _, e := range exps {
		for _, w := range e.Views.WriteUps {
			i := slices.IndexFunc(out, func(o contract.WriteUp) bool { return o.ID == w.ID })
			if i < 0 {
				out = append(out, contract.WriteUp{ID: w.ID, Title: w.Title})
				i = len(out) - 1
			} else if out[i].Title != w.Title {
				errs = append(errs, fmt.Errorf("write-up %s is declared with two titles: %q and, by %s/%s, %q", w.ID, out[i].Title, e.Plugin, e.Name, w.Title))
			}
			out[i].References = append(out[i].References, w.References...)
		}
	}
	slices.SortStableFunc(out, func(a, b contract.WriteUp) int { return results.NaturalCompare(a.ID, b.ID) })
	return out, errors.Join(errs...)
}

// RunKey is what tells runs apart for the report's choice of the latest:
// plugin, experiment, profile, clock and parameters other than repeat (a
// newer run with more repeats supersedes an older one; a run under
// another clock measures something else, so it does not).
func RunKey(r *results.Result) string {
	params := make(map[string]string, len(r.Parameters))
	for k, v := range r.Parameters {
		if k != "repeat" {
			params[k] = v
		}
	}
	return strings.Join([]string{r.Plugin, r.Experiment, results.ProfileName(r.Machine), r.Machine.Clock, results.FormatLabels(params)}, "\x00")
}

// UsedRun is a run the report shows, with why it was chosen.
type UsedRun struct {
	Run *results.Result
	Why []string
}

// ChooseRuns picks the runs a report uses from runs (newest first): with
// all, every one; else the newest of each RunKey, plus the runs whose
// verdicts claims show (a claim's verdict comes from every run in its
// scope: older runs of other cells, other clocks), so that every verdict shown
// has its run's provenance beside it. The order is that of runs.
func ChooseRuns(runs []*results.Result, claims []rclaims.ClaimStatus, all bool) []UsedRun {
	why := map[string][]string{}
	seen := map[string]bool{}
	for _, r := range runs {
		k := RunKey(r)
		switch {
		case all:
			why[r.ID] = append(why[r.ID], "every run passing the filter is used (--all-runs)")
		case !seen[k]:
			seen[k] = true
			why[r.ID] = append(why[r.ID], "the latest run of "+r.Plugin+"/"+r.Experiment+" on "+results.OrUnknown(results.ProfileName(r.Machine))+
				", clock "+results.OrUnknown(r.Machine.Clock)+paramsClause(r))
		}
	}
	for _, s := range claims {
		for _, id := range s.Judged.Runs {
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

func paramsClause(r *results.Result) string {
	if p := paramLine(r); p != "" {
		return ", parameters " + p
	}
	return ""
}

// WriteUpOf is the write-up an experiment belongs to, of those it
// declares: that of its first claim that belongs to one, else of its
// first published figure that names one; "" if neither says.
func WriteUpOf(e ReportExperiment) string {
	ws := e.Views.WriteUps
	for _, c := range e.Claims {
		for i := range ws {
			if ws[i].Owns(c.ID) {
				return ws[i].ID
			}
		}
	}
	for _, r := range e.References {
		for _, w := range ws {
			if w.ID == r.Experiment {
				return w.ID
			}
		}
	}
	return ""
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
		Narrowed bool
		Skipped  []string
		Counts   []verdictCount
		// ByConstruction counts the reproduced claims true by
		// construction of their workload.
		ByConstruction int
		Claims         []claimView
		WriteUps       []writeUpView
		Orphans        []expView
		Runs           []provenanceView
		NoPlugins      bool
		SearchPath     string
		HowTo          []string
		History        *historyView
	}
	verdictCount struct {
		Verdict, Class string
		N              int
	}
	claimView struct {
		ID, Anchor, Verdict, Class, Statement, Source, Machine, Rule, Rationale, Scope string
		Words, Digest, DigestNote, Fidelity, ByConstruction                            string
		Strata                                                                         []stratumView
		OutOfScope                                                                     int
		Plugin, Bench, ExpAnchor                                                       string
		Reason, Note                                                                   string
		Numbers                                                                        []numberView
		Runs                                                                           []runLink
		HowTo                                                                          string
		Decided                                                                        int
	}
	numberView  struct{ Name, Value, Unit string }
	stratumView struct{ Profile, Clock, Accelerator, Verdict, Class, Reason string }
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
		Same                                             bool
		Metric, Labels, Published, Unit, Machine, Source string
		// Ours and Ratio are a line per point of a sweep ("count=5:
		// 0.12"), else one.
		Ours, Ratio []string
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

// badges are the CSS classes of a verdict's badge, by its class.
var badges = map[results.Class]string{results.ClassPassed: "v-ok", results.ClassFailed: "v-bad",
	results.ClassSplit: "v-unsure", results.ClassUnsure: "v-unsure", results.ClassNotComparable: "v-nc",
	results.ClassNone: "v-none", results.ClassUnknown: "v-other"}

// verdictClass is the CSS class of a verdict's badge.
func verdictClass(v string) string { return badges[results.ClassOf(v)] }

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
// contents; every claim with its verdict; the history of a series of
// nights when in has one; per write-up and plugin experiment the claims
// with their deciding numbers, and for each run used its verdicts, plot,
// metrics and the published figures beside ours; then the full
// provenance of every run used. Everything shown is escaped
// (html/template); a plot is inlined only if it is well-formed SVG of the
// elements gonum/plot writes.
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
		if s.Verdict == results.Reproduced && s.Judged.ByConstruction != "" {
			page.ByConstruction++
		}
	}
	for _, v := range results.VerdictOrder {
		if n[v] > 0 {
			page.Counts = append(page.Counts, verdictCount{Verdict: v, Class: verdictClass(v), N: n[v]})
		}
	}
	if in.History != nil {
		page.History = historyViewOf(in.History, ids, claimAnchor)
	}

	// Runs by experiment.
	runsOf := map[string][]*results.Result{}
	for _, u := range used {
		k := u.Run.Plugin + "/" + u.Run.Experiment
		runsOf[k] = append(runsOf[k], u.Run)
	}

	// Metrics some installed experiment measures: a write-up's figures
	// of other metrics are shown with it.
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
		for _, w := range in.WriteUps {
			if w.ID == id {
				s.Title = w.Title
			}
		}
		sections[id] = s
		order = append(order, id)
		return s
	}
	for _, w := range in.WriteUps {
		s := section(w.ID)
		for _, r := range w.References {
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
				ev.References = append(ev.References, refViewOf(r.Reference))
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

	// Every figure the installed plugins declare says which machine a
	// profile stands for.
	var declared []contract.Reference
	for _, e := range in.Experiments {
		for _, r := range e.References {
			declared = append(declared, r.Reference)
		}
	}
	for _, w := range in.WriteUps {
		declared = append(declared, w.References...)
	}
	for _, u := range used {
		page.Runs = append(page.Runs, provenanceOf(u, runAnchor[u.Run.ID], declared))
	}
	if len(in.Runs) == 0 {
		page.HowTo = howTo(in.Experiments)
	}
	return page
}
