package claims_test

import (
	"slices"
	"strings"
	"testing"

	"lab/plugins/contract"
	"lab/results"
	rclaims "lab/results/claims"
)

// A scope's run parameters (Scope.Run) are what the claim's runs are
// made with, not what a run must have: the plan and the command a
// verdict names run target=null alone, and a run of every target, which
// holds the same null samples, decides the claim as well; a run whose
// target has no null samples is no evidence, and says so.
func TestScopeRun(t *testing.T) {
	c := claim(contract.Claim{Range: &contract.RangeClaim{Metric: "user_s", Min: ptr(0.5), Unit: "share", ShareWith: "sys_s",
		Labels: map[string]string{"target": "null"}},
		Scope: &contract.Scope{Profiles: []string{"xeon5130-fb"}, Params: map[string]string{"lines": "100000"}, Run: map[string]string{"target": "null"}}})
	runs, un := rclaims.DecidingRuns(&c, nil)
	if un != nil || len(runs) != 1 || runs[0].Params["target"] != "null" || runs[0].Params["lines"] != "100000" {
		t.Fatalf("deciding runs %+v (%v), want one at lines=100000 target=null", runs, un)
	}
	v := judge(c, rclaims.Options{})
	if v.Verdict != results.NotRun || !strings.Contains(v.Reason, "-p lines=100000 -p target=null") {
		t.Errorf("no run: %s (%s), want not run naming a run of target=null", v.Verdict, v.Reason)
	}
	run := func(id, target string, min int, targets ...string) *results.Result {
		r := newRun(id, "xeon5130-fb", "icount:0", min)
		r.Parameters["lines"], r.Parameters["target"] = "100000", target
		for _, tg := range targets {
			add(r, "user_s", "s", l("target", tg), 0.084, 0.085, 0.084, 0.086, 0.085)
			add(r, "sys_s", "s", l("target", tg), 0, 0.001, 0, 0, 0.001)
		}
		return r
	}
	for _, tt := range []struct {
		name string
		r    *results.Result
		want string
	}{
		{"alone", run("null", "null", 0, "null"), results.Reproduced},
		{"every target", run("all", "all", 0, "pty", "null", "serial"), results.Reproduced},
	} {
		v := judge(c, rclaims.Options{}, tt.r)
		if v.Verdict != tt.want || !slices.Equal(v.Runs, []string{tt.r.ID}) {
			t.Errorf("%s: %s (%s), runs %v; want %s", tt.name, v.Verdict, v.Reason, v.Runs, tt.want)
		}
	}
	v = judge(c, rclaims.Options{}, run("pty", "pty", 0, "pty"))
	if v.Verdict != results.NotRun || len(v.OutOfScope) != 1 || !strings.Contains(v.OutOfScope[0].Reason, "no samples of") {
		t.Errorf("a run of pty alone: %s (%s), out of scope %+v; want not run, the run holding no null samples", v.Verdict, v.Reason, v.OutOfScope)
	}
}
