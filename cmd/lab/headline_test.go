package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"lab/engine"
	"lab/results"
	"lab/results/render"
)

// The headline (issue 21 item 4) from forkbench's recorded description,
// through the flags' plan; nothing boots. `lab run forkbench` on the
// Celeron runs forktime, which no Celeron claim is about: one repeat, and
// its summary points at the command that decides E1.6 and E1.7 (create)
// instead of saying there is no figure of the machine.
func TestHeadline(t *testing.T) {
	cliEnv(t)
	e := &env{roots: readRoots(getenvFor(t)), args: []string{"lab", "run", "forkbench"}}
	plan := func(t *testing.T, f runFlags) *engine.Plan {
		t.Helper()
		f.plugin, f.repeat, f.timeout, f.out, f.chooseRepeat = "forkbench", 1, time.Hour, t.TempDir(), true
		req, err := e.request(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := engine.NewPlan(req)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("forktime on the celeron", func(t *testing.T) {
		p := plan(t, runFlags{profiles: []string{"celeron-2.4"}})
		ch := engine.ChooseRepeat(p, engine.DefaultRepeatBudget)
		if ch.Repeat != 1 || ch.String() != "" {
			t.Errorf("ChooseRepeat = %d %q, want 1 repeat and nothing said: no claim of forktime is the Celeron's", ch.Repeat, ch.String())
		}
		res := &results.Result{Plugin: "forkbench", Experiment: "forktime", Machine: results.MachineRecord{Profile: "celeron-2.4", Accelerator: "tcg", Clock: "host"}}
		var buf bytes.Buffer
		if err := render.WriteSummary(&buf, res, false, summaryNotes(p, ch, res)); err != nil {
			t.Fatal(err)
		}
		want := "celeron-2.4 stands for the machine of E1.6, E1.7 and E1.10 (forkbench/create): `lab reproduce E1.6 E1.7 E1.10` decides them, about "
		if !strings.Contains(buf.String(), want) || strings.Contains(buf.String(), "no published figure") {
			t.Errorf("summary:\n%s\nwant it to say %q instead of no published figure", buf.String(), want)
		}
	})
	t.Run("create at the claims' size under icount", func(t *testing.T) {
		p := plan(t, runFlags{profiles: []string{"celeron-2.4"}, clock: "icount:0", experiment: "create", params: []string{"m=10000"}})
		ch := engine.ChooseRepeat(p, engine.DefaultRepeatBudget)
		if ch.Need < 5 || strings.Join(ch.Claims, " ") != "E1.6 E1.7 E1.10" || !strings.Contains(ch.String(), "E1.6, E1.7 and E1.10 need") {
			t.Errorf("ChooseRepeat = %+v %q, want what E1.6, E1.7 and E1.10 need", ch, ch.String())
		}
	})
	t.Run("no VM up: one repeat, the run says why it cannot start", func(t *testing.T) {
		if ch := engine.ChooseRepeat(plan(t, runFlags{}), engine.DefaultRepeatBudget); ch.Repeat != 1 || ch.String() != "" {
			t.Errorf("ChooseRepeat = %+v, want 1 repeat", ch)
		}
	})
}
