package engine

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/plugins"
	"lab/results"
)

// Adding repeats to a stored run: the plan takes the stored run's
// experiment and parameters when none are given, and refuses, before
// anything boots and naming the fix, a run that is not of its cell or
// cannot be added to.
func TestNewPlanAddTo(t *testing.T) {
	build := fakeBuild(t, "forkbench")
	out := t.TempDir()
	stored := func(id, status string, set func(r *results.Result)) *results.Result {
		r := &results.Result{ID: id, Plugin: "forkbench", Experiment: "create",
			Parameters: map[string]string{"repeat": "3", "m": "500", "build": "static-O2"}, Finished: time.Now().UTC(),
			Machine: results.MachineRecord{Profile: map[string]any{"name": "celeron-2.4"}, Clock: "icount:0", Accelerator: "tcg", KernelID: "k"},
			Outcome: results.Outcome{Status: status}}
		if set != nil {
			set(r)
		}
		if _, err := results.Save(out, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	req := func(set func(r *Request)) Request {
		r := Request{Plugin: "forkbench", Repeat: 2, Timeout: time.Minute, Out: out, Roots: Roots{Plugins: build},
			ChooseExperiment: true, Profiles: []string{"celeron-2.4"}, AddTo: "run-ok"}
		if set != nil {
			set(&r)
		}
		return r
	}
	data, err := os.ReadFile(filepath.Join("..", "plugins", "forkbench", "description.json"))
	if err != nil {
		t.Fatal(err)
	}
	desc, err := plugins.ParseDescription(data)
	if err != nil {
		t.Fatal(err)
	}
	version := desc.Version
	withVersion := func(set func(r *results.Result)) func(r *results.Result) {
		return func(r *results.Result) {
			r.PluginVersion = version
			if set != nil {
				set(r)
			}
		}
	}
	ok := stored("run-ok", results.StatusOK, withVersion(nil))
	plan, err := NewPlan(req(nil))
	if err != nil {
		t.Fatal(err)
	}
	if plan.Exp.Name != "create" || plan.Resolved["m"] != "500" || plan.Clocks[0].String() != "icount:0" || plan.addTo == nil || plan.addTo.ID != "run-ok" {
		t.Errorf("plan of --add-to run-ok: experiment %s, m=%s, clock %v, adds to %v", plan.Exp.Name, plan.Resolved["m"], plan.Clocks, plan.addTo)
	}
	stored("run-failed", results.StatusFailed, withVersion(func(r *results.Result) { r.Outcome.Reason = "the guest died" }))
	stored("run-other", results.StatusOK, withVersion(func(r *results.Result) { r.Plugin = "threadbench" }))
	stored("run-old", results.StatusOK, func(r *results.Result) { r.PluginVersion = "0.0.1" })
	stored("run-swept", results.StatusOK, withVersion(func(r *results.Result) {
		r.Parameters["m"] = "500,1000"
		r.Sweep = &results.Sweep{Axes: []results.SweepAxis{{Key: "m", Values: []string{"500", "1000"}}}}
	}))
	if p, err := NewPlan(req(func(r *Request) { r.AddTo = "run-swept" })); err != nil || len(p.Axes) != 1 || p.Resolved["m"] != "500,1000" {
		t.Errorf("--add-to a swept run: %v; axes %v", err, p)
	}
	for _, tt := range []struct {
		name string
		set  func(r *Request)
		want []string
	}{
		{"not stored", func(r *Request) { r.AddTo = "nosuch" }, []string{"--add-to nosuch", "not found", "lab results --results " + out}},
		{"no repeat", func(r *Request) { r.ChooseRepeat, r.Repeat = true, 0 }, []string{"--add-to run-ok needs --repeat N"}},
		{"two profiles", func(r *Request) { r.Profiles = []string{"celeron-2.4", "p4-2.4"} }, []string{"give one --profile"}},
		{"failed", func(r *Request) { r.AddTo = "run-failed" }, []string{"that run failed (the guest died)", "without --add-to"}},
		{"another plugin", func(r *Request) { r.AddTo = "run-other" }, []string{"a run of plugin threadbench, not forkbench", "lab run threadbench --add-to run-other"}},
		{"another version", func(r *Request) { r.AddTo = "run-old" }, []string{"not of this cell", "plugin version 0.0.1, not " + version}},
		{"another parameter", func(r *Request) {
			r.ChooseExperiment, r.Experiment, r.Params = false, "create", map[string]string{"m": "1000"}
		}, []string{"not of this cell", "m=500, not 1000", "nothing was started"}},
		{"another experiment", func(r *Request) { r.ChooseExperiment, r.Experiment = false, "forktime" }, []string{"experiment create, not forktime"}},
		{"another profile", func(r *Request) { r.Profiles = []string{"p4-2.4"} }, []string{"another machine", "profile celeron-2.4, not p4-2.4"}},
		{"another clock", func(r *Request) { r.Clock = "host" }, []string{"another machine", "clock icount:0, not host"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewPlan(req(tt.set))
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("NewPlan = %v, want an error saying %q", err, w)
				}
			}
		})
	}
	// The stored run is not changed by planning from it.
	again, _, err := results.LoadRef(out, "run-ok")
	if err != nil || !maps.Equal(again.Parameters, ok.Parameters) {
		t.Errorf("run-ok after planning: %v %v", again, err)
	}
}

// A run on the VM is checked against the stored run's machine: its
// profile, kernel, clock and accelerator.
func TestAddToMachine(t *testing.T) {
	prev := &results.Result{Machine: results.MachineRecord{Profile: map[string]any{"name": "celeron-2.4"}, Clock: "icount:0", Accelerator: "tcg", KernelID: "debian-6.1"}}
	same := results.MachineRecord{Profile: map[string]any{"name": "celeron-2.4"}, Clock: "icount:0", Accelerator: "tcg", KernelID: "debian-6.1"}
	if d := addToMachine(prev, same); d != "" {
		t.Errorf("the same machine differs: %s", d)
	}
	other := same
	other.KernelID, other.Clock = "linux-2.6.32", "host"
	if d := addToMachine(prev, other); d != "kernel debian-6.1, not linux-2.6.32, clock icount:0, not host" {
		t.Errorf("differs by %q", d)
	}
}
