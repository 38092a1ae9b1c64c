package main

// `lab run` never loses a finished measurement, and --clock: in-process,
// nothing boots.

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/engine"
	"lab/images"
	"lab/results"
)

// The exit code of a run whose result could not be saved where asked
// (documented in `lab run --help` and docs/commands.md).
const wantExitSaveFailed = 74

func TestRunUnwritableOutFailsFast(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(file, "results")
	tests := []struct {
		name string
		args []string
		env  string // LAB_RESULTS_DIR
	}{
		// --profile: the old code booted a throwaway VM before it
		// looked at --out.
		{"--out with --profile", []string{"run", "forkbench", "--profile", "celeron-2.4", "--out", bad}, ""},
		{"--out with a VM", []string{"run", "forkbench", "--out", bad}, ""},
		{"default dir", []string{"run", "forkbench", "--profile", "celeron-2.4"}, bad},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := cliEnv(t)
			setEnv(t, "LAB_RESULTS_DIR", tt.env)
			start := time.Now()
			r := cliRun(t, tt.args...)
			wantOutput(t, r, strings.Join(tt.args, " "), 1, "stderr", bad, "--out DIR", "nothing was started")
			if strings.Contains(r.stderr, "booting") {
				t.Errorf("lab run booted before checking the results directory:\n%s", r.stderr)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v to refuse", took)
			}
			noVMDirs(t, root)
		})
	}
}

func TestRunCreatesMissingOut(t *testing.T) {
	cliEnv(t)
	out := filepath.Join(t.TempDir(), "new", "results")
	// The plugin does not exist: the run fails after the check, before a VM.
	r := cliRun(t, "run", "nosuchplugin", "--out", out)
	wantOutput(t, r, "run nosuchplugin", 1, "stderr", `unknown plugin "nosuchplugin"`)
	if fi, err := os.Stat(out); err != nil || !fi.IsDir() {
		t.Errorf("--out %s was not created: %v", out, err)
	}
}

func TestRunClockFlag(t *testing.T) {
	cliEnv(t)
	r := cliRun(t, "run", "forkbench", "--vm", "x", "--clock", "icount")
	wantOutput(t, r, "run --vm x --clock icount", 1, "stderr", "--clock icount needs --profile", "lab up --clock icount")
	r = cliRun(t, "run", "--help")
	wantOutput(t, r, "run --help", 0, "stdout", "--clock", "exits 74")
}

// finishResult is a small finished run.
func finishResult() *results.Result {
	return &results.Result{
		ID: "20260102T150405.000000Z-forkbench-forktime-abcdef", Started: time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC),
		Command: []string{"lab", "run", "forkbench"}, Plugin: "forkbench", Experiment: "forktime",
		Machine: results.MachineRecord{Name: "celeron-2.4", Profile: "celeron-2.4", Accelerator: "tcg", Clock: "host"},
		Samples: []results.Sample{{Metric: "fork_wait_us", Value: 80, Unit: "us"}, {Metric: "fork_wait_us", Value: 90, Unit: "us", Repeat: 1}},
		Outcome: results.Outcome{Status: "ok"},
	}
}

// brokenDir returns a results directory path that cannot be created.
func brokenDir(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(file, "results")
}

// finish saves res as a run's end does (engine.SaveJudged, the fallback
// in the roots' temp directory) and prints it as lab run does.
func (e *env) finish(res *results.Result, refs []results.Reference, claims []results.Claim, dir string, f runFlags) error {
	run := engine.SaveJudged(res, refs, claims, engine.ClaimProfiles(images.Builtin()), dir, e.roots.tmp, observer(e.stderr))
	return e.printRun(run, f)
}

func finishCode(t *testing.T, err error) (int, string) {
	t.Helper()
	var ec *exitCode
	if err == nil {
		return 0, ""
	}
	if !errors.As(err, &ec) {
		t.Fatalf("finish returned %v, want an exit code", err)
	}
	return ec.code, ec.msg
}

// The save fails after the run (the directory became unusable between the
// check and the save): the document goes to a fallback file in the temp
// dir, its path is printed, and the exit code says so.
func TestFinishSaveFailsFallbackFile(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		tmp := t.TempDir()
		setEnv(t, "TMPDIR", tmp)
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, roots: testRoots(t)}
		dir := brokenDir(t)
		code, msg := finishCode(t, e.finish(finishResult(), nil, nil, dir, runFlags{json: asJSON}))
		if code != wantExitSaveFailed {
			t.Errorf("json=%v: exit %d, want %d (save failed)", asJSON, code, wantExitSaveFailed)
		}
		fallback := filepath.Join(tmp, finishResult().ID+".json")
		if !strings.Contains(msg, dir) || !strings.Contains(msg, fallback) {
			t.Errorf("json=%v: message %q does not name the directory %s and the fallback %s", asJSON, msg, dir, fallback)
		}
		if !strings.Contains(errb.String(), "result: "+fallback+"\n") {
			t.Errorf("json=%v: stderr %q does not print the fallback path", asJSON, errb.String())
		}
		saved, err := results.Load(fallback)
		if err != nil {
			t.Fatalf("json=%v: fallback: %v", asJSON, err)
		}
		if len(saved.Samples) != 2 || len(saved.Summary) != 1 || saved.Outcome.Status != "ok" {
			t.Errorf("json=%v: fallback holds %d samples, %d summaries, outcome %+v; want the whole document", asJSON, len(saved.Samples), len(saved.Summary), saved.Outcome)
		}
		if !strings.Contains(out.String(), "fork_wait_us") {
			t.Errorf("json=%v: the summary was not printed:\n%s", asJSON, out.String())
		}
	}
}

// Nowhere to save at all (results dir, temp dir and current dir unusable):
// the whole document is printed on stdout.
func TestFinishSaveFailsEverywherePrints(t *testing.T) {
	setEnv(t, "TMPDIR", brokenDir(t))
	gone := t.TempDir()
	t.Chdir(gone)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	for _, asJSON := range []bool{false, true} {
		var out, errb bytes.Buffer
		e := &env{stdout: &out, stderr: &errb, roots: testRoots(t)}
		code, msg := finishCode(t, e.finish(finishResult(), nil, nil, brokenDir(t), runFlags{json: asJSON}))
		if code != wantExitSaveFailed || !strings.Contains(msg, "printed in full on stdout") {
			t.Errorf("json=%v: exit %d, message %q; want %d saying it was printed", asJSON, code, msg, wantExitSaveFailed)
		}
		doc := out.String()
		if !asJSON {
			i := strings.Index(doc, "\n{")
			if i < 0 {
				t.Fatalf("no JSON document after the table:\n%s", doc)
			}
			doc = doc[i+1:]
		}
		var res results.Result
		if err := json.Unmarshal([]byte(doc), &res); err != nil || res.ID != finishResult().ID || len(res.Samples) != 2 {
			t.Errorf("json=%v: stdout does not hold the whole document (%v):\n%s", asJSON, err, out.String())
		}
		if strings.Contains(errb.String(), "result: ") {
			t.Errorf("json=%v: a result path was printed though nothing was saved: %s", asJSON, errb.String())
		}
	}
}

// A failed run that also cannot be saved says both, with the save code.
func TestFinishFailedRunAndSave(t *testing.T) {
	setEnv(t, "TMPDIR", t.TempDir())
	res := finishResult()
	res.Outcome = results.Outcome{Status: "failed", Reason: "timed out"}
	var out, errb bytes.Buffer
	code, msg := finishCode(t, (&env{stdout: &out, stderr: &errb, roots: testRoots(t)}).finish(res, nil, nil, brokenDir(t), runFlags{json: true}))
	if code != wantExitSaveFailed || !strings.Contains(msg, "run failed: timed out") || !strings.Contains(msg, "saving the result") {
		t.Errorf("exit %d, message %q; want %d naming both failures", code, msg, wantExitSaveFailed)
	}
}

// A non-finite sample that slipped through to the host does not make the
// document unwritable: it is dropped, named in the outcome, and the rest
// saved.
func TestFinishNonFiniteSample(t *testing.T) {
	res := finishResult()
	res.Samples = append(res.Samples, results.Sample{Metric: "ratio", Value: math.NaN(), Unit: "x"})
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code, msg := finishCode(t, (&env{stdout: &out, stderr: &errb, roots: testRoots(t)}).finish(res, nil, nil, dir, runFlags{}))
	if code != 1 || !strings.Contains(msg, "metric ratio") || !strings.Contains(msg, "NaN") {
		t.Errorf("exit %d, message %q; want 1 naming the dropped metric", code, msg)
	}
	saved, err := results.Load(filepath.Join(dir, res.ID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.Samples) != 2 || saved.Outcome.Status != "failed" || !strings.Contains(saved.Outcome.Reason, "metric ratio") {
		t.Errorf("saved %d samples, outcome %+v; want the 2 finite ones and the reason", len(saved.Samples), saved.Outcome)
	}
}

// TestCLIParamWithCommas: -p passes a value with commas whole (netbench's
// designs=0,1,6; issue #11 asks for exactly that): slice flags do not
// split at commas, so the run gets as far as looking for its VM.
func TestCLIParamWithCommas(t *testing.T) {
	cliEnv(t)
	r := cliRun(t, "run", "netbench", "-p", "designs=0,1,9", "--vm", "none")
	if strings.Contains(r.stderr, `want KEY=VALUE`) {
		t.Errorf("-p designs=0,1,9 was split at its commas:\n%s", r.stderr)
	}
	wantOutput(t, r, "run netbench -p designs=0,1,9", 1, "stderr", `vm "none" is not up`)
}
