package results

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/results/compare"
	"lab/results/render"
	"lab/results/stats"
)

func TestParseFilter(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f, err := ParseFilter("profile=celeron-2.4, plugin=forkbench,experiment=forktime,outcome=ok,since=24h", now)
	if err != nil {
		t.Fatal(err)
	}
	want := Filter{Profile: "celeron-2.4", Plugin: "forkbench", Experiment: "forktime", Outcome: "ok", Since: now.Add(-24 * time.Hour)}
	if f != want {
		t.Errorf("ParseFilter = %+v, want %+v", f, want)
	}
	if back, err := ParseFilter(f.String(), now); err != nil || !back.Since.Equal(f.Since) || back.Plugin != f.Plugin {
		t.Errorf("String does not read back: %q -> %+v, %v", f.String(), back, err)
	}
	for in, msg := range map[string]string{
		"profile":          `"profile" is not key=value`,
		"colour=red":       `unknown key "colour"`,
		"outcome=great":    `outcome "great": want one of ok, failed`,
		"since=yesterday":  "a duration back from now (24h, 90m), a day",
		"since=-5h":        "without a sign",
		"plugin=":          "is not key=value",
		"since=2026-13-40": "a day (2026-12-01)",
	} {
		if _, err := ParseFilter(in, now); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseFilter(%q) = %v, want an error saying %q", in, err, msg)
		}
	}
	if d, err := ParseSince("2026-11-30", now); err != nil || d.Day() != 30 {
		t.Errorf("ParseSince(day) = %v, %v", d, err)
	}
}

// store writes runs into a new store and returns its directory.
func store(t *testing.T, runs ...*Result) string {
	t.Helper()
	dir := t.TempDir()
	for _, r := range runs {
		if _, err := Save(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSelectSkipsCorruptFiles(t *testing.T) {
	day := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a := run("20261201T100000Z-forkbench-forktime-aaaaaa", "celeron-2.4", "host", series("fork_us", "µs", nil, 1, 2, 3))
	a.Plugin, a.Experiment, a.Started = "forkbench", "forktime", day
	b := run("20261201T110000Z-threadbench-hello-bbbbbb", "p4-2.4", "host", series("real_s", "s", nil, 1))
	b.Plugin, b.Experiment, b.Started, b.Outcome = "threadbench", "hello", day.Add(time.Hour), Outcome{Status: "failed", Reason: "x"}
	dir := store(t, a, b)
	// A truncated file and one that is not JSON at all.
	whole, err := os.ReadFile(filepath.Join(dir, a.ID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "20261201T120000Z-forkbench-forktime-cccccc.json"), whole[:len(whole)/2], 0o644)
	os.WriteFile(filepath.Join(dir, "20261201T130000Z-forkbench-forktime-dddddd.json"), []byte("\x00\x01garbage"), 0o644)

	got, errs := Select(dir, Filter{})
	if len(got) != 2 || got[0].ID != b.ID || got[1].ID != a.ID {
		t.Fatalf("Select = %d runs, want the two good ones newest first", len(got))
	}
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "dddddd.json") || !strings.Contains(errs[1].Error(), "cccccc.json") {
		t.Errorf("errors do not name the bad files: %v", errs)
	}
	for _, tt := range []struct {
		f    Filter
		want string
	}{
		{Filter{Plugin: "forkbench"}, a.ID},
		{Filter{Profile: "p4-2.4"}, b.ID},
		{Filter{Experiment: "forktime"}, a.ID},
		{Filter{Outcome: "failed"}, b.ID},
		{Filter{Since: day.Add(30 * time.Minute)}, b.ID},
	} {
		got, _ := Select(dir, tt.f)
		if len(got) != 1 || got[0].ID != tt.want {
			t.Errorf("Select(%s) = %v, want only %s", tt.f, ids(got), tt.want)
		}
	}
}

func ids(rs []*Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestCompareSides(t *testing.T) {
	base := []float64{100, 101, 99, 100.5, 99.5, 100.2, 99.8}
	one := func(id, profile string, metric, unit string, vals []float64) compare.Side {
		return compare.Side{Name: id, Runs: []*Result{run(id, profile, "host", series(metric, unit, nil, vals...))}}
	}
	slower := scaled(base, 1.10)
	cs := compare.CompareSides(one("a", "c", "t", "ms", base), one("b", "c", "t", "ms", slower))
	if len(cs) != 1 {
		t.Fatalf("%d changes", len(cs))
	}
	c := cs[0]
	if !c.Significant || !c.Regression || c.Delta != "+10.00%" || c.A.N != 7 || c.A.CI == "" || c.P >= 0.05 {
		t.Errorf("a 10%% slowdown over 7 quiet samples: %+v", c)
	}
	if regs := compare.Regressions(cs, 5); len(regs) != 1 {
		t.Errorf("Regressions(5%%) = %d, want 1", len(regs))
	}
	if regs := compare.Regressions(cs, 15); len(regs) != 0 {
		t.Errorf("Regressions(15%%) = %d, want 0: the change is 10%%", len(regs))
	}
	// A rate that falls is the regression; one that rises is not.
	cs = compare.CompareSides(one("a", "c", "conn_per_s", "conn/s", base), one("b", "c", "conn_per_s", "conn/s", slower))
	if !cs[0].HigherIsBetter || cs[0].Regression || !cs[0].Significant {
		t.Errorf("a rate that rose 10%%: %+v", cs[0])
	}
	// Noise: the same distribution shuffled.
	cs = compare.CompareSides(one("a", "c", "t", "ms", base), one("b", "c", "t", "ms", []float64{100.2, 99.8, 100, 101, 99, 99.5, 100.5}))
	if cs[0].Significant || cs[0].Delta != "~" || cs[0].Regression {
		t.Errorf("the same samples: %+v", cs[0])
	}
	// Three samples a side: warned, never significant.
	cs = compare.CompareSides(one("a", "c", "t", "ms", base[:3]), one("b", "c", "t", "ms", slower[:3]))
	if cs[0].Significant || len(cs[0].Warnings) == 0 || !strings.Contains(strings.Join(cs[0].Warnings, " "), "--repeat 4") || cs[0].A.CI != "" {
		t.Errorf("3 samples a side: %+v", cs[0])
	}
	// Series on one side only.
	a := one("a", "c", "t", "ms", base)
	b := one("b", "c", "u", "ms", base)
	cs = compare.CompareSides(a, b)
	if len(cs) != 2 || cs[0].Only != "a" || cs[1].Only != "b" {
		t.Errorf("one-sided series: %+v", cs)
	}
	var out strings.Builder
	if err := compare.WriteChanges(&out, a, one("b", "c", "t", "ms", slower), compare.CompareSides(a, one("b", "c", "t", "ms", slower))); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"+10.00% (worse)", "p=0.001 n=7+7", "100 ms", "±", "Mann-Whitney U"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("WriteChanges lacks %q:\n%s", s, out.String())
		}
	}
}

func TestCheckComparable(t *testing.T) {
	mk := func(id, profile, clock, accel string) compare.Side {
		r := run(id, profile, clock)
		r.Machine.Accelerator = accel
		return compare.Side{Name: id, Runs: []*Result{r}}
	}
	if err := compare.CheckComparable(mk("a", "c", "host", "tcg"), mk("b", "c", "host", "tcg")); err != nil {
		t.Error(err)
	}
	for _, tt := range []struct {
		b    compare.Side
		want string
	}{
		{mk("b", "p4", "host", "tcg"), "profile c and run b has p4"},
		{mk("b", "c", "icount:0", "tcg"), "clock host and run b has icount:0"},
		{mk("b", "c", "host", "kvm"), "accelerator tcg and run b has kvm"},
	} {
		err := compare.CheckComparable(mk("a", "c", "host", "tcg"), tt.b)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--force") {
			t.Errorf("CheckComparable = %v, want %q and the way out", err, tt.want)
		}
	}
}

func TestJUnit(t *testing.T) {
	ok := run("r-ok", "c", "host", series("t", "s", nil, 1, 2))
	ok.Plugin, ok.Experiment = "forkbench", "forktime"
	ok.Summary = stats.Summarize(ok.Samples)
	ok.Verdicts = []Verdict{
		{Claim: "E2.1", Statement: "fork costs more", Verdict: Reproduced, Reason: "4.5x"},
		{Claim: "E1.7", Statement: "0.18 ms", Verdict: NotReproduced, Reason: "0.5 ms"},
		{Claim: "E1.6", Statement: "10x", Verdict: Inconclusive, Reason: "noise"},
	}
	bad := run("r-bad", "c", "host")
	bad.Plugin, bad.Experiment, bad.Outcome = "threadbench", "hello", Outcome{Status: "failed", Reason: "the guest died", StderrTail: "oops"}
	var b strings.Builder
	if err := render.WriteJUnit(&b, []*Result{ok, bad}); err != nil {
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
	r := run("r1", "c", "host", series("t", "s", nil, 1, 2))
	r.Summary = stats.Summarize(r.Samples)
	for _, f := range render.Formats {
		var b strings.Builder
		if err := render.Export(&b, f, []*Result{r, r}); err != nil || b.Len() == 0 {
			t.Errorf("Export %s: %v (%d bytes)", f, err, b.Len())
		}
	}
	var b strings.Builder
	render.Export(&b, "csv", []*Result{r, r})
	if n := strings.Count(b.String(), "\n"); n != 5 {
		t.Errorf("csv of two runs of two samples: %d lines, want a header and 4 rows:\n%s", n, b.String())
	}
	if err := render.Export(&b, "yaml", nil); err == nil || !strings.Contains(err.Error(), "want one of table, json") {
		t.Errorf("Export yaml = %v", err)
	}
}
