package render

import (
	"encoding/xml"
	"lab/internal/fixture"
	"strings"
	"testing"

	"lab/results/stats"

	"lab/results"
)

func TestJUnit(t *testing.T) {
	ok := fixture.Run("r-ok", "c", "host", fixture.Series("t", "s", nil, 1, 2))
	ok.Plugin, ok.Experiment = "forkbench", "forktime"
	ok.Summary = stats.Summarize(ok.Samples)
	ok.Verdicts = []results.Verdict{
		{Claim: "E2.1", Statement: "fork costs more", Verdict: results.Reproduced, Reason: "4.5x"},
		{Claim: "E1.7", Statement: "0.18 ms", Verdict: results.NotReproduced, Reason: "0.5 ms"},
		{Claim: "E1.6", Statement: "10x", Verdict: results.Inconclusive, Reason: "noise"},
	}
	bad := fixture.Run("r-bad", "c", "host")
	bad.Plugin, bad.Experiment, bad.Outcome = "threadbench", "hello", results.Outcome{Status: "failed", Reason: "the guest died", StderrTail: "oops"}
	var b strings.Builder
	if err := WriteJUnit(&b, []*results.Result{ok, bad}); err != nil {
		t.Fatal(err)
	}
	var doc JUnitSuites
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	if doc.Tests != 5 || doc.Failures != 2 || doc.Skipped != 1 || len(doc.Suites) != 2 {
		t.Errorf("tests %d failures %d skipped %d suites %d, want 5, 2, 1, 2:\n%s", doc.Tests, doc.Failures, doc.Skipped, len(doc.Suites), b.String())
	}
	if f := doc.Suites[0].Cases[2].Failure; f == nil || !strings.Contains(f.Message, "not reproduced: 0.5 ms") {
		t.Errorf("E1.7's case: %+v", doc.Suites[0].Cases[2])
	}
	if f := doc.Suites[1].Cases[0].Failure; f == nil || f.Message != "the guest died" || f.Text != "oops" {
		t.Errorf("the failed run's case: %+v", doc.Suites[1].Cases[0])
	}
}

func TestExportFormats(t *testing.T) {
	r := fixture.Run("r1", "c", "host", fixture.Series("t", "s", nil, 1, 2))
	r.Summary = stats.Summarize(r.Samples)
	for _, f := range Formats {
		var b strings.Builder
		if err := Export(&b, f, []*results.Result{r, r}); err != nil || b.Len() == 0 {
			t.Errorf("Export %s: %v (%d bytes)", f, err, b.Len())
		}
	}
	var b strings.Builder
	Export(&b, "csv", []*results.Result{r, r})
	if n := strings.Count(b.String(), "\n"); n != 5 {
		t.Errorf("csv of two runs of two samples: %d lines, want a header and 4 rows:\n%s", n, b.String())
	}
	if err := Export(&b, "yaml", nil); err == nil || !strings.Contains(err.Error(), "want one of table, json") {
		t.Errorf("Export yaml = %v", err)
	}
}

// TestVerdictCase: a run's own verdict as a JUnit case follows what the
// verdict means (docs/claims.md, "Verdict kinds"): reproduced passes;
// not reproduced and the dependent verdicts (strata decided both ways,
// so the claim did not hold across this machine's) fail with the
// verdict and reason; the rest are skipped with theirs.
func TestVerdictCase(t *testing.T) {
	for _, v := range results.VerdictOrder {
		c := VerdictCase("p.e", results.Verdict{Claim: "E1", Statement: "s", Verdict: v, Reason: "because"})
		want := "skipped"
		switch {
		case v == results.Reproduced:
			want = "pass"
		case v == results.NotReproduced, results.IsDependent(v):
			want = "failure"
		}
		got, p := "pass", (*JUnitProblem)(nil)
		switch {
		case c.Failure != nil:
			got, p = "failure", c.Failure
		case c.Skipped != nil:
			got, p = "skipped", c.Skipped
		}
		if got != want {
			t.Errorf("%s: %s, want %s", v, got, want)
		}
		if p != nil && p.Message != v+": because" {
			t.Errorf("%s: message %q, want %q", v, p.Message, v+": because")
		}
		if got == "failure" && p.Type != v {
			t.Errorf("%s: failure type %q, want the verdict", v, p.Type)
		}
	}
}
