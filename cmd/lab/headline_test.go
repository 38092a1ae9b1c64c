package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"lab/engine"
	"lab/results"
)

// The headline (issue 21 item 4): `lab run forkbench` with no --repeat
// asks the engine to choose the repeats, and its summary ends with what
// the engine says beyond the result (which repeats decide; where the
// profile's machine has claims). What the engine chooses and says is
// engine/run_test.go's (TestRunOnVMThatIsUp, TestRunRepeatChosen).
func TestHeadline(t *testing.T) {
	cliEnv(t)
	e := &env{roots: readRoots(getenvFor(t)), args: []string{"lab", "run", "forkbench"}}
	f := runFlags{plugin: "forkbench", repeat: 1, timeout: time.Hour, out: t.TempDir(), chooseRepeat: true, profiles: []string{"celeron-2.4"}}
	req, err := e.request(f)
	if err != nil {
		t.Fatal(err)
	}
	if !req.ChooseRepeat {
		t.Error("lab run with no --repeat does not ask the engine to choose")
	}
	f.chooseRepeat = false
	if req, _ := e.request(f); req.ChooseRepeat {
		t.Error("lab run --repeat 1 asks the engine to choose")
	}
	pointer := "celeron-2.4 stands for the machine of E1.6, E1.7 and E1.10 (forkbench/create): `lab reproduce E1.6 E1.7 E1.10` decides them, about 4 min"
	undecided := "E1.6 is still inconclusive after 3 repeats and needs 5: `lab run forkbench --repeat 5` (about 2 min) or `lab reproduce E1.6` decides it"
	res := &results.Result{Plugin: "forkbench", Experiment: "forktime", Machine: results.MachineRecord{Profile: "celeron-2.4", Accelerator: "tcg", Clock: "host"}}
	var out, errs bytes.Buffer
	e.stdout, e.stderr = &out, &errs
	if err := e.printRun(&engine.Run{Result: res, Elsewhere: []string{pointer}, Undecided: []string{undecided}}, f); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{pointer, undecided} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary:\n%s\nwant it to say %q", out.String(), want)
		}
	}
	if strings.Contains(out.String(), "no published figure") {
		t.Errorf("summary:\n%s\nsays there is no published figure of the machine, beside the pointer at its claims", out.String())
	}
}
