package results_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lab/internal/fixture"
	"lab/results"
)

func TestParseFilter(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	f, err := results.ParseFilter("profile=celeron-2.4, plugin=forkbench,experiment=forktime,outcome=ok,since=24h", now)
	if err != nil {
		t.Fatal(err)
	}
	want := results.Filter{Profile: "celeron-2.4", Plugin: "forkbench", Experiment: "forktime", Outcome: "ok", Since: now.Add(-24 * time.Hour)}
	if f != want {
		t.Errorf("ParseFilter = %+v, want %+v", f, want)
	}
	if back, err := results.ParseFilter(f.String(), now); err != nil || !back.Since.Equal(f.Since) || back.Plugin != f.Plugin {
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
		if _, err := results.ParseFilter(in, now); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseFilter(%q) = %v, want an error saying %q", in, err, msg)
		}
	}
	if d, err := results.ParseSince("2026-11-30", now); err != nil || d.Day() != 30 {
		t.Errorf("ParseSince(day) = %v, %v", d, err)
	}
}

// store writes runs into a new store and returns its directory.
func store(t *testing.T, runs ...*results.Result) string {
	t.Helper()
	dir := t.TempDir()
	for _, r := range runs {
		if _, err := results.Save(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSelectSkipsCorruptFiles(t *testing.T) {
	day := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a := fixture.Run("20261201T100000Z-forkbench-forktime-aaaaaa", "celeron-2.4", "host", fixture.Series("fork_us", "µs", nil, 1, 2, 3))
	a.Plugin, a.Experiment, a.Started = "forkbench", "forktime", day
	b := fixture.Run("20261201T110000Z-threadbench-hello-bbbbbb", "p4-2.4", "host", fixture.Series("real_s", "s", nil, 1))
	b.Plugin, b.Experiment, b.Started, b.Outcome = "threadbench", "hello", day.Add(time.Hour), results.Outcome{Status: "failed", Reason: "x"}
	dir := store(t, a, b)
	// A truncated file and one that is not JSON at all.
	whole, err := os.ReadFile(filepath.Join(dir, a.ID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "20261201T120000Z-forkbench-forktime-cccccc.json"), whole[:len(whole)/2], 0o644)
	os.WriteFile(filepath.Join(dir, "20261201T130000Z-forkbench-forktime-dddddd.json"), []byte("\x00\x01garbage"), 0o644)

	got, errs := results.Select(dir, results.Filter{})
	if len(got) != 2 || got[0].ID != b.ID || got[1].ID != a.ID {
		t.Fatalf("Select = %d runs, want the two good ones newest first", len(got))
	}
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "dddddd.json") || !strings.Contains(errs[1].Error(), "cccccc.json") {
		t.Errorf("errors do not name the bad files: %v", errs)
	}
	for _, tt := range []struct {
		f    results.Filter
		want string
	}{
		{results.Filter{Plugin: "forkbench"}, a.ID},
		{results.Filter{Profile: "p4-2.4"}, b.ID},
		{results.Filter{Experiment: "forktime"}, a.ID},
		{results.Filter{Outcome: "failed"}, b.ID},
		{results.Filter{Since: day.Add(30 * time.Minute)}, b.ID},
	} {
		got, _ := results.Select(dir, tt.f)
		if len(got) != 1 || got[0].ID != tt.want {
			t.Errorf("Select(%s) = %v, want only %s", tt.f, ids(got), tt.want)
		}
	}
}

func ids(rs []*results.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}
