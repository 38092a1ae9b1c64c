package engine

import (
	"slices"
	"testing"

	"lab/results"
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
	cell := func(profile, clock, status, result string) results.CellState {
		return results.CellState{Cell: results.Cell{Profile: profile, Clock: clock}, Status: status, Result: result}
	}
	cells := []results.CellState{
		cell("a", "host", "ok", "r1"), // done: neither
		cell("a", "host", "pending", ""),
		cell("a", "host", "pending", ""),
		cell("a", "icount:0", "pending", ""),
		cell("b", "host", "interrupted", "r2"),
		cell("b", "host", "pending", ""),
	}
	first, rest := pilots(cells)
	if !slices.Equal(first, []int{1, 3, 4}) || !slices.Equal(rest, []int{2, 5}) {
		t.Errorf("pilots = %v, rest %v; want [1 3 4] and [2 5]", first, rest)
	}
}
