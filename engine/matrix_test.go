package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lab/images"
	"lab/plugins"
	"lab/results"
	"lab/results/matrix"
)

func TestDefaultParallel(t *testing.T) {
	for clock, want := range map[string]int{"icount:0": 2, "icount": 2, "icount:3": 2, "host": 1, "": 1} {
		if got := DefaultParallel(clock); got != want {
			t.Errorf("DefaultParallel(%q) = %d, want %d", clock, got, want)
		}
	}
}

// TestMatrixOrder: the cells not done, in the file's order; sharing the
// cores, the longest first, the file's order among equals.
func TestMatrixOrder(t *testing.T) {
	cell := func(status, result string, repeat int) matrix.CellState {
		return matrix.CellState{Cell: matrix.Cell{Profile: "a", Clock: "icount:0", Repeat: repeat}, Status: status, Result: result}
	}
	cells := []matrix.CellState{
		cell("ok", "r1", 9), // done
		cell("pending", "", 1),
		cell("pending", "", 5),
		cell("interrupted", "r2", 7), // not done: run again
		cell("pending", "", 5),
	}
	idx := pending(cells)
	if !slices.Equal(idx, []int{1, 2, 3, 4}) {
		t.Fatalf("pending = %v, want [1 2 3 4]", idx)
	}
	if got := longestFirst(cells, idx, nil); !slices.Equal(got, idx) {
		t.Errorf("with no cost: %v, want the file's order %v", got, idx)
	}
	cost := func(c matrix.Cell) time.Duration { return time.Duration(c.Repeat) * time.Minute }
	if got := longestFirst(cells, idx, cost); !slices.Equal(got, []int{3, 2, 4, 1}) {
		t.Errorf("longest first = %v, want [3 2 4 1]", got)
	}
}

// TestMatrixRetry: a cell is run once more when its guest died (by its
// failure's kind, errors.Is) or it left no result, and not when the
// plugin crashed; each attempt is in the cell's log.
func TestMatrixRetry(t *testing.T) {
	died := &Failure{Kind: GuestDied, Reason: "the guest died mid-run (vm x is gone): EOF"}
	crashed := &Failure{Kind: PluginCrashed, Reason: "the plugin crashed (exit status 2): EOF"}
	for _, tt := range []struct {
		name     string
		first    error
		noResult bool
		attempts int
		retried  string
	}{
		{"guest died", died, false, 2, died.Reason},
		{"no result", errors.New("booting: no kernel"), true, 2, "booting: no kernel"},
		{"plugin crashed", crashed, false, 1, ""},
		{"ok", nil, false, 1, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			c := matrix.Cell{ID: "p/bench/exp", Plugin: "bench", Experiment: "exp", Profile: "p", Repeat: 1}
			plan := &MatrixPlan{MatrixRequest: MatrixRequest{File: "m.yaml", Data: []byte("name: t\n"), Out: out, Command: []string{"/bin/lab", "matrix"}},
				Spec: &matrix.Spec{Name: "t"}, All: []matrix.Cell{c}, Cells: []matrix.Cell{c}, Parallel: 1, Store: results.StoreDir(out)}
			calls := 0
			var events []string
			opts := MatrixOptions{Options: Options{Observe: func(e Event) { events = append(events, e.String()) }}}
			opts.runCell = func(ctx context.Context, req Request, o Options) (*Run, error) {
				calls++
				if req.Command[0] != "/bin/lab" || req.Plugin != "bench" || req.Profiles[0] != "p" {
					t.Errorf("cell request %+v", req)
				}
				res := &results.Result{ID: fmt.Sprintf("r%d", calls), Outcome: results.Outcome{Status: "ok"}}
				if calls == 1 && tt.first != nil {
					if tt.noResult {
						return nil, tt.first
					}
					var f *Failure
					errors.As(tt.first, &f)
					res.Outcome = results.Outcome{Status: "failed", Reason: f.Reason}
					return &Run{Result: res}, tt.first
				}
				return &Run{Result: res}, nil
			}
			m, err := plan.Run(context.Background(), opts)
			if err != nil {
				t.Fatal(err)
			}
			cs := m.State.Cells[0]
			if calls != tt.attempts || cs.Attempts != tt.attempts || cs.Retried != tt.retried {
				t.Errorf("%d calls, cell %+v; want %d attempts, retried %q", calls, cs, tt.attempts, tt.retried)
			}
			if want := tt.first == nil || tt.attempts == 2; want != (cs.Status == "ok") {
				t.Errorf("cell status %s", cs.Status)
			}
			if got := slices.ContainsFunc(events, func(s string) bool { return strings.Contains(s, "running it once more") }); got != (tt.attempts == 2) {
				t.Errorf("events %q: said it retried = %v", events, got)
			}
			log, err := os.ReadFile(filepath.Join(out, "logs", "p_bench_exp.log"))
			if err != nil || strings.Count(string(log), "== attempt") != tt.attempts {
				t.Errorf("log %v:\n%s", err, log)
			}
		})
	}
}

// TestCellRepeatChoice: a cell whose matrix gives no repeat asks Do to
// choose, as lab run without --repeat (issue 32); one that gives them
// runs them.
func TestCellRepeatChoice(t *testing.T) {
	for _, tt := range []struct {
		repeat int
		choose bool
	}{{0, true}, {1, false}, {5, false}} {
		req, err := CellRequest(matrix.Cell{Plugin: "forkbench", Profile: "celeron-2.4", Repeat: tt.repeat}, t.TempDir(), nil, nil, Roots{})
		if err != nil {
			t.Fatal(err)
		}
		if req.ChooseRepeat != tt.choose || req.Repeat != tt.repeat {
			t.Errorf("cell repeat %d: request repeat %d, choose %v; want choose %v", tt.repeat, req.Repeat, req.ChooseRepeat, tt.choose)
		}
	}
	// Planned, a chosen cell starts at 1 until Do chooses.
	plan := fakeRunPlan(t, "create", nil)
	req := plan.Request
	req.Repeat, req.ChooseRepeat, req.Out = 0, true, t.TempDir()
	if _, err := NewPlan(req); err != nil && strings.Contains(err.Error(), "--repeat") {
		t.Errorf("NewPlan of a cell whose repeats are chosen: %v", err)
	}
}

// TestRunMatrixOnFakes: a whole lab matrix (RunMatrix) on fake VMs: each
// cell planned against the build and run by Do (the cell without repeats
// gets the claims' choice), a cell whose guest dies retried once, the
// state, the logs and the JUnit XML with its claims suite written, and a
// second run keeping every finished cell.
func TestRunMatrixOnFakes(t *testing.T) {
	data := []byte(`name: fakes
cells:
  - plugin: forkbench
    experiment: create
    profiles: [celeron-2.4]
    params: {m: [2000]}
  - plugin: forkbench
    experiment: forktime
    profiles: [celeron-2.4, p4-2.4]
    repeat: 2
`)
	out := t.TempDir()
	var mu sync.Mutex
	died := map[string]bool{}
	ms := &fakeMachines{newMachine: func(p images.Profile) *fakeMachine {
		m := newFakeMachine(p.Name+"-run", p)
		if p.Name == "p4-2.4" {
			mu.Lock()
			first := !died[p.Name]
			died[p.Name] = true
			mu.Unlock()
			if first {
				m.gone = true
				m.sess.run = func(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
					return nil, errors.New("EOF")
				}
			}
		}
		return m
	}}
	evs := &events{}
	cmd := MatrixCommand{MatrixRequest: MatrixRequest{File: "fakes.yaml", Data: data, Out: out, Parallel: 2, Command: []string{"/bin/lab", "matrix", "fakes.yaml"},
		Roots: Roots{Plugins: fakeBuild(t, "forkbench"), TempDir: t.TempDir()}}}
	cellLog := func(w io.Writer) func(Event) { return func(e Event) { fmt.Fprintln(w, e.String()) } }
	done, err := RunMatrix(context.Background(), cmd, MatrixOptions{Options: Options{Observe: evs.observe, machines: ms}, CellObserver: cellLog})
	if err != nil {
		t.Fatal(err)
	}
	// The attempt whose guest died is saved too: what it measured is kept.
	if len(done.State.Cells) != 3 || len(done.Runs) != 4 {
		t.Fatalf("%d cells, %d runs; want 3 and 4", len(done.State.Cells), len(done.Runs))
	}
	for _, cs := range done.State.Cells {
		r := done.Runs[cs.Result]
		if cs.Status != results.StatusOK || r == nil {
			t.Errorf("cell %s: %s %q", cs.ID, cs.Status, cs.Error)
			continue
		}
		want := "2"
		if cs.Experiment == "create" {
			want = "" // chosen: what E1.6 needs
			if n, _ := strconv.Atoi(r.Parameters["repeat"]); n < 2 {
				t.Errorf("cell %s ran %s repeats; want the claims' choice", cs.ID, r.Parameters["repeat"])
			}
		}
		if want != "" && r.Parameters["repeat"] != want {
			t.Errorf("cell %s ran %s repeats, want %s", cs.ID, r.Parameters["repeat"], want)
		}
		if (cs.Profile == "p4-2.4") != (cs.Attempts == 2) {
			t.Errorf("cell %s: %d attempts (retried %q)", cs.ID, cs.Attempts, cs.Retried)
		}
	}
	if len(ms.booted) != 4 {
		t.Errorf("%d VMs booted, want 4 (one cell twice)", len(ms.booted))
	}
	if r := eventsOf[CellRetry](evs); len(r) != 1 || !strings.Contains(r[0].Why, "the guest died") {
		t.Errorf("CellRetry events %+v, want the p4 cell's", r)
	}
	if d := eventsOf[CellDone](evs); len(d) != 3 {
		t.Errorf("%d CellDone events, want 3", len(d))
	}
	if log, err := os.ReadFile(filepath.Join(out, "logs", "celeron-2.4_forkbench_create_m-2000.log")); err != nil || !strings.Contains(string(log), "repeats: ") {
		t.Errorf("the chosen cell's log does not say the choice (%v):\n%s", err, log)
	}
	if len(done.JUnit.Suites) != 2 || done.JUnit.Suites[0].Tests != 3 || done.JUnit.Suites[0].Failures != 0 {
		t.Errorf("junit %+v", done.JUnit.Suites)
	}
	if _, err := os.Stat(done.JUnitPath); err != nil {
		t.Error(err)
	}
	// Again: every cell is done, nothing boots.
	ms.booted = nil
	again, err := RunMatrix(context.Background(), cmd, MatrixOptions{Options: Options{machines: ms}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms.booted) != 0 || len(again.Runs) != 3 {
		t.Errorf("second run booted %d VMs and has %d runs; want none and the 3 kept", len(ms.booted), len(again.Runs))
	}
}

// The ETA after a cell ends comes from the estimates of the cells left,
// as their estimates held so far, and the cells at once; the longest
// cell running first made the mean of the cells so far say 10 hours for
// lab reproduce all's 36 icount cells (17m51s for the first), 2026-12-07.
func TestMatrixETA(t *testing.T) {
	for _, tt := range []struct {
		name                       string
		elapsed                    time.Duration
		n, todo, parallel          int
		doneEst, doneTook, leftEst time.Duration
		want                       time.Duration
	}{
		{"longest first", 17*time.Minute + 51*time.Second, 1, 36, 2, 15 * time.Minute, 916 * time.Second, 60 * time.Minute, time.Duration(float64(60*time.Minute) * 916 / 900 / 2)},
		{"estimates held", 10 * time.Minute, 5, 10, 2, 10 * time.Minute, 10 * time.Minute, 8 * time.Minute, 4 * time.Minute},
		{"twice as long", 10 * time.Minute, 5, 10, 1, 5 * time.Minute, 10 * time.Minute, 3 * time.Minute, 6 * time.Minute},
		{"no estimates", 10 * time.Minute, 2, 6, 2, 0, 10 * time.Minute, 0, 20 * time.Minute},
	} {
		if got := matrixETA(tt.elapsed, tt.n, tt.todo, tt.parallel, tt.doneEst, tt.doneTook, tt.leftEst); got.Round(time.Second) != tt.want.Round(time.Second) {
			t.Errorf("%s: ETA %v, want %v", tt.name, got, tt.want)
		}
	}
}
