package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPlanReproduceFromBuild: lab reproduce's plan of forkbench's claims
// against a build, checked before anything boots: E1.6's run planned,
// its estimate, the store's runs held; each refusal naming its flag.
func TestPlanReproduceFromBuild(t *testing.T) {
	_, roots := fakeStore(t, 0)
	req := ReproduceRequest{IDs: []string{"E1.6"}, Out: t.TempDir(), Roots: roots, Command: []string{"lab", "reproduce", "E1.6"}}
	p, err := PlanReproduce(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Claims) != 1 || p.Claims[0].ID != "E1.6" || len(p.Runs) == 0 || p.Estimate <= 0 || p.Budget != DefaultBudget || p.Parallel != DefaultParallel("icount") {
		t.Fatalf("plan: claims %v, %d runs, estimate %v, budget %v, parallel %d", p.Claims, len(p.Runs), p.Estimate, p.Budget, p.Parallel)
	}
	var profiles []string
	for _, r := range p.Runs {
		profiles = append(profiles, r.Profile)
		if r.Plugin != "forkbench" || r.Experiment != "create" || r.Repeat < 1 {
			t.Errorf("run %+v: want forkbench/create with repeats", r)
		}
	}
	if !slices.Contains(profiles, "celeron-2.4") {
		t.Errorf("runs on %q, want the Celeron's", profiles)
	}
	if !slices.Equal(p.Clocks(), []string{"icount:0"}) {
		t.Errorf("clocks %q, want E1.6's icount:0 only", p.Clocks())
	}
	for _, tt := range []struct {
		name string
		set  func(r *ReproduceRequest)
		want string
	}{
		{"no out", func(r *ReproduceRequest) { r.Out = "" }, "choose one with --out DIR"},
		{"negative budget", func(r *ReproduceRequest) { r.Budget = -time.Minute }, "--budget -1m0s: want a positive duration"},
		{"too parallel", func(r *ReproduceRequest) { r.Parallel = 17 }, "--parallel 17: want 1..16"},
		{"unknown claim", func(r *ReproduceRequest) { r.IDs = []string{"E9.9"} }, "E9.9"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := req
			tt.set(&r)
			if _, err := PlanReproduce(r); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("PlanReproduce = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestReproduceOnFakes: lab reproduce E1.6 as one engine call on fake
// VMs: its run made, E1.6 judged from it, the report written; again, the
// store holds the run and nothing boots.
func TestReproduceOnFakes(t *testing.T) {
	_, roots := fakeStore(t, 0)
	out := t.TempDir()
	req := ReproduceRequest{IDs: []string{"E1.6"}, Out: out, Roots: roots, Command: []string{"lab", "reproduce", "E1.6"}, Version: "lab test"}
	ms := &fakeMachines{}
	evs := &events{}
	done, err := Reproduce(context.Background(), req, MatrixOptions{Options: Options{Observe: evs.observe, machines: ms}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms.booted) == 0 {
		t.Fatal("nothing ran")
	}
	var e16 string
	for _, s := range done.Statuses {
		if s.Claim.ID == "E1.6" {
			e16 = s.Verdict
		}
	}
	if e16 == "" || e16 == "not run" {
		t.Errorf("E1.6: %q, want it judged from the run", e16)
	}
	if len(eventsOf[RoundStarted](evs)) == 0 || len(eventsOf[RoundDone](evs)) == 0 {
		t.Errorf("no round said: %v", evs.evs)
	}
	if done.Report == "" || done.ReportErr != nil {
		t.Errorf("report %q (%v), want the page written", done.Report, done.ReportErr)
	}
	booted := len(ms.booted)
	if _, err := Reproduce(context.Background(), req, MatrixOptions{Options: Options{machines: ms}}); err != nil {
		t.Fatal(err)
	}
	if len(ms.booted) != booted {
		t.Errorf("the second lab reproduce booted %d more VMs, want none: the store holds the run", len(ms.booted)-booted)
	}
}
