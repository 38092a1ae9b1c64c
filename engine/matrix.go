package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"lab/images"
	"lab/results"
	"lab/results/matrix"
)

// DefaultParallel is how many cells (VMs) a matrix runs at once unless
// told, by the matrix's clock. Measured on a 2-core host
// (BenchmarkMatrixParallel, 6 forktime cells): under icount:0 two VMs
// gave 1.6x the cells per minute with every cell's fork+wait median
// unchanged (165.2 against 165.4 µs), and three nothing more; under the
// host clock two gave 1.8x the cells per minute but made the cells'
// fork+wait 4-23% slower and its spread across cells 1.7-3x, which is
// the emulation's contention and not the machine's, so one.
func DefaultParallel(clock string) int {
	if strings.HasPrefix(clock, images.ClockICount) {
		return 2
	}
	return 1
}

// MatrixRequest is a matrix to run: `lab matrix`'s arguments as values.
type MatrixRequest struct {
	// File names the matrix file in messages; Data is what it holds
	// (a matrix made of cells, not read from a file: the cells as
	// JSON). The matrix's state records Data's hash.
	File string
	Data []byte
	// Out is the output directory: results, logs, state.
	Out string
	// Shard is "I/N" to run one shard, "" for all the cells.
	Shard string
	// Parallel is how many cells at once; 0: the file's, else
	// DefaultParallel.
	Parallel     int
	ProfileFiles []string
	// Command is the command line running the matrix; its first word
	// begins each cell's recorded command.
	Command []string
	// Roots are the directories the cells' runs use.
	Roots Roots
}

// MatrixPlan is a matrix checked before anything boots: every cell as a
// lab run would check it.
type MatrixPlan struct {
	MatrixRequest
	Spec *matrix.Spec
	// All are the matrix's cells, Cells this shard's.
	All, Cells []matrix.Cell
	Shard      matrix.Shard
	Parallel   int
	// Store is where the cells' results go (Out/results).
	Store string
	// plans are the plans the check made of the cells, by ID: each
	// runs its cell (runPlan).
	plans map[string]*Plan
}

// CellRequest is the run a matrix cell is, with its results in store.
func CellRequest(c matrix.Cell, store string, profileFiles []string, command []string, roots Roots) (Request, error) {
	var sweeps []string
	for _, k := range slices.Sorted(maps.Keys(c.Sweep)) {
		sweeps = append(sweeps, k+"="+strings.Join(c.Sweep[k], ","))
	}
	axes, err := ParseSweeps(sweeps)
	if err != nil {
		return Request{}, err
	}
	params := maps.Clone(c.Params)
	if params == nil {
		params = map[string]string{}
	}
	return Request{Plugin: c.Plugin, Profiles: []string{c.Profile}, Experiment: c.Experiment, Params: params, Sweep: axes,
		Repeat: c.Repeat, ChooseRepeat: c.Repeat == 0, Clock: c.Clock, Out: store, ProfileFiles: profileFiles, Timeout: time.Hour, Command: command, Roots: roots, AddTo: c.AddTo}, nil
}

// PlanMatrix parses and checks a matrix: its file, the shard, each of the
// shard's cells (as NewPlan), the parallelism.
func PlanMatrix(req MatrixRequest) (*MatrixPlan, error) {
	spec, all, err := matrix.Parse(req.Data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.File, err)
	}
	return newMatrixPlan(req, spec, all, results.StoreDir(req.Out), NewPlan)
}

// newMatrixPlan checks the matrix of cells all (spec's, which gives its
// name, clock and parallelism), its results in store: the shard, each of
// the shard's cells planned by newPlan (NewPlan, checking only) with its
// plan kept to run the cell, the parallelism.
func newMatrixPlan(req MatrixRequest, spec *matrix.Spec, all []matrix.Cell, store string, newPlan func(Request) (*Plan, error)) (*MatrixPlan, error) {
	m := &MatrixPlan{MatrixRequest: req, Spec: spec, All: all, Shard: matrix.Shard{I: 1, N: 1}, Store: store, plans: map[string]*Plan{}}
	var err error
	if req.Shard != "" {
		if m.Shard, err = matrix.ParseShard(req.Shard); err != nil {
			return nil, err
		}
	}
	m.Cells = m.Shard.Of(all)
	for _, c := range m.Cells {
		r, err := CellRequest(c, m.Store, req.ProfileFiles, nil, req.Roots)
		r.CheckOnly = true
		var plan *Plan
		if err == nil {
			plan, err = newPlan(r)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: cell %s: %w", req.File, c.ID, err)
		}
		m.plans[c.ID] = plan
	}
	m.Parallel = req.Parallel
	if m.Parallel == 0 {
		m.Parallel = spec.Parallel
	}
	if m.Parallel == 0 {
		m.Parallel = DefaultParallel(spec.Clock)
	}
	if m.Parallel < 1 || m.Parallel > 16 {
		return nil, fmt.Errorf("--parallel %d: want 1..16 (2 TCG guests per 2 host cores is the measured limit here; see the README)", m.Parallel)
	}
	return m, nil
}

// runPlan is the plan that runs cell c as req: the one the matrix's
// check made (Plan.again), else a new one.
func (p *MatrixPlan) runPlan(c matrix.Cell, req Request) (*Plan, error) {
	if plan := p.plans[c.ID]; plan != nil {
		return plan.again(req.Command)
	}
	return NewPlan(req)
}

// MatrixOptions are what a matrix run is given besides its plan.
type MatrixOptions struct {
	// Options hold the matrix's own observer (MatrixStarted, CellRetry,
	// CellDone, Warning: called one at a time) and what every cell's run
	// is given.
	Options
	// CellObserver makes the observer of a cell's run events, which
	// goes to the cell's log w (nil: the events are dropped).
	CellObserver func(w io.Writer) func(Event)
	// Cost, if set, is a cell's expected time: cells sharing the cores
	// start longest first (longestFirst).
	Cost func(matrix.Cell) time.Duration
	// runCell, in tests, replaces planning and running a cell.
	runCell func(ctx context.Context, req Request, opts Options) (*Run, error)
}

// Matrix is a matrix run's outcome: the state saved in Out and the
// cells' results by ID (those run now and those kept from before).
type Matrix struct {
	State *matrix.State
	Runs  map[string]*results.Result
}

// MatrixStarted: the matrix's cells are about to run.
type MatrixStarted struct {
	Name               string
	Cells, All, Done   int
	Shard              string // "" unless sharded
	Todo, Parallel     int
	StateFile, Results string
}

// Warming: profile under clock has no booted snapshot yet; one VM of it
// boots alone to make it before the cells share the cores.
type Warming struct{ Profile, Clock string }

// Warmed: the snapshot Warming made, in Seconds.
type Warmed struct {
	Profile, Clock string
	Seconds        float64
}

// CellRetry: a cell whose VM died runs once more.
type CellRetry struct{ Cell, Why string }

// CellDone: a cell finished, the N-th of Todo.
type CellDone struct {
	N, Todo      int
	Cell         matrix.CellState
	Elapsed, ETA time.Duration
}

func (MatrixStarted) event() {}
func (CellRetry) event()     {}
func (Warming) event()       {}
func (Warmed) event()        {}

func (e Warming) String() string {
	return fmt.Sprintf("%s (%s) has no booted snapshot yet: booting it alone first, so that its cold boot does not share the cores", e.Profile, e.Clock)
}

func (e Warmed) String() string {
	return fmt.Sprintf("%s (%s): snapshot made in %.1fs; its cells restore it", e.Profile, e.Clock, e.Seconds)
}
func (CellDone) event() {}

func (e MatrixStarted) String() string {
	name := e.Name
	if name == "" {
		name = "-"
	}
	what := fmt.Sprintf("matrix %s: %d cells", name, e.Cells)
	if e.Shard != "" {
		what += fmt.Sprintf(" (shard %s of %d cells)", e.Shard, e.All)
	}
	if e.Done > 0 {
		what += fmt.Sprintf(", %d already done (resumed from %s)", e.Done, e.StateFile)
	}
	return fmt.Sprintf("%s; running %d, %d at a time; results in %s", what, e.Todo, e.Parallel, e.Results)
}

func (e CellRetry) String() string {
	return fmt.Sprintf("note: cell %s: its VM died (%s); running it once more", e.Cell, e.Why)
}

func (e CellDone) String() string {
	cs := e.Cell
	eta := ""
	if e.N < e.Todo {
		eta = fmt.Sprintf(", ETA %s", e.ETA.Round(time.Second))
	}
	why := ""
	if cs.Status != results.StatusOK && cs.Status != results.StatusExpectedCrash && cs.Error != "" {
		why = ": " + cs.Error
	}
	return fmt.Sprintf("[%d/%d] %s: %s in %.1fs%s (elapsed %s%s)", e.N, e.Todo, cs.ID, cs.Status, cs.Seconds, why,
		e.Elapsed.Round(time.Second), eta)
}

// matrixRun is one matrix run under way.
type matrixRun struct {
	plan *MatrixPlan
	opts MatrixOptions
	mu   sync.Mutex
	out  *Matrix
}

// emit reports a matrix event, one at a time.
func (m *matrixRun) emit(e Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opts.emit(e)
}

// Run runs the matrix's pending cells: each a run on a throwaway VM, in
// this process, Parallel at a time (each profile and clock's cold boot
// alone first, see warm), its events in its log under Out/logs, its
// result in Out/results; the state in Out is saved after each cell, so
// that running the same matrix again (after Ctrl-C, say) runs only the
// cells not done. A cell whose VM died is run once more. The error is for
// a matrix that could not start (Out holds another one, or cannot be
// written).
func (p *MatrixPlan) Run(ctx context.Context, opts MatrixOptions) (*Matrix, error) {
	// One writer per --out: a second would run the same cells at once.
	release, err := results.LockDir(p.Out, commandText(p.Command, "lab matrix"))
	if err != nil {
		return nil, err
	}
	defer release()
	st := &matrix.State{Name: p.Spec.Name, SpecSHA256: matrix.SpecHash(p.Data), All: len(p.All)}
	for _, c := range p.All {
		st.AllIDs = append(st.AllIDs, c.ID)
	}
	if p.MatrixRequest.Shard != "" {
		st.Shard = p.Shard.String()
	}
	old, ok, err := matrix.LoadState(p.Out)
	if err != nil {
		return nil, err
	}
	done := map[string]matrix.CellState{}
	if ok {
		if old.SpecSHA256 != st.SpecSHA256 || old.Shard != st.Shard {
			return nil, fmt.Errorf("%s holds another matrix run (%s, shard %q, sha256 %.12s); to resume it run its own file, else choose another --out or delete %s",
				p.Out, old.Name, old.Shard, old.SpecSHA256, filepath.Join(p.Out, matrix.StateFile))
		}
		for _, c := range old.Cells {
			if c.Done() {
				done[c.ID] = c
			}
		}
	}
	for _, c := range p.Cells {
		cs := matrix.CellState{Cell: c, Status: "pending"}
		if d, ok := done[c.ID]; ok {
			cs = d
		}
		st.Cells = append(st.Cells, cs)
	}
	for _, d := range []string{p.Store, filepath.Join(p.Out, "logs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("matrix output: %w; choose another --out", err)
		}
	}
	// Every boot of the matrix preloads the same plugins: listed (and
	// hashed) once.
	if opts.preloads == nil {
		opts.preloads = &preloads{}
	}
	m := &matrixRun{plan: p, opts: opts, out: &Matrix{State: st, Runs: map[string]*results.Result{}}}
	if err := m.save(); err != nil {
		return nil, err
	}
	todo := 0
	for _, c := range st.Cells {
		if !c.Done() {
			todo++
			continue
		}
		if r, err := results.Load(filepath.Join(p.Store, c.Result+".json")); err == nil {
			m.out.Runs[c.Result] = r
		}
	}
	ev := MatrixStarted{Name: p.Spec.Name, Cells: len(p.Cells), All: len(p.All), Todo: todo, Parallel: p.Parallel,
		StateFile: filepath.Join(p.Out, matrix.StateFile), Results: p.Store}
	if p.MatrixRequest.Shard != "" {
		ev.Shard = p.Shard.String()
	}
	if len(done) > 0 {
		ev.Done = len(p.Cells) - todo
	}
	m.emit(ev)
	if err := BuildKernels(ctx, p.Roots, pendingProfiles(st.Cells), p.ProfileFiles, m.emit); err != nil {
		return nil, err
	}
	m.runAll(ctx, todo)
	return m.out, nil
}

func (m *matrixRun) save() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return matrix.SaveState(m.plan.Out, m.out.State)
}

// With more than one VM at a time, a profile's first boot would be cold
// (it makes the booted snapshot) beside other guests, and two TCG guests
// on two cores can break a cold guest's timer calibration. So before the
// cells, each profile and clock with no snapshot yet boots alone, once,
// to make it (warm); then every cell restores it, already calibrated, and
// the cells share the cores, longest first (longestFirst): a long cell
// started last would run on alone at the end.

// pending are the indexes of the cells not done, in order.
func pending(cells []matrix.CellState) []int {
	var out []int
	for i, c := range cells {
		if !c.Done() {
			out = append(out, i)
		}
	}
	return out
}

// longestFirst orders the cells idx by cost, the longest first, keeping
// the file's order among cells of one cost; with no cost, the file's
// order.
func longestFirst(cells []matrix.CellState, idx []int, cost func(matrix.Cell) time.Duration) []int {
	out := slices.Clone(idx)
	if cost == nil {
		return out
	}
	d := map[int]time.Duration{} // each cell estimated once, not at every comparison
	for _, i := range idx {
		d[i] = cost(cells[i].Cell)
	}
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(d[b], d[a]) })
	return out
}

// warm boots, alone and one after another, a throwaway VM of each
// profile and clock of the cells idx whose boot would be cold, so that
// its booted snapshot is made before the cells share the cores. A boot
// that fails is a warning: the cells then boot cold themselves and fail,
// if they do, with their own reasons.
func (m *matrixRun) warm(ctx context.Context, idx []int) {
	vms := m.opts.vms()
	seen := map[string]bool{}
	for _, i := range idx {
		c := m.out.State.Cells[i]
		plan := m.plan.plans[c.ID]
		if plan == nil || len(plan.Profiles) == 0 || seen[c.Profile+"\x00"+c.Clock] {
			continue
		}
		seen[c.Profile+"\x00"+c.Clock] = true
		p, clock := plan.Profiles[0], plan.Clocks[0]
		if ctx.Err() != nil || vms.Snapshotted(ctx, plan, p, clock, m.opts.Options) {
			continue
		}
		m.emit(Warming{Profile: p.Name, Clock: clock.String()})
		// The boot's own events are the cells' business; its warnings
		// are the matrix's.
		quiet := m.opts.Options
		quiet.Observe = func(e Event) {
			if w, ok := e.(Warning); ok {
				m.emit(w)
			}
		}
		t := time.Now()
		mach, err := vms.Boot(ctx, plan, p, clock, quiet)
		if err == nil {
			dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err = mach.Discard(dctx)
			cancel()
		}
		if err != nil {
			m.emit(Warning{Text: fmt.Sprintf("booting %s (%s) alone to make its snapshot: %v; its cells boot it themselves", p.Name, clock, err)})
			continue
		}
		m.emit(Warmed{Profile: p.Name, Clock: clock.String(), Seconds: time.Since(t).Seconds()})
	}
}

// runAll runs the pending cells, Parallel at a time (after warm, longest
// first), reporting each as it ends with an ETA.
func (m *matrixRun) runAll(ctx context.Context, todo int) {
	t0 := time.Now()
	finished := 0
	order := pending(m.out.State.Cells)
	if m.plan.Parallel > 1 {
		if m.opts.runCell == nil {
			m.warm(ctx, order)
		}
		order = longestFirst(m.out.State.Cells, order, m.opts.Cost)
	}
	m.runSome(ctx, m.plan.Parallel, order, todo, t0, &finished)
}

func (m *matrixRun) runSome(ctx context.Context, parallel int, cells []int, todo int, t0 time.Time, finishedp *int) {
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	// What the ETA needs: the estimates of the cells left and of those
	// done, and how long those took.
	var leftEst, doneEst, doneTook time.Duration
	est := func(int) time.Duration { return 0 }
	if m.opts.Cost != nil {
		est = func(i int) time.Duration { return m.opts.Cost(m.out.State.Cells[i].Cell) }
	}
	ests := map[int]time.Duration{}
	for _, i := range cells {
		ests[i] = est(i)
		leftEst += ests[i]
	}
	for _, i := range cells {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			m.mu.Lock()
			cs := m.out.State.Cells[i]
			m.mu.Unlock()
			cs = m.runCell(ctx, cs)
			m.mu.Lock()
			m.out.State.Cells[i] = cs
			*finishedp++
			n := *finishedp
			leftEst -= ests[i]
			doneEst += ests[i]
			doneTook += time.Duration(cs.Seconds * float64(time.Second))
			eta := matrixETA(time.Since(t0), n, todo, parallel, doneEst, doneTook, leftEst)
			m.mu.Unlock()
			if err := m.save(); err != nil {
				m.emit(Warning{Text: fmt.Sprintf("saving the matrix state: %v", err)})
			}
			m.emit(CellDone{N: n, Todo: todo, Cell: cs, Elapsed: time.Since(t0), ETA: eta})
		}(i)
	}
	wg.Wait()
}

// matrixETA is how long the cells left of todo will take, n done in
// elapsed, parallel at a time: their estimates (leftEst) as the done
// cells' held (doneTook against doneEst); with no estimates, the done
// cells' mean a cell. Cells run longest first, so the mean alone
// overstates what is left (the first of lab reproduce all's 36 icount
// cells, 17m51s, made it ten hours).
func matrixETA(elapsed time.Duration, n, todo, parallel int, doneEst, doneTook, leftEst time.Duration) time.Duration {
	if doneEst <= 0 || leftEst <= 0 {
		return elapsed / time.Duration(n) * time.Duration(todo-n)
	}
	return time.Duration(float64(leftEst) * (float64(doneTook) / float64(doneEst)) / float64(max(parallel, 1)))
}

// runCell runs one cell; a cell whose VM died (no result, or the guest
// died mid-run) is run once more.
func (m *matrixRun) runCell(ctx context.Context, cs matrix.CellState) matrix.CellState {
	for attempt := 1; attempt <= 2; attempt++ {
		cs.Attempts++
		t := time.Now()
		r, status, errText, err := m.cell(ctx, cs.Cell, attempt)
		cs.Seconds = time.Since(t).Seconds()
		cs.Status, cs.Error = status, errText
		cs.Result = ""
		if r != nil {
			cs.Result = r.ID
			m.mu.Lock()
			m.out.Runs[r.ID] = r
			m.mu.Unlock()
		}
		vmDied := r == nil || errors.Is(err, GuestDied)
		if ctx.Err() != nil || status == results.StatusInterrupted || !vmDied || attempt == 2 {
			break
		}
		cs.Retried = errText
		m.emit(CellRetry{Cell: cs.ID, Why: errText})
	}
	return cs
}

// cell runs the cell once, its events into its log, and returns its
// result (nil if the run did not start), status and reason, and the
// run's error.
func (m *matrixRun) cell(ctx context.Context, c matrix.Cell, attempt int) (*results.Result, string, string, error) {
	p := m.plan
	args := append(c.Args(), "--out", p.Store)
	for _, pf := range p.ProfileFiles {
		args = append(args, "--profile-file", pf)
	}
	argv0 := "lab"
	if len(p.Command) > 0 {
		argv0 = p.Command[0]
	}
	logPath := filepath.Join(p.Out, "logs", strings.NewReplacer("/", "_", "=", "-", ",", "_", ";", "_", ":", "-").Replace(c.ID)+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, results.StatusFailed, err.Error(), err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "== attempt %d at %s: lab %s\n", attempt, time.Now().UTC().Format(time.RFC3339), strings.Join(args, " "))
	opts := m.opts.Options
	opts.Observe = nil
	if m.opts.CellObserver != nil {
		opts.Observe = m.opts.CellObserver(logf)
	}
	req, err := CellRequest(c, p.Store, p.ProfileFiles, append([]string{argv0}, args...), p.Roots)
	var run *Run
	if err == nil {
		if m.opts.runCell != nil {
			run, err = m.opts.runCell(ctx, req, opts)
		} else {
			var plan *Plan
			if plan, err = p.runPlan(c, req); err == nil {
				var out *Outcome
				if out, err = do(ctx, plan, opts); len(out.Runs) > 0 {
					run = out.Runs[0]
				}
			}
		}
	}
	if run == nil {
		fmt.Fprintf(logf, "lab: %v\n", err)
		if ctx.Err() != nil {
			return nil, results.StatusInterrupted, "interrupted before a result was saved", err
		}
		// The cell's summary takes the error's first line; its log has it whole.
		msg, _, _ := strings.Cut(err.Error(), "\n")
		return nil, results.StatusFailed, msg, err
	}
	for _, msg := range []string{run.Plots.Sweep, run.Plots.Chart, run.Plots.Table} {
		if msg != "" {
			fmt.Fprintln(logf, msg)
		}
	}
	if err != nil {
		fmt.Fprintf(logf, "lab: %v\n", err)
	}
	if run.SaveErr != nil {
		fmt.Fprintf(logf, "lab: saving the result in %s failed: %v\n", run.Dir, run.SaveErr)
	}
	r := run.Result
	return r, r.Outcome.Status, r.Outcome.Reason, err
}

// commandText is argv as one line, or def when there is none.
func commandText(argv []string, def string) string {
	if len(argv) == 0 {
		return def
	}
	return strings.Join(argv, " ")
}
