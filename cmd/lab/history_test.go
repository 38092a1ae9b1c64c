package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/results/history"
)

// historyNights stores n nights of forkbench forktime, one store each
// (night-1..n under a temp dir): real_s 1 s, times factor from night
// `at` (1-based) on.
func historyNights(t *testing.T, n, at int, factor float64) []string {
	t.Helper()
	root := t.TempDir()
	t0 := time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC)
	var dirs []string
	for i := 1; i <= n; i++ {
		f := 1.0
		if i >= at {
			f = factor
		}
		w := 1 + 0.001*float64(i%3-1)
		dir := filepath.Join(root, fmt.Sprintf("night-%d", i))
		start := t0.AddDate(0, 0, i)
		storedRun(t, dir, start.Format("20060102T150405.000000Z")+"-forkbench-forktime-abcdef", "forktime", start, map[string]string{"n": "500"},
			f*w, 1.001*f*w, 0.999*f*w, 1.0005*f*w)
		dirs = append(dirs, dir)
	}
	return dirs
}

// TestCLIHistory: lab history finds the change, prints it night by
// night, says it as JSON, and --fail-on-change fails on it only while it
// is within --last nights.
func TestCLIHistory(t *testing.T) {
	cliEnv(t)
	dirs := historyNights(t, 6, 4, 1.25)
	// In any order: the nights are ordered by their runs.
	args := append([]string{"history"}, dirs[3], dirs[0], dirs[5], dirs[1], dirs[4], dirs[2])
	r := cliRun(t, args...)
	wantOutput(t, r, "history", 0, "stdout", "6 night(s)", "celeron-2.4/forkbench/forktime/n=500 (clock host)",
		"night 4 (night-4): +25.0% worse", "real_s, per night:", "<- +25.0% worse")
	r = cliRun(t, append(args, "--json")...)
	var h history.History
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil {
		t.Fatalf("lab history --json: %v\n%s", err, r.stdout)
	}
	if len(h.Series) != 1 || len(h.Series[0].Changes) != 1 || h.Series[0].Changes[0].Night != 3 || h.Nights[0].Name != "night-1" {
		t.Errorf("lab history --json: %+v", h)
	}
	r = cliRun(t, append(args, "--fail-on-change")...)
	wantOutput(t, r, "history --fail-on-change", 1, "stderr", "1 change(s) the worse way in the last 5 night(s)", "real_s +25.0% from night-4")
	r = cliRun(t, append(args, "--fail-on-change", "--last", "2")...)
	wantOutput(t, r, "history --fail-on-change --last 2", 0, "stdout", "+25.0% worse")
	// A change smaller than --min-change is no change.
	r = cliRun(t, append(args, "--fail-on-change", "--min-change", "30")...)
	wantOutput(t, r, "history --min-change 30", 0, "stdout", "none")
	// Better is not worse.
	better := historyNights(t, 6, 4, 0.75)
	r = cliRun(t, append([]string{"history", "--fail-on-change"}, better...)...)
	wantOutput(t, r, "history (faster) --fail-on-change", 0, "stdout", "-25.0% better")
	// Too few nights: the gate cannot tell, says so, and passes.
	r = cliRun(t, "history", "--fail-on-change", dirs[0], dirs[1])
	wantOutput(t, r, "history of 2 nights --fail-on-change", 0, "stderr", "cannot tell")
	wantOutput(t, r, "history of 2 nights --fail-on-change", 0, "stdout", "too few nights to tell")
}

// TestCLIHistoryDefaultStore: with no nights, the default result store is
// read, a night per UTC date its runs started.
func TestCLIHistoryDefaultStore(t *testing.T) {
	cliEnv(t)
	store := t.TempDir()
	setEnv(t, "LAB_RESULTS_DIR", store)
	t0 := time.Date(2026, 11, 20, 2, 0, 0, 0, time.UTC)
	for i := 0; i < 4; i++ {
		start := t0.AddDate(0, 0, i)
		storedRun(t, store, start.Format("20060102T150405.000000Z")+"-forkbench-forktime-abcdef", "forktime", start, nil, 1, 1.01, 0.99)
	}
	r := cliRun(t, "history")
	wantOutput(t, r, "history (default store)", 0, "stdout", "4 night(s)", "2026-11-20", "2026-11-23")
}

// TestCLIHistoryRefuses: each bad input is named with what to do.
func TestCLIHistoryRefuses(t *testing.T) {
	cliEnv(t)
	setEnv(t, "LAB_RESULTS_DIR", t.TempDir())
	dirs := historyNights(t, 3, 9, 1)
	file := filepath.Join(t.TempDir(), "night.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"history"}, []string{"needs nights", "holds no run", "lab history nights/*"}},
		{[]string{"history", "--results", dirs[0], dirs[1]}, []string{"--results and nights both given"}},
		{[]string{"history", dirs[0], file}, []string{file, "is not a directory"}},
		{[]string{"history", dirs[0], t.TempDir()}, []string{"holds no runs"}},
		{[]string{"history", dirs[0], dirs[0]}, []string{"the same night"}},
		{[]string{"history", "--alpha", "0", dirs[0]}, []string{"--alpha 0", "between 0 and 1"}},
		{[]string{"history", "--min-change", "-1", dirs[0]}, []string{"--min-change -1"}},
		{[]string{"history", "--last", "0", dirs[0]}, []string{"--last 0", "1 or more"}},
	} {
		r := cliRun(t, c.args...)
		wantOutput(t, r, strings.Join(c.args, " "), 1, "stderr", c.want...)
	}
}
