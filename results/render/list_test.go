package render

import (
	"bytes"
	"strings"
	"testing"

	"lab/internal/fixture"
	"lab/results"
)

func TestWriteRuns(t *testing.T) {
	r := fixture.Run("r1", "celeron-2.4", "icount:0", fixture.Series("t", "ms", nil, 1, 2, 3))
	if got := VerdictCounts(r); got != "-" {
		t.Errorf("VerdictCounts without claims = %q, want -", got)
	}
	r.Verdicts = []results.Verdict{{Verdict: results.Inconclusive}, {Verdict: results.Reproduced}, {Verdict: results.Reproduced}}
	if got, want := VerdictCounts(r), "2 reproduced, 1 inconclusive"; got != want {
		t.Errorf("VerdictCounts = %q, want %q", got, want)
	}
	var b bytes.Buffer
	if err := WriteRuns(&b, []*results.Result{r}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], "celeron-2.4") ||
		!strings.Contains(lines[1], "p/e") || !strings.Contains(lines[1], " 3 ") || !strings.Contains(lines[1], "icount:0") {
		t.Errorf("WriteRuns:\n%s", b.String())
	}
}
