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
