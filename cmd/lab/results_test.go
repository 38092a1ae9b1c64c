package main

import (
	"strings"
	"testing"
)

// TestCLIResultsErrors: bad input to lab results and lab compare says
// what is wrong and what to type instead.
func TestCLIResultsErrors(t *testing.T) {
	cliEnv(t)
	dir := t.TempDir()
	setEnv(t, "LAB_RESULTS_DIR", dir)
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
