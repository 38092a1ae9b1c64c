package engine

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/vm"
)

// TestSaveJudgedNonFinite: a sample JSON cannot carry is dropped and the
// run failed saying which, so the rest is saved, not lost.
func TestSaveJudgedNonFinite(t *testing.T) {
	dir := t.TempDir()
	res := &results.Result{Schema: results.SchemaVersion, ID: "r1", Plugin: "p", Experiment: "e", Started: time.Now().UTC(),
		Parameters: map[string]string{"repeat": "2"}, Outcome: results.Outcome{Status: results.StatusOK},
		Samples: []results.Sample{{Metric: "m", Value: 1, Unit: "ms"}, {Metric: "m", Value: math.Inf(1), Unit: "ms", Repeat: 1}}}
	evs := &events{}
	run := SaveJudged(res, nil, nil, nil, dir, t.TempDir(), evs.observe)
	if run.SaveErr != nil {
		t.Fatal(run.SaveErr)
	}
	r := saved(t, run)
	if r.Outcome.Status != results.StatusFailed || !strings.Contains(r.Outcome.Reason, "non-finite values dropped") || !strings.Contains(r.Outcome.Reason, "metric m repeat 1") || len(r.Samples) != 1 {
		t.Errorf("saved %s %q with %d samples", r.Outcome.Status, r.Outcome.Reason, len(r.Samples))
	}
	if s := eventsOf[Saved](evs); len(s) != 1 {
		t.Errorf("Saved events %v", s)
	}
}

// TestSaveJudgedFallbackHere: a result neither its store nor the temp
// directory takes goes to the current directory, and the problem says
// where it went (or, saved nowhere, that it was printed).
func TestSaveJudgedFallbackHere(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Dir(file))
	// The store and the temp directory are under a file: neither can
	// be made.
	res := &results.Result{Schema: results.SchemaVersion, ID: "r2", Plugin: "p", Experiment: "e", Started: time.Now().UTC(),
		Parameters: map[string]string{"repeat": "1"}, Outcome: results.Outcome{Status: results.StatusOK}}
	run := SaveJudged(res, nil, nil, nil, filepath.Join(file, "store"), filepath.Join(file, "tmp"), nil)
	if run.SaveErr == nil {
		t.Fatal("saved under a file")
	}
	// The current directory took it.
	if run.Path == "" || filepath.Dir(run.Path) != filepath.Dir(file) {
		t.Errorf("fallback %q, want the current directory %s", run.Path, filepath.Dir(file))
	}
	if msgs := run.Problems(); len(msgs) != 1 || !strings.Contains(msgs[0], "move it into your results directory") {
		t.Errorf("problems %q", msgs)
	}
	run.Path = ""
	if msgs := run.Problems(); !strings.Contains(msgs[0], "printed in full on stdout above") {
		t.Errorf("problems with nowhere saved: %q", msgs)
	}
}

// TestFailRunKeepsTheFirstReason: a second reason is added to the first.
func TestFailRunKeepsTheFirstReason(t *testing.T) {
	res := &results.Result{Outcome: results.Outcome{Status: results.StatusOK}}
	failRun(res, "first")
	failRun(res, "second")
	if res.Outcome.Status != results.StatusFailed || res.Outcome.Reason != "first; second" {
		t.Errorf("outcome %+v", res.Outcome)
	}
}

// TestLogWriter: what a boot writes becomes a Log event a line, a
// partial line held until it ends.
func TestLogWriter(t *testing.T) {
	evs := &events{}
	w := &logWriter{opts: Options{Observe: evs.observe}}
	for _, s := range []string{"building ", "kernel\nstep 1", "/2\n", "\n"} {
		if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	var got []string
	for _, l := range eventsOf[Log](evs) {
		got = append(got, l.Line)
	}
	if strings.Join(got, "|") != "building kernel|step 1/2|" {
		t.Errorf("lines %q", got)
	}
}

// TestPreloadWarns: lab's plugins that cannot be listed cost only a
// push: a warning, no files.
func TestPreloadWarns(t *testing.T) {
	evs := &events{}
	files := Options{Observe: evs.observe}.preload(host.SearchPath{Builtin: filepath.Join(t.TempDir(), "none")}, "i386")
	w := eventsOf[Warning](evs)
	if files != nil || len(w) != 1 || !strings.Contains(w[0].Text, "their first run will push them") {
		t.Errorf("files %v, warnings %v", files, w)
	}
}

// TestGuestRecord: the result's guest is what the agent saw at boot,
// overlaid by what the plugin saw, field by field.
func TestGuestRecord(t *testing.T) {
	st := &vm.State{Config: vm.Config{Name: "c", Accel: "tcg"}}
	if g := guestOf(st); g.Uname != "" {
		t.Errorf("no agent report: %+v", g)
	}
	base := results.GuestEnv{Uname: "Linux 6.1", KernelRelease: "6.1", CPUModel: "Celeron", OnlineCPUs: 1, PresentCPUs: 1, MemTotalKB: 250000, StackKB: 8192}
	got := mergeEnv(base, results.GuestEnv{CPUModel: "Intel(R) Celeron(R) CPU 2.00GHz", StackKB: -1})
	if got.Uname != "Linux 6.1" || got.CPUModel != "Intel(R) Celeron(R) CPU 2.00GHz" || got.OnlineCPUs != 1 || got.MemTotalKB != 250000 || got.StackKB != -1 {
		t.Errorf("merged %+v", got)
	}
	m := machineOf(st)
	if m.Name != "c" || m.Accelerator != "tcg" || m.Clock != "host" {
		t.Errorf("machine record %+v", m)
	}
}

// TestHolds: a stored run is one of the plan's only if it is that run:
// plugin (at its version), experiment, profile, clock, parameters, enough
// repeats, every point, and it did not fail.
func TestHolds(t *testing.T) {
	run := rclaims.Run{Plugin: "threadbench", Experiment: "hello", Profile: "celeron-2.4", Clock: "icount:0", Params: map[string]string{"stack": "8192"},
		Repeat: 3, SweepKey: "count", Points: []string{"5", "50"}}
	good := func() *results.Result {
		return &results.Result{Plugin: "threadbench", PluginVersion: "1.2", Experiment: "hello",
			Machine:    results.MachineRecord{Profile: "celeron-2.4", Clock: "icount:0"},
			Parameters: map[string]string{"stack": "8192", "repeat": "5"}, Outcome: results.Outcome{Status: results.StatusOK},
			Sweep: &results.Sweep{Axes: []results.SweepAxis{{Key: "count", Values: []string{"5", "50", "500"}}}}}
	}
	if !holds(good(), run, "1.2") || !holds(good(), run, "") {
		t.Fatal("the run itself is not held")
	}
	for name, spoil := range map[string]func(r *results.Result){
		"another version":    func(r *results.Result) { r.PluginVersion = "1.1" },
		"another experiment": func(r *results.Result) { r.Experiment = "create" },
		"another profile":    func(r *results.Result) { r.Machine.Profile = "p4-2.4" },
		"another clock":      func(r *results.Result) { r.Machine.Clock = "host" },
		"another parameter":  func(r *results.Result) { r.Parameters["stack"] = "64" },
		"fewer repeats":      func(r *results.Result) { r.Parameters["repeat"] = "2" },
		"a point missing":    func(r *results.Result) { r.Sweep.Axes[0].Values = []string{"5"} },
		"no sweep":           func(r *results.Result) { r.Sweep = nil },
		"another axis":       func(r *results.Result) { r.Sweep.Axes[0].Key = "stack" },
		"failed":             func(r *results.Result) { r.Outcome.Status = results.StatusFailed },
	} {
		r := good()
		spoil(r)
		if holds(r, run, "1.2") {
			t.Errorf("%s: held", name)
		}
	}
	r := good()
	r.Outcome.Status = results.StatusExpectedCrash
	if !holds(r, run, "1.2") {
		t.Error("an expected crash is a finished run, not held")
	}
}

// TestRunInterruptedBeforeTheVM: Ctrl-C while the VM boots: nothing
// started, nothing saved.
func TestRunInterruptedBeforeTheVM(t *testing.T) {
	plan := onProfiles(t, fakeRunPlan(t, "create", nil), "host", "celeron-2.4")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ms := &fakeMachines{bootErr: context.Canceled}
	out, err := do(ctx, plan, Options{machines: ms})
	if err == nil || len(out.Runs) != 0 {
		t.Errorf("do = %d runs, %v", len(out.Runs), err)
	}
}

// TestSaveJudgedReadsTheStoreOnlyAcross: a run's own verdicts read the
// store only for a claim across two profiles (threadbench's E1.8a, the
// other profile's runs): a torn file there is then said; forkbench's
// claims do not read it.
func TestSaveJudgedReadsTheStoreOnlyAcross(t *testing.T) {
	for _, tt := range []struct {
		plugin, exp string
		reads       bool
	}{{"threadbench", "hello", true}, {"forkbench", "create", false}} {
		b, err := os.ReadFile(filepath.Join("..", "plugins", tt.plugin, "description.json"))
		if err != nil {
			t.Fatal(err)
		}
		desc, err := plugins.ParseDescription(b)
		if err != nil {
			t.Fatal(err)
		}
		exp, _, err := desc.Resolve(tt.exp, nil)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "torn.json"), []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
		res := &results.Result{Schema: results.SchemaVersion, ID: "r-" + tt.plugin, Plugin: tt.plugin, Experiment: tt.exp, Started: time.Now().UTC(),
			Machine:    results.MachineRecord{Profile: "xeon5130-1core", Clock: "icount:0"},
			Parameters: map[string]string{"repeat": "1"}, Outcome: results.Outcome{Status: results.StatusOK}}
		evs := &events{}
		run := SaveJudged(res, host.References(exp), host.Claims(desc.Name, exp), nil, dir, t.TempDir(), evs.observe)
		if run.SaveErr != nil {
			t.Fatal(run.SaveErr)
		}
		warned := false
		for _, w := range eventsOf[Warning](evs) {
			warned = warned || strings.Contains(w.Text, "torn.json")
		}
		if warned != tt.reads {
			t.Errorf("%s/%s: the store was read = %v, want %v", tt.plugin, tt.exp, warned, tt.reads)
		}
	}
}

// TestRunProblems: a failed run's message carries the plugin's stderr
// tail; a run that ended well has none.
func TestRunProblems(t *testing.T) {
	run := &Run{Result: &results.Result{Outcome: results.Outcome{Status: results.StatusFailed, Reason: "fork: EAGAIN", StderrTail: "panic: fork\n"}}}
	msgs := run.Problems()
	if len(msgs) != 1 || msgs[0] != "run failed: fork: EAGAIN\nplugin stderr (tail):\npanic: fork\n" {
		t.Errorf("problems %q", msgs)
	}
	run.Result.Outcome = results.Outcome{Status: results.StatusOK}
	if msgs := run.Problems(); len(msgs) != 0 {
		t.Errorf("an ok run's problems: %q", msgs)
	}
}

// TestCommandText: a recorded command line, or what stands for none.
func TestCommandText(t *testing.T) {
	if got := commandText([]string{"lab", "matrix", "m.yaml"}, "lab matrix"); got != "lab matrix m.yaml" {
		t.Errorf("commandText = %q", got)
	}
	if got := commandText(nil, "lab matrix"); got != "lab matrix" {
		t.Errorf("commandText(nil) = %q", got)
	}
}
