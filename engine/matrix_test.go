package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

// TestMatrixPilots: the first pending cell of each profile and clock runs
// alone before the others run side by side.
func TestMatrixPilots(t *testing.T) {
	cell := func(profile, clock, status, result string) matrix.CellState {
		return matrix.CellState{Cell: matrix.Cell{Profile: profile, Clock: clock}, Status: status, Result: result}
	}
	cells := []matrix.CellState{
		cell("a", "host", "ok", "r1"), // done: neither
		cell("a", "host", "pending", ""),
		cell("a", "host", "pending", ""),
		cell("a", "icount:0", "pending", ""),
		cell("b", "host", "interrupted", "r2"),
		cell("b", "host", "pending", ""),
	}
	first, rest := pilots(cells, nil)
	if !slices.Equal(first, []int{1, 3, 4}) || !slices.Equal(rest, []int{2, 5}) {
		t.Errorf("pilots = %v, rest %v; want [1 3 4] and [2 5]", first, rest)
	}
	// With a cost, the cheapest pending cell of each is the pilot: cell
	// 2 (repeat 1) before cell 1 (repeat 9).
	cells[1].Repeat, cells[2].Repeat = 9, 1
	first, rest = pilots(cells, func(c matrix.Cell) time.Duration { return time.Duration(c.Repeat) })
	if !slices.Equal(first, []int{2, 3, 4}) || !slices.Equal(rest, []int{1, 5}) {
		t.Errorf("pilots by cost = %v, rest %v; want [2 3 4] and [1 5]", first, rest)
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
