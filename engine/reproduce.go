package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"lab/images"
	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/matrix"
)

// `lab reproduce` decides claims from one command: it plans the fewest
// runs that decide them (rclaims.Plan), runs them as matrices (one a
// clock: icount cells two at a time, host cells one at a time), judges
// the claims from every run it made, and repeats adaptively: a round
// more, with more repeats, of the runs of the claims still inconclusive,
// until each is decided, the repeats reach MaxAdaptiveRepeats or the
// budget is spent. Everything goes under Out: the results in
// Out/results (one store, so the latest run of a cell decides), each
// round's matrix in Out/rounds/N-CLOCK-HASH (state, logs), the report in
// Out/report/index.html. Running the same command again resumes: a
// round's matrix keeps its finished cells, and the rounds after it are
// planned from the same results.
//
// A round's matrix is made of cells built from the runs (roundCells; the
// matrix file MatrixYAML writes is for --dry-run --matrix and the CI
// files), each cell planned once (checkCell: the plan that checked it
// runs it), and the store is read once before the first round and once
// after each, that read deciding the next round, the claims table and
// the report alike.

// ReproduceRequest is what `lab reproduce` is asked.
type ReproduceRequest struct {
	// IDs select the claims (rclaims.Select): claim ids, compound ids,
	// experiments (E1), "all".
	IDs []string
	Out string
	// Budget bounds the whole run (0: DefaultBudget).
	Budget time.Duration
	// Parallel is the icount cells at once (0: DefaultParallel); host
	// cells always run alone.
	Parallel int
	// Variants also runs the era-kernel variants of the claims'
	// profiles (each its own stratum).
	Variants     bool
	ProfileFiles []string
	Command      []string
	Roots        Roots
	// Version is lab's version line, for the report.
	Version string
}

// DefaultBudget bounds a `lab reproduce` that is given none.
const DefaultBudget = time.Hour

// MaxAdaptiveRepeats caps the repeats an adaptive round asks of a run.
const MaxAdaptiveRepeats = 32

// MaxRounds caps the rounds: the first and the adaptive ones.
const MaxRounds = 3

// ReproducePlan is a reproduce request checked and planned.
type ReproducePlan struct {
	ReproduceRequest
	Claims    []results.Claim
	Runs      []rclaims.Run
	Unplanned []rclaims.Unplanned
	Profiles  rclaims.Profiles
	// Estimate is the first round's expected wall time, from Estimates,
	// of the runs the store does not hold yet (Kept are those it holds).
	Estimate  time.Duration
	Kept      int
	Estimates Estimates
	// versions are the installed plugins' versions: a stored run of
	// another version is not one of the plan's.
	versions map[string]string
	// plans are the cells planned (checkCell), by cellKey.
	plans map[string]*Plan
	// newPlan, in tests, replaces NewPlan (which checks a cell against
	// the installed plugins and profiles); load, results.LoadAll.
	newPlan func(Request) (*Plan, error)
	load    func(dir string) ([]*results.Result, []error)
}

// PlanReproduce selects the claims, plans their runs and checks every
// run as lab run would, before anything boots; the estimate is of the
// runs the store does not hold yet. It is --dry-run's; Reproduce plans
// and runs.
func PlanReproduce(req ReproduceRequest) (*ReproducePlan, error) {
	p, err := planReproduce(req)
	if err != nil {
		return nil, err
	}
	store, _ := p.readStore()
	p.hold(store)
	return p, nil
}

// Reproduce is lab reproduce: the claims selected, their runs planned
// and checked (as PlanReproduce), then run in rounds (ReproducePlan.Run),
// the claims judged and the report written.
func Reproduce(ctx context.Context, req ReproduceRequest, opts MatrixOptions) (*Reproduced, error) {
	p, err := planReproduce(req)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx, opts)
}

// planReproduce is PlanReproduce without the store: nothing estimated.
func planReproduce(req ReproduceRequest) (*ReproducePlan, error) {
	if req.Out == "" {
		return nil, fmt.Errorf("no output directory: choose one with --out DIR")
	}
	if req.Budget == 0 {
		req.Budget = DefaultBudget
	}
	if req.Budget < 0 {
		return nil, fmt.Errorf("--budget %v: want a positive duration, such as 30m", req.Budget)
	}
	if req.Parallel == 0 {
		req.Parallel = DefaultParallel(images.ClockICount)
	}
	if req.Parallel < 1 || req.Parallel > 16 {
		return nil, fmt.Errorf("--parallel %d: want 1..16", req.Parallel)
	}
	claims, descs, err := installedClaims(req.Roots.Plugins)
	if err != nil {
		return nil, err
	}
	sel, err := rclaims.Select(claims, req.IDs)
	if err != nil {
		return nil, err
	}
	profiles, err := CatalogProfiles(req.Roots.Profiles, req.ProfileFiles...)
	if err != nil {
		return nil, fmt.Errorf("profiles: %w", err)
	}
	var variants map[string][]string
	if req.Variants {
		variants = map[string][]string{}
		for name, p := range profiles {
			if p.VariantOf != "" {
				variants[p.VariantOf] = append(variants[p.VariantOf], name)
			}
		}
		for _, v := range variants {
			slices.Sort(v)
		}
	}
	p := &ReproducePlan{ReproduceRequest: req, Claims: sel, Profiles: profiles, Estimates: EstimatesOf(descs...), versions: map[string]string{}}
	for _, d := range descs {
		p.versions[d.Name] = d.Version
	}
	p.Runs, p.Unplanned = rclaims.Plan(sel, variants)
	// Each run is checked as its matrix cell, whose plan it keeps.
	for _, clock := range p.Clocks() {
		if _, err := p.matrixPlan(1, clock, p.Runs, nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// readStore reads the plan's store.
func (p *ReproducePlan) readStore() ([]*results.Result, []error) {
	if p.load != nil {
		return p.load(p.Store())
	}
	return results.LoadAll(p.Store())
}

// hold sets the plan's estimate and Kept from store, and returns the
// runs it does not hold yet.
func (p *ReproducePlan) hold(store []*results.Result) []rclaims.Run {
	todo, kept := p.notYetRun(store)
	p.Estimate, p.Kept = p.estimate(todo, nil), kept
	return todo
}

// installedClaims are the claims of every plugin on path, sorted, and
// the plugins' descriptions; an error when a description does not read.
func installedClaims(path host.SearchPath) ([]results.Claim, []*plugins.Description, error) {
	descs, warnings := path.DescribeAll()
	if len(warnings) > 0 {
		return nil, nil, warnings[0]
	}
	var claims []results.Claim
	for _, d := range descs {
		claims = append(claims, host.AllClaims(d)...)
	}
	if len(claims) == 0 {
		return nil, nil, fmt.Errorf("no installed plugin declares a claim (searched %s)", strings.Join(path.Dirs(), ", "))
	}
	rclaims.Sort(claims)
	return claims, descs, nil
}

// Clocks are the clocks of the plan's runs, icount first.
func (p *ReproducePlan) Clocks() []string {
	var cl []string
	for _, r := range p.Runs {
		if !slices.Contains(cl, r.Clock) {
			cl = append(cl, r.Clock)
		}
	}
	slices.SortFunc(cl, func(a, b string) int { return strings.Compare(b, a) }) // icount:0 before host
	return cl
}

// parallel is how many runs of clock run at once.
func (p *ReproducePlan) parallel(clock string) int {
	if strings.HasPrefix(clock, images.ClockICount) {
		return p.Parallel
	}
	return 1
}

// More is what a round asks of a planned run beyond the plan: its
// repeats, and the stored run of its cell they add to ("": a run of its
// own).
type More struct {
	Repeat int
	AddTo  string
}

// estimate is the wall time of runs asked more (by run key; missing:
// the run's own repeats): each clock's runs one after another, icount's
// Parallel at a time.
func (p *ReproducePlan) estimate(runs []rclaims.Run, more map[string]More) time.Duration {
	var total time.Duration
	for _, clock := range p.Clocks() {
		var sum time.Duration
		for _, r := range runs {
			if r.Clock == clock {
				sum += p.Estimates.Run(r, more[r.Key()].Repeat)
			}
		}
		total += sum / time.Duration(p.parallel(clock))
	}
	return total
}

// MatrixYAML is the matrix file of runs of clock asked more (missing:
// the run's own repeats): a cell a run, runs differing only in profile
// one entry, each entry's comment naming its claims. It is what `lab
// reproduce --dry-run --matrix` prints and examples/ci/nightly.yaml
// holds; the rounds run the same cells (roundCells), not read from it.
func MatrixYAML(name, clock string, runs []rclaims.Run, more map[string]More, header string) []byte {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		if l == "" {
			b.WriteString("#\n")
		} else {
			b.WriteString("# " + l + "\n")
		}
	}
	fmt.Fprintf(&b, "name: %s\nclock: %s\n", name, clock)
	if !strings.HasPrefix(clock, images.ClockICount) {
		b.WriteString("parallel: 1\n")
	}
	b.WriteString("cells:\n")
	type entry struct {
		r        rclaims.Run
		profiles []string
		repeat   int
		addTo    string
	}
	var es []*entry
	for _, r := range runs {
		if r.Clock != clock {
			continue
		}
		rep, m := r.Repeat, more[r.Key()]
		if m.Repeat > 0 {
			rep = m.Repeat
		}
		same := func(e *entry) bool {
			a, c := e.r, r
			a.Profile, c.Profile = "", ""
			return a.Key() == c.Key() && e.repeat == rep && e.addTo == "" && m.AddTo == "" && slices.Equal(a.Points, c.Points) && slices.Equal(a.Claims, c.Claims)
		}
		if i := slices.IndexFunc(es, same); i >= 0 {
			es[i].profiles = append(es[i].profiles, r.Profile)
			continue
		}
		es = append(es, &entry{r: r, profiles: []string{r.Profile}, repeat: rep, addTo: m.AddTo})
	}
	for _, e := range es {
		r := e.r
		fmt.Fprintf(&b, "  # %s\n", strings.Join(r.Claims, ", "))
		fmt.Fprintf(&b, "  - plugin: %s\n    experiment: %s\n    profiles: [%s]\n", r.Plugin, r.Experiment, strings.Join(e.profiles, ", "))
		if len(r.Params) > 0 {
			var kv []string
			for _, k := range results.SortedKeys(r.Params) {
				kv = append(kv, k+": "+yamlScalar(r.Params[k]))
			}
			fmt.Fprintf(&b, "    params: {%s}\n", strings.Join(kv, ", "))
		}
		if r.SweepKey != "" {
			var vs []string
			for _, v := range r.Points {
				vs = append(vs, yamlScalar(v))
			}
			fmt.Fprintf(&b, "    sweep: {%s: [%s]}\n", r.SweepKey, strings.Join(vs, ", "))
		}
		fmt.Fprintf(&b, "    repeat: %d\n", e.repeat)
		if e.addTo != "" {
			fmt.Fprintf(&b, "    add_to: %s\n", yamlScalar(e.addTo))
		}
	}
	return []byte(b.String())
}

var plainScalar = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// yamlNull are the plain scalars YAML reads as no value.
var yamlNull = regexp.MustCompile(`^(null|Null|NULL|~)$`)

// yamlScalar is s as a YAML scalar that reads back as the string s:
// plain where it can be, quoted where it has other characters or is
// one of YAML's words for no value.
func yamlScalar(s string) string {
	if plainScalar.MatchString(s) && !yamlNull.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// roundCells are the cells of the runs of clock asked more (by run key;
// missing: the run's own repeats), sorted by ID: those of the matrix
// file MatrixYAML writes of them.
func roundCells(clock string, runs []rclaims.Run, more map[string]More) []matrix.Cell {
	var cells []matrix.Cell
	for _, r := range runs {
		if r.Clock != clock {
			continue
		}
		c := matrix.Cell{Plugin: r.Plugin, Experiment: r.Experiment, Profile: r.Profile, Repeat: r.Repeat, Clock: clock}
		if m := more[r.Key()]; m.Repeat > 0 {
			c.Repeat, c.AddTo = m.Repeat, m.AddTo
		}
		if len(r.Params) > 0 {
			c.Params = maps.Clone(r.Params)
		}
		if r.SweepKey != "" {
			c.Sweep = map[string][]string{r.SweepKey: slices.Clone(r.Points)}
		}
		c.ID = matrix.CellID(c)
		cells = append(cells, c)
	}
	slices.SortFunc(cells, func(a, b matrix.Cell) int { return strings.Compare(a.ID, b.ID) })
	return cells
}

// roundDir is where round n's matrix of clock, of cells data (their
// JSON), keeps its state and logs: Out/rounds/N-CLOCK-HASH, so that
// another plan of a round (the evidence changed) never resumes the wrong
// one.
func (p *ReproducePlan) roundDir(n int, clock string, data []byte) string {
	sum := sha256.Sum256(data)
	return filepath.Join(p.Out, "rounds", fmt.Sprintf("%d-%s-%s", n, strings.ReplaceAll(clock, ":", ""), hex.EncodeToString(sum[:4])))
}

// Store is where every run of the plan goes.
func (p *ReproducePlan) Store() string { return results.StoreDir(p.Out) }

// matrixPlan is round n's matrix of the runs of clock asked more,
// checked (nil: no run of clock).
func (p *ReproducePlan) matrixPlan(n int, clock string, runs []rclaims.Run, more map[string]More) (*MatrixPlan, error) {
	cells := roundCells(clock, runs, more)
	if len(cells) == 0 {
		return nil, nil
	}
	data, err := json.Marshal(cells)
	if err != nil {
		return nil, err
	}
	spec := &matrix.Spec{Name: fmt.Sprintf("reproduce-round-%d", n), Clock: clock}
	return newMatrixPlan(MatrixRequest{File: "reproduce round " + strconv.Itoa(n), Data: data, Out: p.roundDir(n, clock, data),
		Parallel: p.parallel(clock), ProfileFiles: p.ProfileFiles, Command: p.Command, Roots: p.Roots}, spec, cells, p.Store(), p.checkCell)
}

// checkCell plans a cell's run, checking only (NewPlan), once: a cell
// planned before (when the plan was checked, or in an earlier round)
// keeps its plan.
func (p *ReproducePlan) checkCell(r Request) (*Plan, error) {
	k := cellKey(r)
	if plan, ok := p.plans[k]; ok {
		return plan, nil
	}
	newPlan := NewPlan
	if p.newPlan != nil {
		newPlan = p.newPlan
	}
	plan, err := newPlan(r)
	if err != nil {
		return nil, err
	}
	if p.plans == nil {
		p.plans = map[string]*Plan{}
	}
	p.plans[k] = plan
	return plan, nil
}

// cellKey is what makes a cell's run the one it is.
func cellKey(r Request) string {
	k, _ := json.Marshal(struct {
		Plugin, Experiment, Clock string
		Profiles                  []string
		Params                    map[string]string
		Sweep                     []results.SweepAxis
		Repeat                    int
		AddTo                     string
	}{r.Plugin, r.Experiment, r.Clock, r.Profiles, r.Params, r.Sweep, r.Repeat, r.AddTo})
	return string(k)
}

// Round is one round's outcome.
type Round struct {
	N int
	// Runs are the runs this round made, with the repeats each had
	// (by run key; missing: the plan's) and the stored run each added
	// them to (AddTo: none, a run of its own).
	Runs    []rclaims.Run
	Repeats map[string]int
	AddTo   map[string]string `json:",omitempty"`
	// Decided are the claims decided after it (of those still open
	// before it), Open those still undecided.
	Decided, Open []string
	// Cells are the round's matrix cells; Failed those whose run failed,
	// Unfinished those interrupted or never started.
	Cells, Failed, Unfinished int
	Elapsed                   time.Duration
}

// RoundStarted: a round's runs are about to start.
type RoundStarted struct {
	// Kept are the planned runs the store already holds; Added the
	// round's runs that add repeats to a stored run.
	N, Runs, Kept, Added int
	Claims               []string
	Estimate             time.Duration
}

// RoundDone: a round's runs ended and the claims were judged.
type RoundDone struct{ Round Round }

// ReproducePlanned: the plan, its estimate and Kept from the store, is
// about to run.
type ReproducePlanned struct{ Plan *ReproducePlan }

func (RoundStarted) event()     {}
func (RoundDone) event()        {}
func (ReproducePlanned) event() {}

func (e ReproducePlanned) String() string {
	p := e.Plan
	return fmt.Sprintf("%d claims, %d runs; estimate %s for the first round; budget %s", len(p.Claims), len(p.Runs), FormatEstimate(p.Estimate), p.Budget)
}

func (e RoundStarted) String() string {
	what := "every selected claim"
	if e.N > 1 {
		what = "still open: " + strings.Join(e.Claims, ", ")
	}
	kept := ""
	if e.Kept > 0 {
		kept = fmt.Sprintf("; %d already in the results, kept", e.Kept)
	}
	if e.Runs == 0 {
		return fmt.Sprintf("round %d: nothing to run%s", e.N, kept)
	}
	if e.Added > 0 {
		what += fmt.Sprintf("; %d of them add repeats to a stored run", e.Added)
	}
	return fmt.Sprintf("round %d: %d runs (%s), %s%s", e.N, e.Runs, what, FormatEstimate(e.Estimate), kept)
}

func (e RoundDone) String() string {
	r := e.Round
	s := fmt.Sprintf("round %d done in %s: %d cells (%d failed", r.N, r.Elapsed.Round(time.Second), r.Cells, r.Failed)
	if r.Unfinished > 0 {
		s += fmt.Sprintf(", %d unfinished", r.Unfinished)
	}
	s += fmt.Sprintf("); decided %d", len(r.Decided))
	if len(r.Decided) > 0 {
		s += " (" + strings.Join(r.Decided, ", ") + ")"
	}
	if len(r.Open) > 0 {
		s += "; still open: " + strings.Join(r.Open, ", ")
	}
	return s
}

// Reproduced is a reproduce run's outcome.
type Reproduced struct {
	Rounds   []Round
	Statuses []rclaims.ClaimStatus
	// Stopped are the claims still open when the budget ran out (with
	// the time the next round needed), Capped those at
	// MaxAdaptiveRepeats or MaxRounds.
	Stopped, Capped []string
	NextRound       time.Duration
	Interrupted     bool
	Elapsed         time.Duration
	// Plan is what ran. Report is the report page written (ReportErr:
	// why none was); Warnings are the plugins whose description does
	// not read and write-ups declared twice, Skipped the result files
	// that do not load (the page names them too).
	Plan              *ReproducePlan `json:"-"`
	Report            string         `json:"-"`
	ReportErr         error          `json:"-"`
	Warnings, Skipped []error        `json:"-"`
}

// Run runs the plan's rounds (see above), then judges the claims and
// writes the report (Out/report) from the same read of the store. It
// returns when every claim is decided, the caps or the budget are reached
// or ctx ends; what finished is kept either way.
func (p *ReproducePlan) Run(ctx context.Context, opts MatrixOptions) (*Reproduced, error) {
	t0 := time.Now()
	// One writer per --out: a second would run the same cells at once.
	release, err := results.LockDir(p.Out, commandText(p.Command, "lab reproduce"))
	if err != nil {
		return nil, err
	}
	defer release()
	if opts.Cost == nil {
		opts.Cost = p.Estimates.Cell
	}
	ctx, cancel := context.WithDeadlineCause(ctx, t0.Add(p.Budget), BudgetEnded{Budget: p.Budget})
	defer cancel()
	out := &Reproduced{Plan: p}
	var more map[string]More
	// A run the store already holds (an earlier lab reproduce into the
	// same directory, of these claims or others) is not run again.
	store, skipped := p.readStore()
	todo := p.hold(store)
	kept := p.Kept
	opts.emit(ReproducePlanned{Plan: p})
	sts := p.judge(store)
	open := p.open(sts)
	if len(todo) == 0 {
		opts.emit(RoundStarted{N: 1, Kept: kept, Claims: open})
	}
	for n := 1; ; n++ {
		if len(todo) == 0 {
			break
		}
		est := p.estimate(todo, more)
		if n > 1 && time.Since(t0)+est > p.Budget {
			out.Stopped, out.NextRound = open, est
			break
		}
		added := 0
		for _, m := range more {
			if m.AddTo != "" {
				added++
			}
		}
		opts.emit(RoundStarted{N: n, Runs: len(todo), Kept: kept, Added: added, Claims: open, Estimate: est})
		kept = 0
		round := Round{N: n, Runs: todo, Repeats: map[string]int{}}
		for k, m := range more {
			round.Repeats[k] = m.Repeat
			if m.AddTo != "" {
				if round.AddTo == nil {
					round.AddTo = map[string]string{}
				}
				round.AddTo[k] = m.AddTo
			}
		}
		rt := time.Now()
		for _, clock := range p.Clocks() {
			mp, err := p.matrixPlan(n, clock, todo, more)
			if err != nil {
				return out, err
			}
			if mp == nil {
				continue
			}
			m, err := mp.Run(ctx, opts)
			if err != nil {
				return out, err
			}
			for _, c := range m.State.Cells {
				round.Cells++
				switch c.Status {
				case results.StatusOK, results.StatusExpectedCrash:
				case results.StatusFailed:
					round.Failed++
				default: // interrupted, or never started
					round.Unfinished++
				}
			}
			if ctx.Err() != nil {
				break
			}
		}
		round.Elapsed = time.Since(rt)
		store, skipped = p.readStore()
		sts = p.judge(store)
		now := p.open(sts)
		for _, id := range open {
			if !slices.Contains(now, id) {
				round.Decided = append(round.Decided, id)
			}
		}
		round.Open, open = now, now
		out.Rounds = append(out.Rounds, round)
		opts.emit(RoundDone{Round: round})
		if ctx.Err() != nil {
			break
		}
		if n == MaxRounds {
			out.Capped = open
			break
		}
		var capped []string
		todo, more, capped = p.nextRound(sts, open, store)
		out.Capped = append(out.Capped, capped...)
	}
	out.Statuses = sts
	out.Elapsed = time.Since(t0)
	if ctx.Err() != nil {
		out.Interrupted = true
		if time.Since(t0) >= p.Budget {
			out.Stopped = p.open(out.Statuses)
		}
	}
	// The report, from the read the statuses are judged from.
	in, warnings, skipped := reportFrom(p.reportRequest(), store, skipped)
	out.Warnings, out.Skipped = warnings, skipped
	out.Report, out.ReportErr = WriteReportPage(in, filepath.Join(p.Out, "report"))
	return out, nil
}

// notYetRun are the plan's runs store holds no finished run of, and
// how many it holds.
func (p *ReproducePlan) notYetRun(store []*results.Result) ([]rclaims.Run, int) {
	var todo []rclaims.Run
	for _, r := range p.Runs {
		if !slices.ContainsFunc(store, func(res *results.Result) bool { return holds(res, r, p.versions[r.Plugin]) }) {
			todo = append(todo, r)
		}
	}
	return todo, len(p.Runs) - len(todo)
}

// holds says whether res is a finished run of r: of its cell
// (holdsCell), with at least r's repeats.
func holds(res *results.Result, r rclaims.Run, version string) bool {
	if !holdsCell(res, r, version) {
		return false
	}
	n, err := strconv.Atoi(res.Parameters[results.RepeatParam])
	return err == nil && n >= r.Repeat
}

// holdsCell says whether res is a finished run of r's cell: its plugin
// (at version, if known), experiment, profile, clock and parameters,
// and every point of r.
func holdsCell(res *results.Result, r rclaims.Run, version string) bool {
	if res.Plugin != r.Plugin || res.Experiment != r.Experiment || results.ProfileName(res.Machine) != r.Profile ||
		res.Machine.Clock != r.Clock || version != "" && res.PluginVersion != version ||
		res.Outcome.Status != results.StatusOK && res.Outcome.Status != results.StatusExpectedCrash {
		return false
	}
	for k, v := range r.Params {
		if res.Parameters[k] != v {
			return false
		}
	}
	// The build is a cell's even where r leaves it at the default: a
	// run of another build is a stratum of its own.
	if results.BuildOf(res.Parameters) != results.BuildOf(r.Params) {
		return false
	}
	if r.SweepKey == "" {
		return true
	}
	if res.Sweep == nil {
		return false
	}
	for _, a := range res.Sweep.Axes {
		if a.Key == r.SweepKey {
			for _, pt := range r.Points {
				if !slices.Contains(a.Values, pt) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// judge is the selected claims' statuses from store, the plan's: the
// latest run of each cell decides.
func (p *ReproducePlan) judge(store []*results.Result) []rclaims.ClaimStatus {
	return rclaims.JudgeStore(p.Claims, store, p.Profiles, rclaims.Options{})
}

// open are the claims some run decides that are still undecided.
func (p *ReproducePlan) open(sts []rclaims.ClaimStatus) []string {
	planned := map[string]bool{}
	for _, r := range p.Runs {
		for _, id := range r.Claims {
			planned[id] = true
		}
	}
	var ids []string
	for _, s := range sts {
		if planned[s.Claim.ID] && !results.Decided(s.Verdict) {
			ids = append(ids, s.Claim.ID)
		}
	}
	return ids
}

// nextRound are the runs of the open claims with what each is asked
// more: the repeats the judge says the rule needs ("repeats needed"),
// else twice as many as store holds of the run's cell, at most
// MaxAdaptiveRepeats in all. A run store holds adds the missing repeats
// to it (More.AddTo), as the judge pools them (stored); one it does
// not hold runs them all. A claim whose runs cannot have more is
// capped.
func (p *ReproducePlan) nextRound(sts []rclaims.ClaimStatus, open []string, store []*results.Result) ([]rclaims.Run, map[string]More, []string) {
	more := map[string]More{}
	var todo []rclaims.Run
	var capped []string
	for _, id := range open {
		need := 0
		for _, s := range sts {
			if s.Claim.ID == id {
				need = rclaims.RepeatsNeeded(s.Judged)
			}
		}
		grew := false
		for _, r := range p.Runs {
			if !slices.Contains(r.Claims, id) {
				continue
			}
			if _, asked := more[r.Key()]; asked {
				grew = true
				continue
			}
			last, have := p.stored(store, r)
			if last == nil {
				have = r.Repeat
			}
			want := min(max(need, 2*have), MaxAdaptiveRepeats)
			if want <= have {
				continue
			}
			grew = true
			if last == nil {
				more[r.Key()] = More{Repeat: want}
			} else {
				more[r.Key()] = More{Repeat: want - have, AddTo: last.ID}
			}
			todo = append(todo, r)
		}
		if !grew {
			capped = append(capped, id)
		}
	}
	return todo, more, capped
}

// stored is the latest finished run of r's cell in store (nil: none),
// and the repeats the judge pools of it: its own and those of the runs
// it adds to (Result.AddTo), each an earlier run of the cell.
func (p *ReproducePlan) stored(store []*results.Result, r rclaims.Run) (*results.Result, int) {
	cell := map[string]*results.Result{}
	var last *results.Result
	for _, res := range store {
		if !holdsCell(res, r, p.versions[r.Plugin]) {
			continue
		}
		cell[res.ID] = res
		if last == nil || results.Later(res, last) {
			last = res
		}
	}
	have := 0
	for res := last; res != nil; {
		n, _ := strconv.Atoi(res.Parameters[results.RepeatParam])
		have += n
		prev := cell[res.AddTo]
		if prev == nil || !results.Later(res, prev) {
			break
		}
		res = prev
	}
	return last, have
}

// reportRequest is the report over the plan's store, its claims judged
// as the rounds and the claims table judge them (judge): the latest run
// of each cell, with the plan's profiles.
func (p *ReproducePlan) reportRequest() ReportRequest {
	return ReportRequest{Store: p.Store(), Plugins: p.Roots.Plugins, Generated: time.Now(),
		Version: p.Version, ProfileDir: p.Roots.Profiles, ProfileFiles: p.ProfileFiles}
}
