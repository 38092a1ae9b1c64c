package render

import (
	"bytes"
	"strings"
	"testing"

	"lab/results"
)

// WriteSummary's notes: the undecided claims after the verdicts; the
// pointer to the profile's own claims after the published figures, or
// instead of saying there are none.
func TestWriteSummaryNotes(t *testing.T) {
	fx := renderFixtures(t)
	noFigures := *fx["crashed"]
	noFigures.Machine = results.MachineRecord{Profile: "celeron-2.4", Accelerator: "tcg", Clock: "host"}
	noFigures.Comparisons = nil
	const (
		undecided = "E2.1a is still inconclusive after 5 repeats and needs 7: `lab run forkbench --repeat 7` (about 1 min) or `lab reproduce E2.1a` decides it"
		pointer   = "celeron-2.4 stands for the machine of E1.6 and E1.7 (forkbench/create): `lab reproduce E1.6 E1.7` decides them, about 4 min"
		none      = "no published figure of the machine celeron-2.4 stands for in this experiment"
	)
	notes := Notes{Undecided: []string{undecided}, Elsewhere: []string{pointer}}
	tests := []struct {
		name    string
		r       *results.Result
		notes   Notes
		order   []string // lines in this order
		without []string
	}{
		{"no figures: the pointer instead", &noFigures, notes, []string{"claims of threads/sweep", "  " + undecided, "metric", pointer, "run "}, []string{none}},
		{"no figures, no pointer", &noFigures, Notes{}, []string{"metric", none}, []string{pointer}},
		{"figures, then the pointer", fx["forktime"], notes, []string{"claims of forkbench/forktime", "  " + undecided, "published, ", pointer, "(", "run "}, []string{"no published figure"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteSummary(&buf, tt.r, false, tt.notes); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(buf.String(), "\n")
			at := 0
			for _, w := range tt.order {
				i := at
				for i < len(lines) && !strings.HasPrefix(lines[i], w) {
					i++
				}
				if i == len(lines) {
					t.Fatalf("no line starting %q after line %d in\n%s", w, at, buf.String())
				}
				at = i + 1
			}
			for _, w := range tt.without {
				if strings.Contains(buf.String(), w) {
					t.Errorf("says %q:\n%s", w, buf.String())
				}
			}
		})
	}
}

// WriteSummary's recap: the summary ends with the verdicts of the claims
// lab chose the experiment for, each with its reason and no fidelity
// note, and ours beside a reason that holds none of our numbers; a claim
// not recapped is not there.
func TestWriteSummaryRecap(t *testing.T) {
	r := &results.Result{Plugin: "forkbench", Experiment: "create",
		Machine: results.MachineRecord{Profile: "celeron-2.4", Accelerator: "tcg", Clock: "host"},
		Samples: []results.Sample{{Metric: "process_ms", Value: 1.4, Unit: "ms"}, {Metric: "process_ms", Value: 1.5, Unit: "ms", Repeat: 1}},
		Verdicts: []results.Verdict{
			{Claim: "E1.6", Verdict: results.NotReproduced, Statement: "threads are 10+ times faster",
				Reason:  "process_ms / thread_ms = 4.17 (median of per-repeat ratios, 6 pairs), claimed at least 10: below 10, p = 0.016. Fidelity: only stands in",
				Numbers: []results.Number{{Name: "median process_ms / thread_ms", Value: 4.17, Unit: "x"}}, Rule: "process_ms / thread_ms at least 10, per repeat"},
			{Claim: "E1.7", Verdict: results.NotComparable, Statement: "a fork averages 0.18 ms",
				Reason: "not comparable before any run: the published [0.175, 0.185] ms is 1.06x wide. Fidelity: the count is Linux 6.1's", Rule: "process_ms in [0.175, 0.185] ms (an absolute time)"},
			{Claim: "E9.9", Verdict: results.Reproduced, Statement: "another", Reason: "held"},
		}}
	var buf bytes.Buffer
	if err := WriteSummary(&buf, r, false, Notes{Recap: []string{"E1.6", "E1.7"}}); err != nil {
		t.Fatal(err)
	}
	out := strings.TrimRight(buf.String(), "\n")
	want := `the verdicts on celeron-2.4's claims, ours beside the published:
  E1.6  not reproduced  process_ms / thread_ms = 4.17 (median of per-repeat ratios, 6 pairs), claimed at least 10: below 10, p = 0.016
  E1.7  not comparable  ours: process_ms 1.45 ms (median of 2); not comparable before any run: the published [0.175, 0.185] ms is 1.06x wide`
	if !strings.HasSuffix(out, want) {
		t.Errorf("summary ends\n%s\nwant it to end\n%s", out, want)
	}
	buf.Reset()
	if err := WriteSummary(&buf, r, false, Notes{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "ours beside the published") {
		t.Errorf("a summary with no recap recaps:\n%s", buf.String())
	}
}
