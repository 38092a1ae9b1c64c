package main

// --sweep and --profile A --profile B through the CLI: refusals before
// anything boots, the summary's sweep line, the comparison table, an
// interrupted sweep's save; nothing boots.

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lab/engine"
	"lab/images"
	"lab/internal/fixture"
	"lab/plugins"
	"lab/plugins/contract"
	"lab/results"
)

// The failure modes of --sweep and --profile are refused before anything
// boots, through the real CLI and forkbench's recorded description.
func TestCLIRunSweepRefusedBeforeBoot(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--sweep", "nn=1,2"}, []string{"--sweep nn", `forkbench/forktime has no parameter "nn"`, "n (int, default 2000, 1..1000000)", "lab plugins show forkbench"}},
		{[]string{"--sweep", "n=50,0"}, []string{"--sweep n=0", "out of range", "1..1000000"}},
		{[]string{"--sweep", "n=50,lots"}, []string{"--sweep n=lots", "not an integer"}},
		{[]string{"--sweep", "n"}, []string{"KEY=V1,V2,..."}},
		{[]string{"--sweep", "n=50", "--sweep", "n=100"}, []string{"--sweep n given twice", "--sweep n=50,100"}},
		{[]string{"--sweep", "n=50,100", "-p", "n=10"}, []string{"--sweep n and -p n=10 both set n"}},
		{[]string{"-e", "create", "--sweep", "n=50"}, []string{`forkbench/create has no parameter "n"`, "m (int"}},
		{[]string{"--profile", "celeron-2.4", "--profile", "nosuch"}, []string{"nosuch"}},
		{[]string{"--profile", "celeron-2.4", "--profile", "celeron-2.4"}, []string{"--profile celeron-2.4 given twice"}},
		{[]string{"--profile", "celeron-2.4", "--profile", "xeon5130-2core", "--clock", "icount"}, []string{"xeon5130-2core", "one online CPU"}},
		// Issue 22 item 12: a timeout that cannot be met booted a VM and
		// stored a failed run.
		{[]string{"--timeout", "0"}, []string{"--timeout 0s", "a positive duration"}},
		{[]string{"--timeout", "-5s"}, []string{"--timeout -5s", "a positive duration"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			root := cliEnv(t)
			// A throwaway VM unless the case names its own profiles:
			// the refusal must come before its boot.
			args := append([]string{"run", "forkbench", "--out", t.TempDir()}, tt.args...)
			if !slices.Contains(tt.args, "--profile") {
				args = append(args, "--profile", "celeron-2.4")
			}
			r := cliRun(t, args...)
			wantOutput(t, r, strings.Join(args, " "), 1, "stderr", tt.want...)
			if strings.Contains(r.stderr, "booting") {
				t.Errorf("lab run booted before refusing:\n%s", r.stderr)
			}
			noVMDirs(t, root)
		})
	}
}

// An interrupted sweep is saved whole with its points, exits 130, and its
// plot is written beside it.
func TestFinishInterruptedSweep(t *testing.T) {
	dir := t.TempDir()
	res := fixture.Swept("celeron-2.4", 1)
	res.Sweep.Points[1] = results.SweepPoint{Labels: map[string]string{"n": "100"}, Status: results.StatusInterrupted, Repeats: 0}
	res.Samples = res.Samples[:12] // the n=50 point
	res.Outcome = results.Outcome{Status: results.StatusInterrupted, Reason: "interrupted (Ctrl-C) after 1 of 2 sweep points; the finished points are kept"}
	desc := &plugins.Description{Name: "forkbench", Experiments: []plugins.Experiment{{Name: "forktime",
		Params:  []plugins.Param{{Name: "n", Type: plugins.TypeInt, Default: "2000", Help: "iterations of each loop"}},
		Metrics: []plugins.Metric{{Name: "fork_wait_us", Unit: "µs"}, {Name: "thread_create_join_us", Unit: "µs"}, {Name: "ratio", Unit: "x"}}}}}
	claims := []results.Claim{results.Claim{Claim: contract.Claim{ID: "E2.1",
		Ratio: &contract.RatioClaim{Numerator: "fork_wait_us", Denominator: "thread_create_join_us", Min: 4.5}}, Plugin: "forkbench", Bench: "forktime"}.WithKind()}
	plan := &engine.Plan{Desc: desc, Exp: &desc.Experiments[0], Claims: claims}
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	run := engine.SaveJudged(res, nil, claims, engine.ClaimProfiles(images.Builtin()), dir, "", nil)
	_, run.Plots.Sweep = engine.WritePlot(plan, []*results.Result{res}, strings.TrimSuffix(run.Path, ".json")+".svg")
	path := run.Path
	code, msg := finishCode(t, e.printRun(run, runFlags{}))
	if code != exitInterrupted || !strings.Contains(msg, "1 of 2 sweep points") {
		t.Errorf("exit %d %q, want %d saying how many points were kept", code, msg, exitInterrupted)
	}
	saved, err := results.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Outcome.Status != results.StatusInterrupted || saved.Sweep == nil || saved.Sweep.Done() != 1 || len(saved.Samples) != 12 {
		t.Errorf("saved outcome %+v, sweep %+v, %d samples; want interrupted with the n=50 point", saved.Outcome, saved.Sweep, len(saved.Samples))
	}
	if !strings.Contains(out.String(), "sweep n=50,100: 1 of 2 points done: n=100 interrupted") {
		t.Errorf("the summary does not say how far the sweep got:\n%s", out.String())
	}
	svg := strings.TrimSuffix(path, ".json") + ".svg"
	if !strings.Contains(errb.String(), "plot: "+svg) {
		t.Errorf("stderr does not print the plot path %s:\n%s", svg, errb.String())
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"<svg", "fork_wait_us", "thread_create_join_us", "n (iterations of each loop)", "1 of 2 points done", "profile celeron-2.4"} {
		if !bytes.Contains(data, []byte(w)) {
			t.Errorf("the plot has no %q", w)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".plot-*")); len(left) > 0 {
		t.Errorf("temporary plot files left: %v", left)
	}
}

// TestCLIRunNeedsRefusedBeforeBoot: a parameter value the plugin declares
// needs a console the profile lacks (printfbench's VT targets on a serial
// console) is refused before anything boots, naming the value, the
// console it needs and the profile's (issue 22 item 12: the VM booted,
// then the plugin failed).
func TestCLIRunNeedsRefusedBeforeBoot(t *testing.T) {
	for _, args := range [][]string{
		{"-e", "targets", "-p", "target=vt_shown", "--profile", "celeron-2.4"},
		{"-e", "targets", "--sweep", "target=null,vt_hidden", "--profile", "celeron-2.4"},
	} {
		root := cliEnv(t)
		all := append([]string{"run", "printfbench", "--out", t.TempDir()}, args...)
		r := cliRun(t, all...)
		wantOutput(t, r, strings.Join(all, " "), 1, "stderr", "target=vt_", "console vga or fb", "profile celeron-2.4 has console serial", "built in: xeon5130-fb")
		if strings.Contains(r.stderr, "booting") {
			t.Errorf("lab run booted before refusing:\n%s", r.stderr)
		}
		noVMDirs(t, root)
	}
	// target=all skips the VT targets on such a guest: not refused.
	cliEnv(t)
	r := cliRun(t, "run", "printfbench", "--out", t.TempDir(), "-e", "targets", "--profile", "celeron-2.4", "--timeout", "1ms")
	if strings.Contains(r.stderr, "console vga or fb") {
		t.Errorf("target=all refused on a serial console:\n%s", r.stderr)
	}
}
