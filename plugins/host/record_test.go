package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"lab/internal/labtest"
	"lab/plugins"
	"lab/plugins/contract"
	"lab/results"
	"lab/results/claims"
)

func testDescription(name string) *plugins.Description {
	return &plugins.Description{Name: name, Version: "1.0", Summary: "test", Experiments: []plugins.Experiment{{
		Name:       "e",
		Params:     []plugins.Param{{Name: "n", Type: plugins.TypeInt, Default: "5", Min: plugins.Ptr(1)}},
		Metrics:    []plugins.Metric{{Name: "t", Unit: "s"}},
		References: []plugins.Reference{{Experiment: "E9", Source: "s", Machine: "m", Profile: "p-1", Metric: "t", Value: 2, Unit: "ms"}},
	}}}
}

// build lays out a build of plugin name for arch under root (root/NAME/ARCH)
// with a recorded description, as `lab plugin build` leaves it.
func build(t *testing.T, root, name, arch string) string {
	t.Helper()
	dir := filepath.Join(root, name, arch)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	labtest.WriteELF(t, filepath.Join(dir, name), arch, "v1")
	if err := WriteRecord(dir, testDescription(name)); err != nil {
		t.Fatalf("WriteRecord: %v", err)
	}
	return dir
}

func TestRecordRoundTrip(t *testing.T) {
	dir := build(t, t.TempDir(), "rec", "i386")
	got, err := ReadRecord(dir, "rec")
	if err != nil {
		t.Fatal(err)
	}
	if want := testDescription("rec"); !reflect.DeepEqual(got, want) {
		t.Errorf("ReadRecord = %+v, want %+v", got, want)
	}
	b, _ := os.ReadFile(filepath.Join(dir, RecordFile))
	if !strings.Contains(string(b), `"binary_sha256": "`) || !strings.Contains(string(b), `"description": {`) {
		t.Errorf("record does not look like {binary_sha256, description}:\n%s", b)
	}
}

func TestRecordRefused(t *testing.T) {
	hint := []string{"make plugins", "lab plugin build DIR"}
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   []string
	}{
		{"stale", func(t *testing.T, dir string) {
			labtest.WriteELF(t, filepath.Join(dir, "rec"), "i386", "v2") // rebuilt binary, old record
		}, append([]string{"stale", "sha256"}, hint...)},
		{"missing", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, RecordFile))
		}, append([]string{"no recorded description"}, hint...)},
		{"garbage", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, RecordFile), []byte("{}"), 0o644)
		}, append([]string{"not a description record"}, hint...)},
		{"other plugin", func(t *testing.T, dir string) {
			if err := WriteRecord(dir, testDescription("other")); err == nil {
				t.Fatal("WriteRecord of a plugin without its binary: want an error")
			}
			labtest.WriteELF(t, filepath.Join(dir, "other"), "i386", "v1")
			if err := WriteRecord(dir, testDescription("other")); err != nil {
				t.Fatal(err)
			}
		}, []string{`calls itself "other"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := build(t, t.TempDir(), "rec", "i386")
			tt.change(t, dir)
			_, err := ReadRecord(dir, "rec")
			if err == nil {
				t.Fatal("ReadRecord: want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// pluginPath returns a fresh root and a search path where it is the only
// place plugins are found.
func pluginPath(t *testing.T) (string, SearchPath) {
	t.Helper()
	root := t.TempDir()
	return root, SearchPath{Extra: []string{root}}
}

// A plugin with only its guest (i386) build is listed and described: the
// host never needs a build it could run.
func TestDescribeGuestBuildOnly(t *testing.T) {
	t.Parallel()
	root, path := pluginPath(t)
	build(t, root, "guestonly", "i386")
	if got := path.List(); !slices.Contains(got, "guestonly") {
		t.Errorf("List = %v, want guestonly", got)
	}
	d, err := path.Describe("guestonly")
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	if !reflect.DeepEqual(d, testDescription("guestonly")) {
		t.Errorf("Describe = %+v", d)
	}
	if _, err := path.Find("guestonly", "x86_64"); err == nil || !strings.Contains(err.Error(), "no build for x86_64") {
		t.Errorf("Find x86_64 error = %v, want no build for x86_64", err)
	}
}

// Describe reports a broken build rather than a missing one, and a stale
// record of one arch does not hide the other arch's good one.
func TestDescribeErrors(t *testing.T) {
	t.Parallel()
	root, path := pluginPath(t)
	build(t, root, "p", "x86_64")
	labtest.WriteELF(t, filepath.Join(root, "p", "x86_64", "p"), "x86_64", "rebuilt")
	if _, err := path.Describe("p"); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Errorf("Describe error = %v, want the x86_64 record's staleness, not i386's absence", err)
	}
	build(t, root, "p", "i386")
	if _, err := path.Describe("p"); err != nil {
		t.Errorf("Describe with a good i386 build: %v", err)
	}
	if _, err := path.Describe("nosuch"); err == nil || !strings.Contains(err.Error(), `unknown plugin "nosuch"`) {
		t.Errorf("Describe(nosuch) error = %v", err)
	}
}

// The record is the host's: it is not pushed into the guest.
func TestBundleFilesSkipRecord(t *testing.T) {
	dir := build(t, t.TempDir(), "rec", "i386")
	files, _, err := bundleFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].rel != "rec" {
		t.Errorf("bundle files = %+v, want only the binary", files)
	}
}

func TestReferences(t *testing.T) {
	exp := &testDescription("x").Experiments[0]
	refs := References(exp)
	if len(refs) != 1 || refs[0].Bench != "e" || refs[0].Metric != "t" || refs[0].Value != 2 || refs[0].Profile != "p-1" {
		t.Errorf("References = %+v", refs)
	}
}

// TestViews: every field of an experiment's tables, charts and write-ups
// reaches the result's views (the contract's own types, JSON names those of description.json).
func TestViews(t *testing.T) {
	exp := &plugins.Experiment{
		Tables: []plugins.Table{{Label: "design", Title: "t", Name: "n", Rows: map[string]string{"0": "base"}, Notes: []string{"note"},
			Columns: []plugins.Column{{Metric: "a", Header: "A", Sum: []string{"b", "c"}}, {Metric: "d", Header: "D", Baseline: &plugins.Baseline{Metric: "a", Row: "0"}}},
			Chart:   &plugins.Chart{Stack: []string{"b", "c"}, Figures: []string{"a", "d"}, Title: "ct", Axis: "ax", Reading: "r", Params: "{n}", Room: 3.2}}},
		Charts:   []plugins.Chart{{Label: "target", Stack: []string{"b"}, Total: "e", Title: "per target", Axis: "ax"}},
		WriteUps: []plugins.WriteUp{{ID: "W1", Title: "w", References: []plugins.Reference{{Experiment: "W1", Metric: "x", Value: 1, Unit: "u", Labels: map[string]string{"k": "v"}}}}},
	}
	b, err := json.Marshal(exp)
	if err != nil {
		t.Fatal(err)
	}
	var want results.Views
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if got := Views(exp); !reflect.DeepEqual(got, want) {
		t.Errorf("Views = %+v, want %+v", got, want)
	}
	if v := Views(nil); v.Tables != nil || v.Charts != nil || v.WriteUps != nil {
		t.Errorf("Views(nil) = %+v, want none", v)
	}
}

func TestClaims(t *testing.T) {
	exp := &plugins.Experiment{Name: "create", Metrics: []plugins.Metric{{Name: "p", Unit: "ms"}, {Name: "q", Unit: "ms"}},
		Claims: []plugins.Claim{
			{ID: "A.1", Source: "s", Statement: "p is 10x q", Machine: "m", Profile: "celeron-2.4", Rationale: "r", Scope: &plugins.Scope{Params: map[string]string{"m": "1"}},
				Ratio: &plugins.RatioClaim{Numerator: "p", Denominator: "q", Min: 10, Max: plugins.Ptr(84)}},
			{ID: "A.2", Source: "s", Statement: "p about q", Equivalence: &plugins.EquivalenceClaim{Numerator: "p", Denominator: "q", Margin: 0.1, Sides: contract.SidesBoth}},
			{ID: "A.3", Source: "s", Statement: "range", Range: &plugins.RangeClaim{Metric: "p", Min: plugins.Ptr(1), Unit: "ms"}},
			{ID: "A.4", Source: "s", Statement: "cross", Crossover: &plugins.CrossoverClaim{First: "p", Second: "q", Sweep: "count", BandStart: 500, BandEnd: 1000, Before: contract.BeforeBelow}},
			{ID: "A.5", Source: "s", Statement: "speedup", Speedup: &plugins.SpeedupClaim{Metric: "p", Baseline: "a", Profile: "b", Min: 2}},
			{ID: "A.6", Source: "s", Statement: "crash", Crash: &plugins.CrashClaim{Signal: "SIGSEGV", Param: "m", From: 350}},
		}}
	got := Claims("forkbench", exp)
	if len(got) != 6 {
		t.Fatalf("Claims = %d claims, want 6", len(got))
	}
	want := []string{contract.KindRatio, contract.KindEquivalence, contract.KindRange, contract.KindCrossover, contract.KindSpeedup, contract.KindCrash}
	for i, c := range got {
		if c.Kind != want[i] || c.Plugin != "forkbench" || c.Bench != "create" || c.ID != exp.Claims[i].ID || claims.RuleText(&c) == "no rule" {
			t.Errorf("claim %d = %+v, want kind %s of forkbench/create", i, c, want[i])
		}
	}
	r := got[0]
	if r.Ratio.Numerator != "p" || r.Ratio.Min != 10 || *r.Ratio.Max != 84 || r.Profile != "celeron-2.4" || r.Scope.Params["m"] != "1" || r.Rationale != "r" {
		t.Errorf("ratio claim converted to %+v %+v", r, r.Ratio)
	}
	if got[1].Equivalence.Margin != 0.1 || got[1].Equivalence.Sides != contract.SidesBoth || got[5].Crash.From != 350 || got[3].Crossover.BandEnd != 1000 || got[4].Speedup.Baseline != "a" {
		t.Errorf("claims converted to %+v", got)
	}
	// The SDK's kind names are the results' kind names.
	for i, c := range exp.Claims {
		if c.Kind() != got[i].Kind {
			t.Errorf("claim %s: SDK kind %q, results kind %q", c.ID, c.Kind(), got[i].Kind)
		}
	}
}

// fileSHA256 remembers a file's hash by path, size and modification
// time, and hashes it again once it changes.
func TestFileSHA256Memo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	write := func(content string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	want := func(content string) {
		t.Helper()
		got, err := fileSHA256(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(content))
		if got != hex.EncodeToString(sum[:]) {
			t.Errorf("fileSHA256 after writing %q = %s, want the hash of %q", content, got, content)
		}
	}
	t0 := time.Unix(1700000000, 0)
	write("one", t0)
	want("one")
	want("one") // from the memo
	write("three", t0)
	want("three") // another size
	write("four!", t0.Add(time.Second))
	want("four!") // same size as three, another mtime
}
