package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"lab/results"
	"lab/results/matrix"
)

// defaultParallel is how many cells (VMs) lab matrix runs at once unless
// told, by the matrix's clock. Measured on this 2-core host
// (BenchmarkMatrixParallel, 6 forktime cells): under icount:0 two VMs
// gave 1.6x the cells per minute with every cell's fork+wait median
// unchanged (165.2 against 165.4 µs), and three nothing more; under the
// host clock two gave 1.8x the cells per minute but made the cells'
// fork+wait 4-23% slower and its spread across cells 1.7-3x, which is
// the emulation's contention and not the machine's, so one.
func defaultParallel(clock string) int {
	if strings.HasPrefix(clock, "icount") {
		return 2
	}
	return 1
}

func matrixCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "matrix",
		Usage:     "run every cell of a matrix file (profiles x plugins x experiments x parameters), VMs in parallel, resumable, shardable",
		ArgsUsage: "FILE",
		Description: "A matrix file (YAML) lists cells: each entry is the cross product of its\n" +
			"profiles, experiments and parameter values for one plugin, optionally with a\n" +
			"sweep inside each cell. Every cell is one `lab run PLUGIN --profile P ...` on\n" +
			"a throwaway VM restored from the profile's booted snapshot; --parallel of\n" +
			"them at once. Each cell is checked as lab run would before anything boots.\n\n" +
			"The output directory keeps the results (DIR/results), each cell's log\n" +
			"(DIR/logs), the state (DIR/matrix.json) and JUnit XML (DIR/junit.xml: a cell\n" +
			"is a test case; it fails when its run failed, or when a claim that the\n" +
			"--baseline store's run of the same cell reproduced is not reproduced now).\n" +
			"Run the same command again after an interruption and the finished cells are\n" +
			"kept. A cell whose VM died is retried once.\n\n" +
			"--shard i/n runs every n-th cell (sorted by cell ID) from the i-th: the n\n" +
			"shards partition the matrix, for n machines; `lab results merge` joins them.\n\n" +
			"  name: nightly\n  clock: icount:0\n  repeat: 4\n  cells:\n" +
			"    - plugin: forkbench\n      experiments: [forktime, create]\n      profiles: [celeron-2.4, p4-2.4]\n" +
			"      params: {n: 2000, m: 100000}   # a list makes one cell per value\n" +
			"    - plugin: threadbench\n      experiment: hello\n      profiles: [celeron-2.4]\n      sweep: {count: [5, 50, 500]}\n\n" +
			"Examples:\n   lab matrix examples/nightly.yaml --out nightly\n" +
			"   lab matrix examples/nightly.yaml --shard 2/4 --out shard-2 --baseline last-night/results\n" +
			"   lab matrix examples/nightly.yaml --dry-run",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: "lab-matrix", Usage: "output `DIR`: results, logs, state, junit.xml"},
			&cli.StringFlag{Name: "shard", Usage: "run only shard `I/N` of the matrix"},
			&cli.IntFlag{Name: "parallel", Usage: "cells (VMs) at once (default: the file's parallel, else 2 under an icount clock, 1 under the host clock, whose times two VMs side by side distort)"},
			&cli.StringFlag{Name: "baseline", Usage: "result store `DIR` of an earlier matrix run: a claim it reproduced that a cell does not now fails the cell"},
			&cli.StringFlag{Name: "junit", Usage: "also write the JUnit XML to `FILE`"},
			&cli.BoolFlag{Name: "dry-run", Usage: "check and list the cells, run nothing"},
			profileFileFlag,
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errors.New("lab matrix needs one matrix FILE (see lab matrix --help for its format)")
			}
			return e.runMatrix(c.Context, matrixFlags{file: c.Args().First(), out: c.String("out"), shard: c.String("shard"),
				parallel: c.Int("parallel"), baseline: c.String("baseline"), junit: c.String("junit"), dry: c.Bool("dry-run"),
				json: c.Bool("json"), profileFiles: c.StringSlice("profile-file")})
		},
	}
}

type matrixFlags struct {
	file, out, shard, baseline, junit string
	parallel                          int
	dry, json                         bool
	profileFiles                      []string
}

// matrixRun is one lab matrix invocation.
type matrixRun struct {
	e     *env
	f     matrixFlags
	state *matrix.State
	mu    sync.Mutex
	// runs are the cells' results by ID.
	runs map[string]*results.Result
}

func (e *env) runMatrix(ctx context.Context, f matrixFlags) error {
	data, err := os.ReadFile(f.file)
	if err != nil {
		return fmt.Errorf("matrix file: %w", err)
	}
	spec, all, err := matrix.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", f.file, err)
	}
	shard := matrix.Shard{I: 1, N: 1}
	if f.shard != "" {
		if shard, err = matrix.ParseShard(f.shard); err != nil {
			return err
		}
	}
	mine := shard.Of(all)
	store := matrix.StoreDir(f.out)
	// Every cell as lab run checks it, before anything boots.
	for _, c := range mine {
		if _, err := e.planRun(cellFlags(c, store, f.profileFiles)); err != nil {
			return fmt.Errorf("%s: cell %s: %w", f.file, c.ID, err)
		}
	}
	parallel := f.parallel
	if parallel == 0 {
		parallel = spec.Parallel
	}
	if parallel == 0 {
		parallel = defaultParallel(spec.Clock)
	}
	if parallel < 1 || parallel > 16 {
		return fmt.Errorf("--parallel %d: want 1..16 (2 TCG guests per 2 host cores is the measured limit here; see the README)", parallel)
	}
	if f.dry {
		return writeCells(e.stdout, mine, len(all), shard, f.json)
	}
	st := &matrix.State{Name: spec.Name, SpecSHA256: matrix.SpecHash(data), All: len(all)}
	for _, c := range all {
		st.AllIDs = append(st.AllIDs, c.ID)
	}
	if f.shard != "" {
		st.Shard = shard.String()
	}
	old, ok, err := matrix.LoadState(f.out)
	if err != nil {
		return err
	}
	done := map[string]matrix.CellState{}
	if ok {
		if old.SpecSHA256 != st.SpecSHA256 || old.Shard != st.Shard {
			return fmt.Errorf("%s holds another matrix run (%s, shard %q, sha256 %.12s); to resume it run its own file, else choose another --out or delete %s",
				f.out, old.Name, old.Shard, old.SpecSHA256, filepath.Join(f.out, matrix.StateFile))
		}
		for _, c := range old.Cells {
			if c.Done() {
				done[c.ID] = c
			}
		}
	}
	for _, c := range mine {
		cs := matrix.CellState{Cell: c, Status: "pending"}
		if d, ok := done[c.ID]; ok {
			cs = d
		}
		st.Cells = append(st.Cells, cs)
	}
	for _, d := range []string{store, filepath.Join(f.out, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("matrix output: %w; choose another --out", err)
		}
	}
	m := &matrixRun{e: e, f: f, state: st, runs: map[string]*results.Result{}}
	if err := m.save(); err != nil {
		return err
	}
	for _, c := range st.Cells {
		if c.Done() {
			if r, err := results.Load(filepath.Join(store, c.Result+".json")); err == nil {
				m.runs[c.Result] = r
			}
		}
	}
	todo := 0
	for _, c := range st.Cells {
		if !c.Done() {
			todo++
		}
	}
	what := fmt.Sprintf("matrix %s: %d cells", orDash(spec.Name), len(mine))
	if f.shard != "" {
		what += fmt.Sprintf(" (shard %s of %d cells)", shard, len(all))
	}
	if len(done) > 0 {
		what += fmt.Sprintf(", %d already done (resumed from %s)", len(mine)-todo, filepath.Join(f.out, matrix.StateFile))
	}
	fmt.Fprintf(e.stderr, "%s; running %d, %d at a time; results in %s\n", what, todo, parallel, store)
	m.runAll(ctx, parallel, todo)
	return m.finish(ctx)
}

// cellFlags is the lab run a cell is.
func cellFlags(c matrix.Cell, store string, files []string) runFlags {
	var params, sweeps []string
	for _, k := range slices.Sorted(maps.Keys(c.Params)) {
		params = append(params, k+"="+c.Params[k])
	}
	for _, k := range slices.Sorted(maps.Keys(c.Sweep)) {
		sweeps = append(sweeps, k+"="+strings.Join(c.Sweep[k], ","))
	}
	return runFlags{plugin: c.Plugin, profiles: []string{c.Profile}, experiment: c.Experiment, params: params, sweeps: sweeps,
		repeat: c.Repeat, clock: c.Clock, out: store, files: files, timeout: time.Hour}
}

func (m *matrixRun) save() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return matrix.SaveState(m.f.out, m.state)
}

// pilots splits the pending cells (indexes into cells) into the first of
// each profile and clock, and the rest. With more than one VM at a time
// the pilots run alone first: a configuration's first boot may be cold
// (it makes the booted snapshot), and two TCG guests on two cores can
// break a cold guest's timer calibration; the rest restore the snapshot,
// already calibrated.
func pilots(cells []matrix.CellState) (first, rest []int) {
	seen := map[string]bool{}
	for i, c := range cells {
		if c.Done() {
			continue
		}
		k := c.Profile + "\x00" + c.Clock
		if seen[k] {
			rest = append(rest, i)
			continue
		}
		seen[k] = true
		first = append(first, i)
	}
	return first, rest
}

// runAll runs the pending cells, parallel at a time (each profile and
// clock's first cell alone, see pilots), with a progress line per cell
// and an ETA.
func (m *matrixRun) runAll(ctx context.Context, parallel, todo int) {
	t0 := time.Now()
	finished := 0
	order := []int{}
	first, rest := pilots(m.state.Cells)
	if parallel > 1 {
		m.runSome(ctx, 1, first, todo, t0, &finished)
		order = rest
	} else {
		order = append(first, rest...)
		slices.Sort(order)
	}
	m.runSome(ctx, parallel, order, todo, t0, &finished)
}

func (m *matrixRun) runSome(ctx context.Context, parallel int, cells []int, todo int, t0 time.Time, finishedp *int) {
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
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
			cs := m.runCell(ctx, m.state.Cells[i])
			m.mu.Lock()
			m.state.Cells[i] = cs
			*finishedp++
			n := *finishedp
			m.mu.Unlock()
			if err := m.save(); err != nil {
				fmt.Fprintf(m.e.stderr, "warning: saving the matrix state: %v\n", err)
			}
			elapsed := time.Since(t0)
			eta := ""
			if n < todo {
				eta = fmt.Sprintf(", ETA %s", (elapsed / time.Duration(n) * time.Duration(todo-n)).Round(time.Second))
			}
			why := ""
			if cs.Status != "ok" && cs.Status != "expected-crash" && cs.Error != "" {
				why = ": " + cs.Error
			}
			fmt.Fprintf(m.e.stderr, "[%d/%d] %s: %s in %.1fs%s (elapsed %s%s)\n", n, todo, cs.ID, cs.Status, cs.Seconds, why,
				elapsed.Round(time.Second), eta)
		}(i)
	}
	wg.Wait()
}

// runCell runs one cell as a child lab run; a cell whose VM died (no
// result, or the guest died mid-run) is run once more.
func (m *matrixRun) runCell(ctx context.Context, cs matrix.CellState) matrix.CellState {
	for attempt := 1; attempt <= 2; attempt++ {
		cs.Attempts++
		t := time.Now()
		r, status, errText := m.exec(ctx, cs.Cell, attempt)
		cs.Seconds = time.Since(t).Seconds()
		cs.Status, cs.Error = status, errText
		if r != nil {
			cs.Result = r.ID
			m.mu.Lock()
			m.runs[r.ID] = r
			m.mu.Unlock()
		} else {
			cs.Result = ""
		}
		vmDied := r == nil || r.Outcome.Status == "failed" && strings.Contains(r.Outcome.Reason, "guest died")
		if ctx.Err() != nil || status == results.StatusInterrupted || !vmDied || attempt == 2 {
			break
		}
		cs.Retried = errText
		fmt.Fprintf(m.e.stderr, "note: cell %s: its VM died (%s); running it once more\n", cs.ID, errText)
	}
	return cs
}

// exec runs lab run for the cell, its stderr into the cell's log; the
// result is what lab run --json printed.
func (m *matrixRun) exec(ctx context.Context, c matrix.Cell, attempt int) (*results.Result, string, string) {
	exe, err := m.e.roots.lab()
	if err != nil {
		return nil, "failed", err.Error()
	}
	args := append(c.Args(), "--out", matrix.StoreDir(m.f.out), "--json")
	for _, pf := range m.f.profileFiles {
		args = append(args, "--profile-file", pf)
	}
	logPath := filepath.Join(m.f.out, "logs", strings.NewReplacer("/", "_", "=", "-", ",", "_", ";", "_", ":", "-").Replace(c.ID)+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, "failed", err.Error()
	}
	defer logf.Close()
	fmt.Fprintf(logf, "== attempt %d at %s: lab %s\n", attempt, time.Now().UTC().Format(time.RFC3339), strings.Join(args, " "))
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(logf, &stderr)
	// Ctrl-C reaches the cell as it would a lab run: it saves what it
	// measured (outcome interrupted) and discards its VM.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = time.Minute
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	runErr := cmd.Run()
	var r results.Result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || r.ID == "" {
		msg := lastLine(stderr.String())
		if runErr != nil && msg == "" {
			msg = runErr.Error()
		}
		if ctx.Err() != nil {
			return nil, results.StatusInterrupted, "interrupted before a result was saved"
		}
		return nil, "failed", msg
	}
	return &r, r.Outcome.Status, r.Outcome.Reason
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimPrefix(lines[len(lines)-1], "lab: ")
}

// finish writes the JUnit XML and the summary; the exit status says
// whether every cell ran and held its claims.
func (m *matrixRun) finish(ctx context.Context) error {
	var baseline []*results.Result
	if m.f.baseline != "" {
		var errs []error
		baseline, errs = results.LoadAll(m.f.baseline)
		warnSkipped(m.e.stderr, errs)
		if len(baseline) == 0 {
			fmt.Fprintf(m.e.stderr, "warning: baseline %s holds no runs: no claim can have regressed against it\n", m.f.baseline)
		}
	}
	doc := matrix.JUnit(m.state, m.runs, baseline)
	for _, p := range []string{filepath.Join(m.f.out, "junit.xml"), m.f.junit} {
		if p == "" {
			continue
		}
		var b bytes.Buffer
		if err := doc.Write(&b); err != nil {
			return err
		}
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("junit: %w", err)
		}
	}
	if m.f.json {
		if err := printJSON(m.e.stdout, m.state); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(m.e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CELL\tSTATUS\tSECONDS\tATTEMPTS\tRESULT\tCLAIMS")
		for _, c := range m.state.Cells {
			claims := "-"
			if r := m.runs[c.Result]; r != nil {
				claims = verdictCounts(r)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t%d\t%s\t%s\n", c.ID, c.Status, c.Seconds, c.Attempts, orDash(c.Result), claims)
		}
		tw.Flush()
	}
	s := doc.Suites[0]
	fmt.Fprintf(m.e.stderr, "junit: %s (%d cells: %d failed, %d errors, %d not run)\n", filepath.Join(m.f.out, "junit.xml"), s.Tests, s.Failures, s.Errors, s.Skipped)
	if ctx.Err() != nil {
		return &exitCode{code: 130, msg: fmt.Sprintf("interrupted: %d of %d cells done; run the same command again to resume", s.Tests-s.Errors-s.Skipped, s.Tests)}
	}
	if s.Failures+s.Errors > 0 {
		return &exitCode{code: 1, msg: fmt.Sprintf("%d of %d cells failed (see %s and the logs in %s)", s.Failures+s.Errors, s.Tests, filepath.Join(m.f.out, "junit.xml"), filepath.Join(m.f.out, "logs"))}
	}
	return nil
}

// writeCells is --dry-run: the cells and the lab run each is.
func writeCells(w io.Writer, cells []matrix.Cell, all int, shard matrix.Shard, asJSON bool) error {
	if asJSON {
		if cells == nil {
			cells = []matrix.Cell{}
		}
		return printJSON(w, cells)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CELL\tCOMMAND")
	for _, c := range cells {
		fmt.Fprintf(tw, "%s\tlab %s\n", c.ID, strings.Join(c.Args(), " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d of %d cells (shard %s)\n", len(cells), all, shard)
	return nil
}

func mergeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "join the output directories of a matrix's shards into one",
		ArgsUsage: "SHARD_DIR...",
		Description: "Each SHARD_DIR is a `lab matrix --shard i/n --out SHARD_DIR` output. The shards\n" +
			"must be of one matrix file and together cover every cell exactly once; a cell\n" +
			"run by two shards, or by none, is an error naming it, and nothing is written.\n" +
			"The merged directory holds every result, the state and junit.xml.\n\n" +
			"Example:\n   lab results merge --out nightly shard-1 shard-2 shard-3 shard-4",
		Flags: []cli.Flag{&cli.StringFlag{Name: "out", Required: true, Usage: "merged output `DIR`"}, jsonFlag},
		Action: func(c *cli.Context) error {
			out := c.String("out")
			st, err := matrix.Merge(out, c.Args().Slice())
			if err != nil {
				return err
			}
			runs := map[string]*results.Result{}
			for _, cs := range st.Cells {
				if cs.Result == "" {
					continue
				}
				r, err := results.Load(filepath.Join(matrix.StoreDir(out), cs.Result+".json"))
				if err != nil {
					return err
				}
				runs[cs.Result] = r
			}
			var b bytes.Buffer
			doc := matrix.JUnit(st, runs, nil)
			if err := doc.Write(&b); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(out, "junit.xml"), b.Bytes(), 0o644); err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(e.stdout, st)
			}
			fmt.Fprintf(e.stdout, "merged %d shard(s): %d cells of matrix %s into %s\n", c.NArg(), len(st.Cells), orDash(st.Name), out)
			return nil
		},
	}
}
