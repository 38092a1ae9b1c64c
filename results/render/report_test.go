package render

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"lab/plugins/contract"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/compare"

	"lab/internal/fixture"
)

// reportRun is a minimal stored run.
func reportRun(id, plugin, exp, profile, clock string, started time.Time, params map[string]string) *results.Result {
	return &results.Result{ID: id, Started: started, Plugin: plugin, Experiment: exp, Parameters: params,
		Machine: results.MachineRecord{Profile: map[string]any{"name": profile}, Accelerator: "tcg", Clock: clock},
		Outcome: results.Outcome{Status: "ok"}}
}

func usedIDs(us []UsedRun) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Run.ID)
	}
	return out
}

func TestChooseRuns(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	p := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	// Newest first, as Select returns them.
	runs := []*results.Result{
		reportRun("r6", "forkbench", "forktime", "celeron-2.4", "host", at(6), p("n", "100", "repeat", "4")),
		reportRun("r5", "forkbench", "forktime", "celeron-2.4", "host", at(5), p("n", "100", "repeat", "6")),     // superseded: repeats aside, same key
		reportRun("r4", "forkbench", "forktime", "celeron-2.4", "icount:0", at(4), p("n", "100", "repeat", "6")), // another clock
		reportRun("r3", "forkbench", "forktime", "p4-2.4", "host", at(3), p("n", "100", "repeat", "4")),          // another profile
		reportRun("r2", "forkbench", "forktime", "celeron-2.4", "host", at(2), p("n", "200", "repeat", "4")),     // other parameters
		reportRun("r1", "forkbench", "create", "celeron-2.4", "host", at(1), p("m", "100", "repeat", "4")),       // another experiment
		reportRun("r0", "forkbench", "forktime", "celeron-2.4", "host", at(0), p("n", "100", "repeat", "4")),     // superseded
	}
	tests := []struct {
		name   string
		claims []rclaims.ClaimStatus
		all    bool
		want   []string
	}{
		{"latest of each key", nil, false, []string{"r6", "r4", "r3", "r2", "r1"}},
		{"plus the run a shown verdict came from", []rclaims.ClaimStatus{{Claim: results.Claim{Claim: contract.Claim{ID: "E2.1"}}, Judged: results.Verdict{Runs: []string{"r5"}}}}, false,
			[]string{"r6", "r5", "r4", "r3", "r2", "r1"}},
		{"a speedup's verdict brings both of its runs", []rclaims.ClaimStatus{{Claim: results.Claim{Claim: contract.Claim{ID: "E1.8"}},
			Judged: results.Verdict{Runs: []string{"r0", "r3"}}}}, false,
			[]string{"r6", "r4", "r3", "r2", "r1", "r0"}},
		{"not run claims bring nothing", []rclaims.ClaimStatus{{Claim: results.Claim{Claim: contract.Claim{ID: "E1.6"}}, Verdict: results.NotRun}}, false,
			[]string{"r6", "r4", "r3", "r2", "r1"}},
		{"all runs", nil, true, []string{"r6", "r5", "r4", "r3", "r2", "r1", "r0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ChooseRuns(runs, tt.claims, tt.all)
			if ids := usedIDs(got); !slices.Equal(ids, tt.want) {
				t.Errorf("ChooseRuns = %v, want %v", ids, tt.want)
			}
			for _, u := range got {
				if len(u.Why) == 0 {
					t.Errorf("run %s used without a reason", u.Run.ID)
				}
			}
		})
	}
	got := ChooseRuns(runs, []rclaims.ClaimStatus{{Claim: results.Claim{Claim: contract.Claim{ID: "E2.1"}}, Judged: results.Verdict{Runs: []string{"r6"}}}}, false)
	if w := strings.Join(got[0].Why, "; "); w != "the latest run of forkbench/forktime on celeron-2.4, clock host, parameters n=100; gave the verdict shown for E2.1" {
		t.Errorf("why r6 = %q", w)
	}
}

// writeUps declares the write-ups ids, titled after them.
func writeUps(ids ...string) results.Views {
	var v results.Views
	for _, id := range ids {
		v.WriteUps = append(v.WriteUps, contract.WriteUp{ID: id, Title: "write-up " + id})
	}
	return v
}

func TestWriteUpOf(t *testing.T) {
	tests := []struct {
		name string
		e    ReportExperiment
		want string
	}{
		{"first claim", ReportExperiment{Claims: []results.Claim{{Claim: contract.Claim{ID: "E1.6"}}, {Claim: contract.Claim{ID: "E2.1"}}}, Views: writeUps("E2", "E1")}, "E1"},
		{"claim with a suffix", ReportExperiment{Claims: []results.Claim{{Claim: contract.Claim{ID: "E3.4.counter"}}}, Views: writeUps("E3")}, "E3"},
		{"a claim that is no write-up's, then a figure", ReportExperiment{Claims: []results.Claim{{Claim: contract.Claim{ID: "X1"}}},
			References: []results.Reference{{Reference: contract.Reference{Experiment: "anchor"}}, {Reference: contract.Reference{Experiment: "E2"}}}, Views: writeUps("E2")}, "E2"},
		{"another write-up", ReportExperiment{Claims: []results.Claim{{Claim: contract.Claim{ID: "E9.1"}}}, Views: writeUps("E9")}, "E9"},
		{"nothing says", ReportExperiment{References: []results.Reference{{Reference: contract.Reference{Experiment: "anchor"}}}, Views: writeUps("E1")}, ""},
		// A prefix is a write-up's only up to a dot.
		{"E1 is not E10's", ReportExperiment{Claims: []results.Claim{{Claim: contract.Claim{ID: "E10.1"}}}, Views: writeUps("E1")}, ""},
	}
	for _, tt := range tests {
		if got := WriteUpOf(tt.e); got != tt.want {
			t.Errorf("%s: WriteUpOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// reportFixture is a report input from the stored testdata runs plus a
// sweep, a printfbench and a netbench run, with experiments of four
// write-ups and a run of a plugin not installed.
func reportFixture(t *testing.T) ReportInput {
	t.Helper()
	var runs []*results.Result
	for _, name := range []string{"icount", "forktime", "crashed"} {
		r, err := results.Load(filepath.Join("testdata", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	sweep := sweepRun("celeron-2.4", "count", []string{"5", "50", "500"}, map[string]string{"real_s": "s"},
		[]map[string]string{{"mode": "process"}, {"mode": "thread"}}, 2,
		func(_ string, x float64, rest map[string]string, k int) float64 { return x/100 + float64(k)*0.01 })
	sweep.Plugin, sweep.Experiment, sweep.ID = "threadbench", "hello", "20261201T120000.000000Z-threadbench-hello-aaaaaa"
	bars := targetsRun()
	bars.ID = "20261201T110000.000000Z-printfbench-targets-bbbbbb"
	designs := designsRun()
	designs.ID = "20261201T100000.000000Z-netbench-designs-cccccc"
	runs = append([]*results.Result{sweep, bars, designs}, runs...)

	ratio := results.Claim{Claim: contract.Claim{ID: "E1.6",
		Statement: "threads are 10+ times faster",
		Source:    "E1",
		Machine:   "Celeron",
		Profile:   "celeron-2.4",
		Ratio:     &contract.RatioClaim{Numerator: "process_ms", Denominator: "thread_ms", Min: 10}}, Plugin: "forkbench", Bench: "create", Kind: "ratio"}
	fork := results.Claim{Claim: contract.Claim{ID: "E2.1",
		Statement: "fork+wait costs 4.5x to 84x",
		Source:    "E2",
		Machine:   "P4",
		Ratio:     &contract.RatioClaim{Numerator: "fork_wait_us", Denominator: "thread_create_join_us", Min: 4.5}}, Plugin: "forkbench", Bench: "forktime", Kind: "ratio"}
	cross := results.Claim{Claim: contract.Claim{ID: "E1.1",
		Statement: "the curves cross near 600",
		Source:    "E1",
		Machine:   "Celeron",
		Profile:   "celeron-2.4",
		Scope:     &contract.Scope{Params: map[string]string{"workers": "255"}},
		Crossover: &contract.CrossoverClaim{First: "real_s", Second: "real_s", Sweep: "count", BandStart: 550, BandEnd: 650,
			FirstLabels: map[string]string{"mode": "thread"}, SecondLabels: map[string]string{"mode": "process"}}}, Plugin: "threadbench", Bench: "hello", Kind: "crossover"}
	never := results.Claim{Claim: contract.Claim{ID: "E3.1",
		Statement: "counters cost far less",
		Source:    "E3",
		Machine:   "?",
		Profile:   "xeon5130-fb",
		Ratio:     &contract.RatioClaim{Numerator: "a", Denominator: "b", Min: 8.5}}, Plugin: "printfbench", Bench: "logging", Kind: "ratio"}
	exps := []ReportExperiment{
		{Plugin: "forkbench", PluginVersion: "0.1.0", Name: "forktime", Metrics: []string{"fork_wait_us", "thread_create_join_us"}, Claims: []results.Claim{fork}},
		{Plugin: "forkbench", PluginVersion: "0.1.0", Name: "create", Metrics: []string{"process_ms", "thread_ms"}, Claims: []results.Claim{ratio},
			References: []results.Reference{{Reference: contract.Reference{Experiment: "E1", Metric: "process_ms", Value: 0.18, Unit: "ms", Machine: "Celeron", Source: "E1 paper"}}}},
		{Plugin: "threadbench", PluginVersion: "0.1.0", Name: "hello", Metrics: []string{"real_s"}, ParamHelp: map[string]string{"count": "prints per worker"},
			Claims: []results.Claim{cross}},
		{Plugin: "printfbench", PluginVersion: "0.1.0", Name: "targets", Metrics: []string{"real_s", "user_s", "sys_s"}},
		{Plugin: "printfbench", PluginVersion: "0.1.0", Name: "logging", Metrics: []string{"event_us"}, Claims: []results.Claim{never},
			References: []results.Reference{{Reference: contract.Reference{Experiment: "E3", Metric: "event_us", Value: 4.276, Unit: "µs", Machine: "a VT", Source: "E3"}}}},
	}
	servers := results.Claim{Claim: contract.Claim{ID: "E5.1",
		Statement: "fork per client costs far more",
		Source:    "E5",
		Machine:   "Solaris",
		Order:     &contract.OrderClaim{Metric: "cpu_s", Label: "design", Above: []string{"1"}, Below: []string{"2"}, Min: 1}}, Plugin: "netbench", Bench: "designs", Kind: "order"}
	exps = append(exps, ReportExperiment{Plugin: "netbench", PluginVersion: "0.1.0", Name: "designs", Metrics: []string{"user_s", "sys_s", "cpu_s"},
		Claims: []results.Claim{servers}})
	// What the plugins declare: the targets experiment's chart, but no
	// write-up, so that it shows as one of no write-up.
	for i := range exps {
		exps[i].Views = fixture.Views(t, exps[i].Plugin, exps[i].Name)
	}
	exps[3].Views.WriteUps = nil
	claims := []results.Claim{cross, ratio, fork, never, servers}
	return ReportInput{Generated: time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC), Version: "lab test", Store: "/store",
		Runs: runs, Experiments: exps, Claims: rclaims.JudgeStore(claims, runs, nil, rclaims.Options{}), Skipped: []string{"load result /store/broken.json: unexpected EOF"},
		WriteUps: allWriteUps(t)}
}

// allWriteUps are the write-ups of every experiment of lab's plugins, as
// `lab report` gathers them from the installed plugins.
func allWriteUps(t *testing.T) []contract.WriteUp {
	t.Helper()
	var exps []ReportExperiment
	for plugin, names := range map[string][]string{"forkbench": {"forktime", "create"}, "threadbench": {"hello", "limit", "requests"},
		"printfbench": {"targets", "logging"}, "netbench": {"designs"}} {
		for _, name := range names {
			exps = append(exps, ReportExperiment{Plugin: plugin, Name: name, Views: fixture.Views(t, plugin, name)})
		}
	}
	ws, err := WriteUpsOf(exps)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestWriteUpsOf(t *testing.T) {
	ws := allWriteUps(t)
	var ids []string
	for _, w := range ws {
		ids = append(ids, w.ID)
		if w.Title == "" {
			t.Errorf("write-up %s has no title", w.ID)
		}
	}
	if want := []string{"E1", "E2", "E3", "E4", "E5"}; !slices.Equal(ids, want) {
		t.Errorf("write-ups %v, want %v", ids, want)
	}
	// One id with two titles is an error; the first title is kept.
	a := ReportExperiment{Plugin: "a", Name: "x", Views: results.Views{WriteUps: []contract.WriteUp{{ID: "W10", Title: "one"}, {ID: "W9", Title: "nine"}}}}
	b := ReportExperiment{Plugin: "b", Name: "y", Views: results.Views{WriteUps: []contract.WriteUp{{ID: "W10", Title: "two"}}}}
	got, err := WriteUpsOf([]ReportExperiment{a, b})
	if err == nil || !strings.Contains(err.Error(), `"one"`) || !strings.Contains(err.Error(), `"two"`) {
		t.Errorf("WriteUpsOf(two titles for W10) error = %v, want both titles named", err)
	}
	if len(got) != 2 || got[0].ID != "W9" || got[1].Title != "one" {
		t.Errorf("WriteUpsOf = %+v, want W9 then W10 titled one", got)
	}
}

func TestReportGrouping(t *testing.T) {
	in := reportFixture(t)
	page := buildReport(in)
	var ids []string
	for _, w := range page.WriteUps {
		ids = append(ids, w.ID)
	}
	if want := []string{"E1", "E2", "E3", "E4", "E5", "other"}; !slices.Equal(ids, want) {
		t.Fatalf("write-ups %v, want %v", ids, want)
	}
	where := map[string]string{}
	runsOf := map[string][]string{}
	for _, w := range page.WriteUps {
		for _, e := range w.Experiments {
			where[e.Plugin+"/"+e.Name] = w.ID
			for _, r := range e.Runs {
				runsOf[e.Plugin+"/"+e.Name] = append(runsOf[e.Plugin+"/"+e.Name], r.ID)
			}
		}
	}
	for exp, want := range map[string]string{"forkbench/forktime": "E2", "forkbench/create": "E1", "threadbench/hello": "E1",
		"printfbench/logging": "E3", "netbench/designs": "E5", "printfbench/targets": "other"} {
		if where[exp] != want {
			t.Errorf("%s is under %q, want %s", exp, where[exp], want)
		}
	}
	// The create run is testdata's icount run, under its experiment.
	if got := runsOf["forkbench/create"]; len(got) != 1 || got[0] != "20260102T150405.000000Z-forkbench-create-icount" {
		t.Errorf("forkbench/create runs %v, want the icount run", got)
	}
	if len(page.Orphans) != 1 || page.Orphans[0].Plugin != "threads" || len(page.Orphans[0].Runs) != 1 {
		t.Errorf("orphans %+v, want the run of threads/sweep, whose plugin is not installed", page.Orphans)
	}
	if len(page.Runs) != len(in.Runs) {
		t.Errorf("%d runs with provenance, want %d (every run used)", len(page.Runs), len(in.Runs))
	}
	// E1's figures no experiment measures are shown with E1.
	var others []string
	for _, r := range page.WriteUps[0].Others {
		others = append(others, r.Metric)
	}
	if !slices.Contains(others, "crossover_prints") || slices.Contains(others, "process_ms") {
		t.Errorf("E1's other figures %v: want crossover_prints, not process_ms (create measures it)", others)
	}

	// A filter on the plugin leaves out the write-ups it has nothing of.
	in.Filter.Plugin = "forkbench"
	in.Experiments = in.Experiments[:2]
	ids = nil
	for _, w := range buildReport(in).WriteUps {
		ids = append(ids, w.ID)
	}
	if want := []string{"E1", "E2"}; !slices.Equal(ids, want) {
		t.Errorf("write-ups with --plugin forkbench: %v, want %v", ids, want)
	}
}

func writeReport(t *testing.T, in ReportInput) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteReport(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestReportContent(t *testing.T) {
	in := reportFixture(t)
	page := writeReport(t, in)
	for _, want := range []string{
		`<nav id="toc">`, `href="#claims"`, `href="#runs"`, `href="#skipped"`, "broken.json",
		// Every run used, with its provenance.
		"20260102T150405.000000Z-forkbench-forktime-abcdef", "20261201T120000.000000Z-threadbench-hello-aaaaaa",
		"QEMU version", "7.2.0", "kernel sha256", "guest uname", "harness", "QEMU argv", "parameters",
		// The verdicts and their numbers.
		`<span class="badge v-none">not run</span>`, "To decide it: <code>lab run printfbench -e logging --profile xeon5130-fb --repeat 7</code>",
		"lab run threadbench -e hello --profile celeron-2.4 --clock icount:0 -p workers=255 --sweep count=550,650 --repeat 7",
		"deciding number",
		// Ours beside the published figures, as published.
		"Beside the published figures", "9076.9",
		// The plots, inline.
		"<figure><svg", "threadbench/hello on celeron-2.4: real_s against count", "CPU time per target", "server CPU time per design",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(page, "<svg"); n != 3 {
		t.Errorf("%d inline plots, want 3 (the sweep, printfbench's bars, netbench's designs)", n)
	}
	if strings.Contains(page, "<?xml") {
		t.Error("an SVG's XML prolog was inlined")
	}
	// A claim of an experiment with a run that did not decide it is
	// still not run, and E1.6 was decided by the icount run.
	for _, s := range in.Claims {
		if s.Claim.ID == "E3.1" && s.Verdict != results.NotRun {
			t.Errorf("E3.1: %q, want not run", s.Verdict)
		}
	}
}

func TestReportNoRuns(t *testing.T) {
	in := reportFixture(t)
	in.Runs = nil
	in.Skipped = nil
	var claims []results.Claim
	for _, s := range in.Claims {
		claims = append(claims, s.Claim)
	}
	in.Claims = rclaims.JudgeStore(claims, nil, nil, rclaims.Options{})
	page := writeReport(t, in)
	if n := strings.Count(page, `<span class="badge v-none">not run</span>`); n < 2*len(claims) {
		t.Errorf("%d not run badges, want at least %d: each claim in the list and in its section", n, 2*len(claims))
	}
	for _, want := range []string{`id="no-runs"`, "No runs yet: how to make them", "lab run forkbench -e create --profile celeron-2.4 --repeat 6",
		"lab run forkbench -e forktime --repeat 6", "No run used.", "No run of this experiment here. The figures it is compared with:"} {
		if !strings.Contains(page, want) {
			t.Errorf("report without runs lacks %q", want)
		}
	}
	for _, c := range claims {
		if !strings.Contains(page, `id="claim-`+c.ID+`"`) {
			t.Errorf("claim %s has no section", c.ID)
		}
	}

	// No plugins either.
	in.Experiments, in.Claims, in.SearchPath = nil, nil, []string{"/plugins"}
	page = writeReport(t, in)
	if !strings.Contains(page, "No installed plugin declares a claim (searched /plugins)") {
		t.Errorf("report without plugins does not say so")
	}
}

// TestReportEscaping: text from result files and descriptions (labels,
// parameters, statements, reasons, profile names) reaches the page
// escaped, in the tables and in the inlined plots.
func TestReportEscaping(t *testing.T) {
	const evil = `<script>alert(1)</script>"'><img src=x onerror=alert(2)>`
	in := reportFixture(t)
	r := in.Runs[0] // the sweep
	r.Machine.Profile = map[string]any{"name": "celeron" + evil}
	r.Parameters["workers"] = evil
	r.Command = []string{"lab", "run", evil}
	r.Outcome.StderrTail = evil
	for i := range r.Samples {
		r.Samples[i].Labels["mode"] += evil
	}
	compare.Analyze(r, []results.Reference{{Reference: contract.Reference{Metric: "real_s", Value: 1, Unit: "s", Machine: evil, Source: evil}}})
	r.Verdicts = []results.Verdict{{Claim: "E1.1", Verdict: results.Inconclusive, Statement: evil, Reason: evil, Note: evil,
		Numbers: []results.Number{{Name: evil, Value: 1, Unit: evil}}}}
	in.Experiments[2].Summary = evil
	in.Claims[0].Claim.Statement = evil
	in.Skipped = append(in.Skipped, evil)
	page := writeReport(t, in)
	for _, bad := range []string{"<script", "<img"} {
		if strings.Contains(strings.ToLower(page), strings.ToLower(bad)) {
			i := strings.Index(strings.ToLower(page), strings.ToLower(bad))
			t.Errorf("report contains %q unescaped: ...%s...", bad, page[max(0, i-80):min(len(page), i+80)])
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the text is not in the page escaped")
	}
	if n := strings.Count(page, "<svg"); n != 3 {
		t.Errorf("%d inline plots, want 3: a plot whose labels need escaping is still drawn", n)
	}
}

// TestReportSelfContained: nothing in the page is fetched: every link is
// to a fragment of the page itself, and nothing has a source.
func TestReportSelfContained(t *testing.T) {
	page := writeReport(t, reportFixture(t))
	for _, m := range regexp.MustCompile(`(?i)\s(href|src|xlink:href|action|poster|srcset)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if strings.ToLower(m[1]) != "href" || !strings.HasPrefix(m[2], "#") {
			t.Errorf("the page refers outside itself: %s", m[0])
		}
	}
	for _, bad := range []string{"<link", "<script", "@import", "url(", "<iframe", "<object", "<embed", "<img"} {
		if strings.Contains(strings.ToLower(page), bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
	// Every fragment linked to exists, once.
	ids := map[string]int{}
	for _, m := range regexp.MustCompile(`\sid="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		if n != 1 {
			t.Errorf("id %q appears %d times", id, n)
		}
	}
	for _, m := range regexp.MustCompile(`href="#([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if ids[m[1]] == 0 {
			t.Errorf("link to #%s, which the page does not have", m[1])
		}
	}
}

func TestInlineSVG(t *testing.T) {
	var plot bytes.Buffer
	if err := WriteChart(&plot, targetsRun(), targetsViews(t)); err != nil {
		t.Fatal(err)
	}
	got, err := InlineSVG(plot.Bytes())
	if err != nil || !strings.HasPrefix(string(got), "<svg") || !strings.HasSuffix(strings.TrimSpace(string(got)), "</svg>") {
		t.Fatalf("InlineSVG(a bar plot) = %.60q..., %v; want the <svg> element", got, err)
	}
	for _, bad := range []string{
		`<svg><script>alert(1)</script></svg>`,
		`<svg onload="alert(1)"><g/></svg>`,
		`<svg><foreignObject><div/></foreignObject></svg>`,
		`<svg><path style="fill:url(https://example.invalid/x)"/></svg>`,
		`<svg><g></svg>`,
		`<svg/><svg/>`,
		`<svg/><script>alert(1)</script>`,
		`<svg/>text after`,
		`no svg at all`,
	} {
		if _, err := InlineSVG([]byte(bad)); err == nil {
			t.Errorf("InlineSVG(%q) accepted it", bad)
		}
	}
}

// publishedRows are the body rows of the "Beside the published figures"
// tables of page, each row's cells.
func publishedRows(page string) [][]string {
	var rows [][]string
	for _, table := range regexp.MustCompile(`(?s)<h4>Beside the published figures</h4>\s*<table>.*?</table>`).FindAllString(page, -1) {
		body := table[strings.Index(table, "<tbody>"):]
		for _, tr := range regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(body, -1) {
			var cells []string
			for _, td := range regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(tr[1], -1) {
				cells = append(cells, td[1])
			}
			rows = append(rows, cells)
		}
	}
	return rows
}

// TestReportSweepPublishedOnce: a sweep run's published figures are
// listed once for the run, ours at each point in the figure's row, not
// the whole list again at every point swept.
func TestReportSweepPublishedOnce(t *testing.T) {
	r := sweepRun("celeron-2.4", "count", []string{"5", "50", "500"}, map[string]string{"real_s": "s"},
		[]map[string]string{{"mode": "process"}, {"mode": "thread"}}, 2,
		func(_ string, x float64, l map[string]string, k int) float64 { return x/100 + float64(k)*0.01 })
	r.Plugin, r.Experiment = "threadbench", "hello"
	refs := []results.Reference{
		{Reference: contract.Reference{Metric: "real_s", Value: 1.5, Unit: "s", Machine: "Celeron", Profile: "celeron-2.4", Source: "E1 paper"}},
		{Reference: contract.Reference{Metric: "real_s", Value: 2.5, Unit: "s", Machine: "Xeon", Profile: "xeon5130-1core", Source: "E1 article"}},
		{Reference: contract.Reference{Metric: "real_s", Value: 3500, Unit: "ms", Machine: "P4", Source: "E1 other"}},
		// A figure of one point: a row of its own, ours at that point.
		{Reference: contract.Reference{Metric: "real_s", Value: 4.5, Unit: "s", Machine: "P4", Source: "E1 at 50", Labels: map[string]string{"count": "50", "mode": "thread"}}},
	}
	compare.Analyze(r, refs)
	if n := len(r.Comparisons); n != 3*2*3+1 {
		t.Fatalf("%d comparisons, want 19: every point of each mode beside the 3 figures without labels, and one beside the labelled one", n)
	}
	exp := ReportExperiment{Plugin: "threadbench", Name: "hello", Metrics: []string{"real_s"}, References: refs}
	page := writeReport(t, ReportInput{Generated: time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC), Store: "/store", Runs: []*results.Result{r},
		Experiments: []ReportExperiment{exp}})
	rows := publishedRows(page)
	if len(rows) != 2*3+1 {
		t.Errorf("%d rows of published figures, want 7: each figure once per mode (the swept count is not a row), the labelled one once", len(rows))
	}
	for _, want := range []string{"1.5", "2.5", "3.5"} {
		n := 0
		for _, row := range rows {
			if len(row) > 4 && row[4] == want {
				n++
			}
		}
		if n != 2 {
			t.Errorf("published %s in %d rows, want 2 (mode=process, mode=thread)", want, n)
		}
	}
	// The figures' row, with ours at each point in sweep order.
	for _, row := range rows {
		if len(row) < 9 {
			t.Fatalf("row %q: want 9 cells", row)
		}
		if row[4] == "1.5" && row[2] == "mode=thread" {
			if want := "count=5: 0.055<br>count=50: 0.505<br>count=500: 5"; row[3] != want {
				t.Errorf("ours beside 1.5 s for mode=thread: %q, want %q", row[3], want)
			}
		}
		if row[4] == "4.5" {
			if want := "count=50: 0.505"; row[3] != want || row[2] != "mode=thread" {
				t.Errorf("the figure of count=50 mode=thread: ours %q labels %q, want %q and mode=thread", row[3], row[2], want)
			}
		}
	}
}

// TestVerdictBadges: a verdict's badge is coloured by its class: a
// dependent verdict is unsure's colour, not comparable and untestable
// here share one, no verdict is not run's, and one this lab does not
// know has its own.
func TestVerdictBadges(t *testing.T) {
	want := map[string]string{results.Reproduced: "v-ok", results.NotReproduced: "v-bad", results.Inconclusive: "v-unsure",
		results.NotComparable: "v-nc", results.Untestable: "v-nc", results.NotRun: "v-none", "": "v-none", "a newer one": "v-other"}
	for _, v := range results.VerdictOrder {
		if results.IsDependent(v) {
			want[v] = "v-unsure"
		}
	}
	for v, w := range want {
		if got := verdictClass(v); got != w {
			t.Errorf("verdictClass(%q) = %q, want %q", v, got, w)
		}
	}
}
