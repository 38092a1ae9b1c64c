package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lab/images"
	"lab/internal/fixture"
	"lab/internal/labtest"
	"lab/plugins"
	"lab/plugins/contract"
	"lab/plugins/host"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/matrix"
)

// lab reproduce's rounds on synthetic cells: the first round runs every
// planned run; a claim left inconclusive for too few repeats gets a round
// more of only its runs, adding to each stored run the repeats the judge
// says it needs; the
// same command resumes without running a finished cell again; a budget
// too small for the next round stops it and says which claims it stopped.

func ratioClaim(id, profile, exp string) results.Claim {
	return results.Claim{Claim: contract.Claim{ID: id, Statement: "a is above b", Source: "a note",
		Ratio: &contract.RatioClaim{Numerator: "a", Denominator: "b", Min: 1},
		Scope: &contract.Scope{Profiles: []string{profile}, Clocks: []string{contract.ClockIcount}}},
		Plugin: "bench", Bench: exp}.WithKind()
}

// fakeCells runs a cell by saving a result with a = 2b, one sample a
// repeat; experiment "short" gives only 3 samples while asked for 5 or
// fewer.
// fakeRunID numbers the fake runs: run IDs are unique.
var fakeRunID int

type fakeCells struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeCells) run(ctx context.Context, req Request, o Options) (*Run, error) {
	f.mu.Lock()
	n := len(f.calls)
	fakeRunID++
	id := fakeRunID
	call := fmt.Sprintf("%s/%s x%d", req.Profiles[0], req.Experiment, req.Repeat)
	if req.AddTo != "" {
		call += " more"
	}
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	reps := req.Repeat
	if req.Experiment == "short" && reps <= 5 {
		reps = 3
	}
	res := fakeResult(id, req.Profiles[0], req.Experiment, req.Clock, req.Repeat, reps, time.Duration(n)*time.Second)
	res.AddTo = req.AddTo
	if _, err := results.Save(req.Out, res); err != nil {
		return nil, err
	}
	return &Run{Result: res}, nil
}

// fakeResult is run id of bench/exp on profile under clock, asked for
// repeat repeats and giving reps samples of a = 2b, finishing after.
func fakeResult(id int, profile, exp, clock string, repeat, reps int, after time.Duration) *results.Result {
	res := &results.Result{ID: fmt.Sprintf("run-%s-%d", exp, id), Plugin: "bench", PluginVersion: "1.0.0", Experiment: exp,
		Parameters: map[string]string{"repeat": strconv.Itoa(repeat)}, Started: time.Now().UTC(), Finished: time.Now().UTC().Add(after),
		Machine: results.MachineRecord{Profile: map[string]any{"name": profile}, Accelerator: "tcg", Clock: clock},
		Outcome: results.Outcome{Status: "ok"}}
	var a, b []float64
	for i := range reps {
		b = append(b, 100+float64(i))
		a = append(a, 200+2*float64(i))
	}
	res.Samples = append(fixture.Series("a", "ms", nil, a...), fixture.Series("b", "ms", nil, b...)...)
	return res
}

// benchPlugin installs plugin bench, a recorded description and no code,
// whose experiments declare claims (each claim's Bench): the search path
// that finds it.
func benchPlugin(t *testing.T, claims ...results.Claim) host.SearchPath {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "bench", "i386")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	labtest.WriteELF(t, filepath.Join(dir, "bench"), "i386", "")
	desc := &plugins.Description{Name: "bench", Version: "1.0.0", Summary: "a and b"}
	for _, c := range claims {
		i := slices.IndexFunc(desc.Experiments, func(x plugins.Experiment) bool { return x.Name == c.Bench })
		if i < 0 {
			desc.Experiments = append(desc.Experiments, plugins.Experiment{Name: c.Bench, Summary: c.Bench,
				Metrics: []plugins.Metric{{Name: "a", Unit: "ms", Help: "a"}, {Name: "b", Unit: "ms", Help: "b"}}})
			i = len(desc.Experiments) - 1
		}
		desc.Experiments[i].Claims = append(desc.Experiments[i].Claims, c.Claim)
	}
	if err := host.WriteRecord(dir, desc); err != nil {
		t.Fatal(err)
	}
	return host.SearchPath{Extra: []string{root}}
}

// fakePlan is a plan of claims whose cells are planned without checking
// them against installed plugins and profiles.
func fakePlan(out string, budget time.Duration, claims ...results.Claim) *ReproducePlan {
	runs, un := rclaims.Plan(claims, nil)
	p := &ReproducePlan{ReproduceRequest: ReproduceRequest{IDs: []string{"all"}, Out: out, Budget: budget, Parallel: 2,
		Command: []string{"/bin/lab", "reproduce"}}, Claims: claims, Runs: runs, Unplanned: un}
	p.newPlan = func(r Request) (*Plan, error) { return &Plan{Request: r, OutDir: r.Out}, nil }
	return p
}

func TestReproduceRounds(t *testing.T) {
	out := t.TempDir()
	claims := []results.Claim{ratioClaim("E1.1", "pa", "full"), ratioClaim("E1.2", "pb", "short")}
	f := &fakeCells{}
	opts := MatrixOptions{runCell: f.run}
	p := fakePlan(out, time.Hour, claims...)
	got, err := p.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(f.calls)
	if want := []string{"pa/full x5", "pb/short x5", "pb/short x5 more"}; !slices.Equal(f.calls, want) {
		t.Errorf("cells run: %v, want %v", f.calls, want)
	}
	if len(got.Rounds) != 2 || !slices.Equal(got.Rounds[0].Decided, []string{"E1.1"}) || !slices.Equal(got.Rounds[0].Open, []string{"E1.2"}) ||
		!slices.Equal(got.Rounds[1].Decided, []string{"E1.2"}) || len(got.Rounds[1].Runs) != 1 {
		t.Errorf("rounds: %+v", got.Rounds)
	}
	for _, s := range got.Statuses {
		if s.Verdict != results.Reproduced {
			t.Errorf("%s: %s: %s", s.Claim.ID, s.Verdict, s.Judged.Reason)
		}
	}
	// Round 2 added 5 repeats to round 1's run of pb/short, and the judge
	// decided E1.2 on both (3 samples each: alone, too few).
	if len(got.Rounds) == 2 {
		key := got.Rounds[1].Runs[0].Key()
		first := got.Statuses[1].Judged.Runs
		if add := got.Rounds[1].AddTo[key]; got.Rounds[1].Repeats[key] != 5 || len(first) != 2 || add == "" || !slices.Contains(first, add) {
			t.Errorf("round 2 asked %d repeats adding to %q; E1.2 decided by %v", got.Rounds[1].Repeats[key], got.Rounds[1].AddTo[key], first)
		}
	}
	if len(got.Stopped)+len(got.Capped) != 0 || got.Interrupted {
		t.Errorf("stopped %v, capped %v, interrupted %v", got.Stopped, got.Capped, got.Interrupted)
	}
	// The same command again resumes: every round's cells are done.
	f.calls = nil
	again, err := fakePlan(out, time.Hour, claims...).Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.calls) != 0 || len(again.Statuses) != 2 || again.Statuses[1].Verdict != results.Reproduced {
		t.Errorf("resumed: ran %v, statuses %+v", f.calls, again.Statuses)
	}
	if dirs, _ := os.ReadDir(filepath.Join(out, "rounds")); len(dirs) != 2 {
		t.Errorf("%d round directories, want 2", len(dirs))
	}
}

func TestReproduceBudget(t *testing.T) {
	claims := []results.Claim{ratioClaim("E1.2", "pb", "short")}
	f := &fakeCells{}
	// The next round (5 repeats more of an experiment with no estimate,
	// 30 s each, two VMs at a time) is estimated at over a minute: a
	// 1-minute budget stops before it.
	got, err := fakePlan(t.TempDir(), time.Minute, claims...).Run(context.Background(), MatrixOptions{runCell: f.run})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.calls) != 1 || !slices.Equal(got.Stopped, []string{"E1.2"}) || got.NextRound < time.Minute ||
		got.Statuses[0].Verdict != results.Inconclusive {
		t.Errorf("ran %v; stopped %v (next round %v); verdict %s", f.calls, got.Stopped, got.NextRound, got.Statuses[0].Verdict)
	}
}

// The matrix file of a plan reads back as the plan's cells.
func TestMatrixYAMLParses(t *testing.T) {
	c := ratioClaim("E1.1", "pa", "full")
	c.Scope.Params = map[string]string{"stdout": "pty", "label": "a b"}
	c.Scope.Sweep = &contract.ScopeSweep{Key: "count", Points: []string{"5", "500"}}
	d := ratioClaim("E1.2", "pb", "full")
	sc := *c.Scope
	sc.Profiles = []string{"pb"}
	d.Scope = &sc
	runs, _ := rclaims.Plan([]results.Claim{c, d}, nil)
	data := MatrixYAML("nightly", "icount:0", runs, map[string]More{runs[1].Key(): {Repeat: 9}}, "line one\n\nline three")
	spec, cells, err := matrix.Parse(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !strings.HasPrefix(string(data), "# line one\n#\n# line three\n") || spec.Clock != "icount:0" || len(cells) != 2 {
		t.Fatalf("spec %+v cells %+v\n%s", spec, cells, data)
	}
	for i, want := range []int{runs[0].Repeat, 9} {
		c := cells[i]
		if c.Profile != runs[i].Profile || c.Repeat != want || c.Params["label"] != "a b" || !slices.Equal(c.Sweep["count"], []string{"5", "500"}) {
			t.Errorf("cell %d: %+v", i, c)
		}
	}
}

// A run the store already holds (another selection's, into the same
// directory) is kept, not run again; one with fewer repeats, another
// clock or other parameters is not the plan's.
func TestReproduceKeepsStoredRuns(t *testing.T) {
	out := t.TempDir()
	f := &fakeCells{}
	opts := MatrixOptions{runCell: f.run}
	if _, err := fakePlan(out, time.Hour, ratioClaim("E1.1", "pa", "full")).Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	f.calls = nil
	var events []string
	opts.Observe = func(e Event) { events = append(events, e.String()) }
	got, err := fakePlan(out, time.Hour, ratioClaim("E1.1", "pa", "full"), ratioClaim("E1.3", "pc", "full")).Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.calls, []string{"pc/full x5"}) || len(got.Statuses) != 2 ||
		!slices.ContainsFunc(events, func(e string) bool { return strings.Contains(e, "1 already in the results, kept") }) {
		t.Errorf("ran %v; events %q", f.calls, events)
	}
	r := rclaims.Run{Plugin: "bench", Experiment: "full", Profile: "pa", Clock: "icount:0", Repeat: 5, Params: map[string]string{"m": "1"}}
	res := &results.Result{Plugin: "bench", Experiment: "full", Machine: results.MachineRecord{Profile: map[string]any{"name": "pa"}, Clock: "icount:0"},
		Parameters: map[string]string{"m": "1", "repeat": "5"}, Outcome: results.Outcome{Status: "ok"}, PluginVersion: "1.0.0"}
	if !holds(res, r, "1.0.0") {
		t.Errorf("the run itself is not held")
	}
	if x := *res; !holds(&x, r, "1.0.0") {
		t.Errorf("the run with its build named is not held")
	} else if x.Parameters = map[string]string{"m": "1", "repeat": "5", "build": "static-O2"}; !holds(&x, r, "1.0.0") {
		t.Errorf("the run with the default build named is not held")
	}
	dyn := r
	dyn.Params = map[string]string{"m": "1", "build": "dynamic-O0"}
	if holds(res, dyn, "1.0.0") {
		t.Errorf("a run of the default build is held for the dynamic -O0 build's")
	}
	for name, change := range map[string]func(*results.Result){
		"fewer repeats": func(x *results.Result) { x.Parameters["repeat"] = "4" },
		"host clock":    func(x *results.Result) { x.Machine.Clock = "host" },
		"other m":       func(x *results.Result) { x.Parameters["m"] = "2" },
		"failed":        func(x *results.Result) { x.Outcome.Status = "failed" },
		"older plugin":  func(x *results.Result) { x.PluginVersion = "0.9.0" },
		// A run of another build is another cell (a stratum of its
		// own): before, the dynamic -O0 build's run was held for the
		// default build's, and lab reproduce all never ran the latter
		// once it was interrupted (2026-12-07).
		"another build": func(x *results.Result) { x.Parameters["build"] = "dynamic-O0" },
	} {
		x := *res
		x.Parameters = map[string]string{"m": "1", "repeat": "5"}
		change(&x)
		if holds(&x, r, "1.0.0") {
			t.Errorf("%s: held", name)
		}
	}
}

// Ctrl-C mid-round keeps the runs that finished; the same command again
// runs only the rest.
func TestReproduceInterrupted(t *testing.T) {
	out := t.TempDir()
	claims := []results.Claim{ratioClaim("E1.1", "pa", "full"), ratioClaim("E1.3", "pc", "full")}
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeCells{}
	opts := MatrixOptions{runCell: func(c context.Context, req Request, o Options) (*Run, error) {
		if req.Profiles[0] == "pc" {
			cancel()
			return nil, c.Err()
		}
		return f.run(c, req, o)
	}}
	p := fakePlan(out, time.Hour, claims...)
	p.Parallel = 1
	got, err := p.Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Interrupted || len(got.Stopped) != 0 || got.Statuses[0].Verdict != results.Reproduced || got.Statuses[1].Verdict != results.NotRun ||
		got.Rounds[0].Failed != 0 || got.Rounds[0].Unfinished != 1 {
		t.Fatalf("interrupted: %+v", got)
	}
	f.calls = nil
	again, err := fakePlan(out, time.Hour, claims...).Run(context.Background(), MatrixOptions{runCell: f.run})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.calls, []string{"pc/full x5"}) || again.Interrupted || again.Statuses[1].Verdict != results.Reproduced {
		t.Errorf("resumed: ran %v, %+v", f.calls, again.Statuses)
	}
}

// The claims table lab reproduce ends with and the report page it writes
// beside it judge one store by one rule, so they agree claim by claim.
// Here the rules differ: E1.2's cell ran twice, each run too short to
// decide alone (3 repeats of the 5 its rule needs), enough pooled (6);
// E1.1's ran once, enough. The rule is the latest run of each cell, which
// the rounds decide by (a round more gives the latest run the repeats the
// judge asked for).
func TestReproduceTableIsThePage(t *testing.T) {
	claims := []results.Claim{ratioClaim("E1.1", "pa", "full"), ratioClaim("E1.2", "pb", "short")}
	p := fakePlan(t.TempDir(), time.Hour, claims...)
	p.Roots.Plugins = benchPlugin(t, claims...)
	for i, r := range []*results.Result{
		fakeResult(1, "pa", "full", "icount:0", 5, 5, 0),
		fakeResult(2, "pb", "short", "icount:0", 5, 3, time.Second),
		fakeResult(3, "pb", "short", "icount:0", 5, 3, 2*time.Second),
	} {
		if _, err := results.Save(p.Store(), r); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	all, _ := results.LoadAll(p.Store())
	latest := rclaims.JudgeStore(claims, all, nil, rclaims.Options{})
	pooled := rclaims.JudgeStore(claims, all, nil, rclaims.Options{All: true})
	if latest[1].Verdict != results.Inconclusive || pooled[1].Verdict != results.Reproduced || latest[0].Verdict != results.Reproduced {
		t.Fatalf("the store does not tell the rules apart: latest %s %s, all %s %s", latest[0].Verdict, latest[1].Verdict, pooled[0].Verdict, pooled[1].Verdict)
	}
	store, skipped := p.readStore()
	table := p.judge(store)
	in, warnings, skipped := reportFrom(p.reportRequest(), store, skipped)
	if len(warnings)+len(skipped) != 0 {
		t.Fatalf("report: warnings %v, skipped %v", warnings, skipped)
	}
	page := map[string]string{}
	for _, s := range in.Claims {
		page[s.Claim.ID] = s.Verdict
	}
	if len(table) != 2 || len(page) != 2 {
		t.Fatalf("table %+v, page %v", table, page)
	}
	for i, s := range table {
		if s.Verdict != latest[i].Verdict {
			t.Errorf("%s: the table says %s, the latest run of each cell %s", s.Claim.ID, s.Verdict, latest[i].Verdict)
		}
		if page[s.Claim.ID] != s.Verdict {
			t.Errorf("%s: the table says %s, the page %s", s.Claim.ID, s.Verdict, page[s.Claim.ID])
		}
	}
	// What lab reproduce returns and the page it writes: the store holds
	// every run, so nothing runs.
	f := &fakeCells{}
	got, err := p.Run(context.Background(), MatrixOptions{runCell: f.run})
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(got.Report)
	if err != nil || got.ReportErr != nil || len(f.calls) != 0 || len(got.Statuses) != 2 {
		t.Fatalf("ran %v; report %s: %v, %v; statuses %+v", f.calls, got.Report, err, got.ReportErr, got.Statuses)
	}
	for i, s := range got.Statuses {
		if s.Verdict != table[i].Verdict {
			t.Errorf("%s: lab reproduce says %s, the table %s", s.Claim.ID, s.Verdict, table[i].Verdict)
		}
		row := regexp.MustCompile(`>` + regexp.QuoteMeta(s.Claim.ID) + `</a></td><td><span class="badge [^"]*">([^<]*)<`).FindSubmatch(html)
		if row == nil || string(row[1]) != s.Verdict {
			t.Errorf("%s: lab reproduce says %s, its page %q", s.Claim.ID, s.Verdict, row)
		}
	}
}

// The cells a round runs, built from the runs, are those of the matrix
// file MatrixYAML writes of the same runs (what --dry-run --matrix and
// examples/ci print): for every claim the plugins declare, with the
// era-kernel variants, under each clock, and for runs with quoted
// parameters, a sweep and repeats of their own.
func TestRoundCellsAreTheMatrixFile(t *testing.T) {
	var claims []results.Claim
	for _, name := range []string{"forkbench", "threadbench", "printfbench", "netbench"} {
		b, err := os.ReadFile(filepath.Join("..", "plugins", name, "description.json"))
		if err != nil {
			t.Fatal(err)
		}
		var d plugins.Description
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		claims = append(claims, host.AllClaims(&d)...)
	}
	variants := map[string][]string{}
	for _, p := range images.Builtin() {
		if p.VariantOf != "" {
			variants[p.VariantOf] = append(variants[p.VariantOf], p.Name)
		}
	}
	all, _ := rclaims.Plan(claims, variants)
	c := ratioClaim("E1.1", "pa", "full")
	// YAML's words for no value (null, ~) are quoted, or the file's
	// entry would make no cell (printfbench's target=null).
	c.Scope.Params = map[string]string{"stdout": "pty", "label": "a b", "target": "null", "tilde": "~", "word": "NULL"}
	c.Scope.Sweep = &contract.ScopeSweep{Key: "count", Points: []string{"5", "500"}}
	d := ratioClaim("E1.2", "pb", "full")
	sc := *c.Scope
	sc.Profiles = []string{"pb"}
	d.Scope = &sc
	some, _ := rclaims.Plan([]results.Claim{c, d}, nil)
	for _, tt := range []struct {
		name    string
		runs    []rclaims.Run
		repeats map[string]More
	}{
		{"all", all, nil},
		{"all, more repeats", all, map[string]More{all[0].Key(): {Repeat: 9}, all[len(all)-1].Key(): {Repeat: 17}}},
		{"quoted, swept", some, map[string]More{some[1].Key(): {Repeat: 9}}},
		// A round adding repeats to stored runs: an entry each, naming
		// its run, even where two differ only in profile.
		{"added to", some, map[string]More{some[0].Key(): {Repeat: 4, AddTo: "run-1"}, some[1].Key(): {Repeat: 4, AddTo: "20261207T150405.123456Z-bench-full-3fa9c1"}}},
		{"all, added to", all, map[string]More{all[0].Key(): {Repeat: 3, AddTo: "r0"}, all[1].Key(): {Repeat: 3, AddTo: "r1"}}},
	} {
		var clocks []string
		for _, r := range tt.runs {
			if !slices.Contains(clocks, r.Clock) {
				clocks = append(clocks, r.Clock)
			}
		}
		if tt.name == "all" && (len(clocks) != 2 || len(tt.runs) < 40) {
			t.Fatalf("all: %d runs under %v", len(tt.runs), clocks)
		}
		n := 0
		for _, clock := range clocks {
			_, want, err := matrix.Parse(MatrixYAML("m", clock, tt.runs, tt.repeats, ""))
			if err != nil {
				t.Fatal(err)
			}
			got := roundCells(clock, tt.runs, tt.repeats)
			n += len(got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %s: cells\n%+v\nthe matrix file's\n%+v", tt.name, clock, got, want)
			}
		}
		if n != len(tt.runs) {
			t.Errorf("%s: %d cells of %d runs", tt.name, n, len(tt.runs))
		}
	}
}

// Each cell is planned once: a round's cells when its matrix is made (a
// cell planned before keeps its plan), and the store is read once before
// the first round and once after each.
func TestReproducePlansEachCellOnce(t *testing.T) {
	out := t.TempDir()
	claims := []results.Claim{ratioClaim("E1.1", "pa", "full"), ratioClaim("E1.2", "pb", "short")}
	var planned []string
	reads := 0
	plan := func() *ReproducePlan {
		p := fakePlan(out, time.Hour, claims...)
		fake := p.newPlan
		p.newPlan = func(r Request) (*Plan, error) {
			call := fmt.Sprintf("%s/%s x%d", r.Profiles[0], r.Experiment, r.Repeat)
			if r.AddTo != "" {
				call += " more"
			}
			planned = append(planned, call)
			return fake(r)
		}
		p.load = func(dir string) ([]*results.Result, []error) {
			reads++
			return results.LoadAll(dir)
		}
		return p
	}
	f := &fakeCells{}
	p := plan()
	// The plan's own check of round 1's cells, kept for the round.
	for _, clock := range p.Clocks() {
		if _, err := p.matrixPlan(1, clock, p.Runs, nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := p.Run(context.Background(), MatrixOptions{runCell: f.run})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(planned)
	slices.Sort(f.calls)
	if want := []string{"pa/full x5", "pb/short x5", "pb/short x5 more"}; !slices.Equal(planned, want) || !slices.Equal(f.calls, planned) {
		t.Errorf("planned %v, ran %v; want each of %v once", planned, f.calls, want)
	}
	if len(got.Rounds) != 2 || reads != 3 {
		t.Errorf("%d rounds, %d reads of the store; want 2 and 3", len(got.Rounds), reads)
	}
	// Resumed: nothing to plan, one read.
	planned, reads, f.calls = nil, 0, nil
	if _, err := plan().Run(context.Background(), MatrixOptions{runCell: f.run}); err != nil {
		t.Fatal(err)
	}
	if len(planned) != 0 || len(f.calls) != 0 || reads != 1 {
		t.Errorf("resumed: planned %v, ran %v, %d reads", planned, f.calls, reads)
	}
}

// A matrix cell runs on the plan its check made, made ready to run: the
// command recorded, the results directory made, start-up counted from
// the run; nothing is planned again.
func TestMatrixCellRunsItsCheckedPlan(t *testing.T) {
	out := t.TempDir()
	c := matrix.Cell{Plugin: "bench", Experiment: "full", Profile: "pa", Repeat: 3, Clock: "icount:0"}
	c.ID = matrix.CellID(c)
	calls := 0
	m, err := newMatrixPlan(MatrixRequest{File: "m", Out: out}, &matrix.Spec{Name: "m"}, []matrix.Cell{c}, results.StoreDir(out),
		func(r Request) (*Plan, error) {
			calls++
			if !r.CheckOnly || r.Command != nil {
				t.Errorf("checked as %+v", r)
			}
			return &Plan{Request: r, OutDir: r.Out, Started: time.Now().Add(-time.Hour), Desc: &plugins.Description{Name: "bench"}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	checked := m.plans[c.ID]
	req, err := CellRequest(c, m.Store, nil, []string{"lab", "run", "bench"}, Roots{})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := m.runPlan(c, req)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || plan == checked || plan.Desc != checked.Desc || plan.CheckOnly || !slices.Equal(plan.Command, req.Command) ||
		time.Since(plan.Started) > time.Minute || !checked.CheckOnly || checked.Command != nil {
		t.Errorf("%d plans; ran on %+v, checked %+v", calls, plan, checked)
	}
	if fi, err := os.Stat(m.Store); err != nil || !fi.IsDir() {
		t.Errorf("the results directory was not made: %v", err)
	}
}

// lab reproduce is one engine call: the claims the installed plugins
// declare, selected, planned and checked (each cell once, the plan that
// checked it kept for it), run in rounds, judged, the report written;
// the plan is an event before the first round.
func TestReproduceOneCall(t *testing.T) {
	claims := []results.Claim{ratioClaim("E1.1", "celeron-2.4", "full"), ratioClaim("E1.2", "split-3g1g", "short")}
	roots := Roots{Plugins: benchPlugin(t, claims...), Profiles: t.TempDir()}
	out := filepath.Join(t.TempDir(), "out")
	f := &fakeCells{}
	var events []string
	opts := MatrixOptions{runCell: f.run, Options: Options{Observe: func(e Event) {
		if p, ok := e.(ReproducePlanned); ok && (len(p.Plan.Claims) != 2 || len(p.Plan.plans) != 2) {
			t.Errorf("planned %+v", p.Plan)
		}
		events = append(events, fmt.Sprintf("%T", e))
	}}}
	got, err := Reproduce(context.Background(), ReproduceRequest{IDs: []string{"E1"}, Out: out, Roots: roots, Command: []string{"lab", "reproduce"}, Version: "lab test"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 || events[0] != "engine.ReproducePlanned" {
		t.Errorf("events %v", events)
	}
	slices.Sort(f.calls)
	if want := []string{"celeron-2.4/full x5", "split-3g1g/short x5", "split-3g1g/short x5 more"}; !slices.Equal(f.calls, want) || len(got.Plan.plans) != 3 {
		t.Errorf("ran %v, want %v; %d cells planned, want 3", f.calls, want, len(got.Plan.plans))
	}
	if len(got.Statuses) != 2 || got.Statuses[0].Verdict != results.Reproduced || got.Statuses[1].Verdict != results.Reproduced {
		t.Errorf("statuses %+v", got.Statuses)
	}
	html, err := os.ReadFile(got.Report)
	if err != nil || got.ReportErr != nil || len(got.Warnings)+len(got.Skipped) != 0 || !strings.Contains(string(html), "lab test") {
		t.Errorf("report %s: %v, %v; warnings %v, skipped %v", got.Report, err, got.ReportErr, got.Warnings, got.Skipped)
	}
	// What --json prints of it: the outcome, not the plan or the report.
	b, err := json.Marshal(got)
	if err != nil || strings.Contains(string(b), `"Plan"`) || strings.Contains(string(b), `"Report"`) || !strings.Contains(string(b), `"Statuses"`) {
		t.Errorf("json: %v\n%s", err, b)
	}
}
