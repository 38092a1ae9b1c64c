package claims_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"lab/plugins/contract"
	"lab/results"
	rclaims "lab/results/claims"
)

// Repeats added to a cell (Result.AddTo) pool with the run they add to:
// three repeats and three more decide what three alone cannot, whichever
// way the evidence points, and in any order; a run that adds to a run of
// another cell, or to a later one, is judged alone; a later run that adds
// to nothing supersedes the pair.

// addRun is a ratio run of the celeron-2.4 host cell finished min minutes
// after t0, with one repeat per ratio, adding to addTo.
func addRun(id string, min int, addTo string, ratios ...float64) *results.Result {
	r := ratioRun(id, "celeron-2.4", "host", min, ratios)
	r.Parameters["repeat"] = "3"
	r.AddTo = addTo
	return r
}

func TestJudgeAddedRepeats(t *testing.T) {
	c := claim(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "proc_ms", Denominator: "thr_ms", Min: 10}})
	over, under := times(12, noise...), []float64{8.0, 8.4, 7.9, 8.8, 8.1, 8.3}
	within := []float64{9.0, 11.0, 9.5, 10.8, 9.8, 10.3}
	// Only stdout=pty is pty's: x, at stdout=null, is out of its scope.
	pty := claim(contract.Claim{Ratio: c.Ratio, Scope: &contract.Scope{Params: map[string]string{"stdout": "pty"}}})
	other := addRun("x", 0, "", over[:3]...)
	other.Parameters["stdout"] = "null"
	checkJudged(t, []judgeCase{
		{"three alone", c, []*results.Result{addRun("a", 0, "", over[:3]...)}, false, results.Inconclusive,
			[]string{"too few pairs"}},
		{"R", c, []*results.Result{addRun("a", 0, "", over[:3]...), addRun("b", 10, "a", over[3:]...)}, false, results.Reproduced,
			[]string{"6 pairs", "above 10, p = 0.016"}},
		{"NR", c, []*results.Result{addRun("a", 0, "", under[:3]...), addRun("b", 10, "a", under[3:]...)}, false, results.NotReproduced,
			[]string{"6 pairs", "below 10, p = 0.016"}},
		{"I", c, []*results.Result{addRun("a", 0, "", within[:3]...), addRun("b", 10, "a", within[3:]...)}, false, results.Inconclusive,
			[]string{"within the noise"}},
		{"a chain of three", c, []*results.Result{addRun("a", 0, "", over[:2]...), addRun("b", 10, "a", over[2:4]...),
			addRun("c", 20, "b", over[4:]...)}, false, results.Reproduced, []string{"6 pairs"}},
		{"adds to a run not stored", c, []*results.Result{addRun("b", 10, "gone", over[3:]...)}, false, results.Inconclusive,
			[]string{"too few pairs"}},
		{"adds to another cell", pty, []*results.Result{other, addRun("b", 10, "x", over[3:]...)}, false, results.Inconclusive,
			[]string{"too few pairs"}},
		{"adds to a later run", c, []*results.Result{addRun("a", 20, "", over[:3]...), addRun("b", 10, "a", over[3:]...)}, false, results.Inconclusive,
			[]string{"too few pairs"}},
		{"superseded by a later run", c, []*results.Result{addRun("a", 0, "", over[:3]...), addRun("b", 10, "a", over[3:]...),
			addRun("c", 20, "", under[:3]...)}, false, results.Inconclusive, []string{"too few pairs"}},
	})
	// Who decides, and why the others do not.
	sts := rclaims.JudgeStore([]results.Claim{c}, []*results.Result{addRun("a", 0, "", over[:3]...), addRun("b", 10, "a", over[3:]...),
		addRun("old", -10, "", under...)}, profiles, rclaims.Options{})
	v := sts[0].Judged
	if !slices.Equal(v.Runs, []string{"a", "b"}) {
		t.Errorf("decided by %v, want a and b", v.Runs)
	}
	if out := v.OutOfScope; len(out) != 1 || out[0].Run != "old" || !strings.Contains(out[0].Reason, "a later run of the same cell decides it (b;") {
		t.Errorf("out of it: %+v", out)
	}
}

// The pooled verdict does not depend on the order the runs are read in.
func TestJudgeAddedRepeatsOrderFree(t *testing.T) {
	c := claim(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "proc_ms", Denominator: "thr_ms", Min: 10}})
	over := times(12, noise...)
	store := []*results.Result{addRun("a", 0, "", over[:2]...), addRun("b", 10, "a", over[2:4]...), addRun("c", 20, "b", over[4:]...),
		addRun("old", -10, "", 8, 8, 8, 8, 8, 8)}
	want, err := json.Marshal(rclaims.JudgeStore([]results.Claim{c}, store, profiles, rclaims.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(6) {
		got, _ := json.Marshal(rclaims.JudgeStore([]results.Claim{c}, shuffled(t, store, seed), profiles, rclaims.Options{}))
		if string(got) != string(want) {
			t.Errorf("shuffle %d:\n%s\nwant\n%s", seed, got, want)
		}
	}
}

// A run's own verdicts (Judge, its summary) pool the runs it adds to, as
// the store's judge does; a run it names of another cell is not pooled.
func TestJudgeRunAddedTo(t *testing.T) {
	c := claim(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "proc_ms", Denominator: "thr_ms", Min: 10}})
	over := times(12, noise...)
	a, b := addRun("a", 0, "", over[:3]...), addRun("b", 10, "a", over[3:]...)
	rclaims.Judge(b, []results.Claim{c}, []*results.Result{a}, profiles)
	if len(b.Verdicts) != 1 || b.Verdicts[0].Verdict != results.Reproduced || !slices.Equal(b.Verdicts[0].Runs, []string{"a", "b"}) {
		t.Errorf("b's own verdicts: %+v", b.Verdicts)
	}
	a.Parameters["stdout"] = "null"
	rclaims.Judge(b, []results.Claim{c}, []*results.Result{a}, profiles)
	if len(b.Verdicts) != 1 || b.Verdicts[0].Verdict != results.Inconclusive || !slices.Equal(b.Verdicts[0].Runs, []string{"b"}) {
		t.Errorf("b adding to a run of another cell: %+v", b.Verdicts)
	}
}
