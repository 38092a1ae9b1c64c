package main

import (
	"slices"
	"strings"
	"testing"

	"lab/results/matrix"
)

// TestCLIResultsErrors: bad input to lab results and lab compare says
// what is wrong and what to type instead.
func TestCLIResultsErrors(t *testing.T) {
	cliEnv(t)
	dir := t.TempDir()
	t.Setenv("LAB_RESULTS_DIR", dir)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"results", "show"}, "needs one run ID"},
		{[]string{"results", "show", "nosuch"}, `result "nosuch" not found`},
		{[]string{"results", "extra"}, "takes no arguments"},
		{[]string{"results", "--since", "yesterday"}, "a duration back from now"},
		{[]string{"results", "--outcome", "great"}, "want one of ok, failed, expected-crash, interrupted"},
		{[]string{"results", "--format", "yaml"}, "want one of table, json, csv, junit, markdown"},
		{[]string{"compare", "latest"}, "needs two sides"},
		{[]string{"compare", "latest", "latest"}, "no results in"},
		{[]string{"compare", "plugin=forkbench", "latest"}, "picks no run"},
		{[]string{"compare", "colour=red", "latest"}, `unknown key "colour"`},
	} {
		r := cliRun(t, tt.args...)
		wantOutput(t, r, strings.Join(tt.args, " "), 1, "stderr", tt.want)
	}
	r := cliRun(t, "results")
	wantOutput(t, r, "results", 0, "stdout", "no runs in "+dir)
	r = cliRun(t, "results", "--json")
	wantOutput(t, r, "results --json", 0, "stdout", "[]")
}

func TestDefaultParallel(t *testing.T) {
	for clock, want := range map[string]int{"icount:0": 2, "icount": 2, "icount:3": 2, "host": 1, "": 1} {
		if got := defaultParallel(clock); got != want {
			t.Errorf("defaultParallel(%q) = %d, want %d", clock, got, want)
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
	first, rest := pilots(cells)
	if !slices.Equal(first, []int{1, 3, 4}) || !slices.Equal(rest, []int{2, 5}) {
		t.Errorf("pilots = %v, rest %v; want [1 3 4] and [2 5]", first, rest)
	}
}
