package results_test

// A result must never be lost or written half-valid: the results directory
// is checked before a run, non-finite numbers are refused by name (JSON
// cannot carry them), and commands that disturbed a run are shown.

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"lab/results/compare"
	"lab/results/render"

	"lab/internal/fixture"
	"lab/results"
)

func TestCheckDir(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dir     string
		wantErr bool
	}{
		{"existing", base, false},
		{"missing is created", filepath.Join(base, "new", "results"), false},
		{"under a file", filepath.Join(file, "results"), true},
		{"a file", file, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := results.CheckDir(tt.dir)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), tt.dir) {
					t.Fatalf("CheckDir(%s) = %v, want an error naming the directory", tt.dir, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckDir(%s) = %v", tt.dir, err)
			}
			if fi, err := os.Stat(tt.dir); err != nil || !fi.IsDir() {
				t.Errorf("CheckDir did not leave a directory at %s: %v", tt.dir, err)
			}
			if des, _ := os.ReadDir(tt.dir); len(des) != 0 && tt.dir != base {
				t.Errorf("CheckDir left %d entries in %s", len(des), tt.dir)
			}
		})
	}
	if des, _ := os.ReadDir(base); len(des) != 2 { // a-file and new/
		t.Errorf("CheckDir left its probe file behind: %v", des)
	}
}

func TestSaveRefusesNonFiniteByName(t *testing.T) {
	tests := []struct {
		name string
		mod  func(r *results.Result)
		want []string
	}{
		{"sample", func(r *results.Result) { r.Samples[1].Value = math.NaN() }, []string{"sample", "metric fork_wait_us", "repeat 1", "NaN"}},
		{"summary", func(r *results.Result) { r.Summary = []results.Summary{{Metric: "ratio", CV: math.Inf(1)}} }, []string{"summary", "metric ratio", "cv", "+Inf"}},
		{"comparison", func(r *results.Result) {
			r.Comparisons = []results.Comparison{{Metric: "ratio", Machine: "Celeron", Ratio: math.Inf(-1)}}
		}, []string{"comparison", "ratio", "Celeron", "-Inf"}},
		{"harness", func(r *results.Result) { r.Harness = &results.Harness{PushSeconds: math.NaN()} }, []string{"push_seconds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			r := fixture.Result()
			tt.mod(r)
			_, err := results.Save(dir, r)
			if err == nil {
				t.Fatal("Save accepted a non-finite number")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Save error %q does not contain %q", err, w)
				}
			}
			if des, _ := os.ReadDir(dir); len(des) != 0 {
				t.Errorf("Save left %d files after refusing", len(des))
			}
		})
	}
}

func TestDropNonFinite(t *testing.T) {
	r := fixture.Result()
	r.Samples = []results.Sample{
		{Metric: "a", Value: 1},
		{Metric: "a", Value: math.NaN(), Repeat: 1},
		{Metric: "b", Value: math.Inf(1), Labels: map[string]string{"n": "5"}},
		{Metric: "b", Value: 2},
	}
	got := r.DropNonFinite()
	want := []string{"metric a repeat 1: NaN", "metric b {n=5} repeat 0: +Inf"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DropNonFinite = %q, want %q", got, want)
	}
	if len(r.Samples) != 2 || r.Samples[0].Value != 1 || r.Samples[1].Value != 2 {
		t.Errorf("samples kept %+v, want the two finite ones", r.Samples)
	}
	compare.Analyze(r, fixture.ForkbenchRefs(t, "forktime"))
	if _, err := results.Save(t.TempDir(), r); err != nil {
		t.Errorf("Save after DropNonFinite: %v", err)
	}
	if got := r.DropNonFinite(); got != nil {
		t.Errorf("second DropNonFinite = %q, want nothing", got)
	}
}

func TestInterferenceRecordedAndShown(t *testing.T) {
	r := fixture.Result()
	at := time.Date(2026, 1, 2, 15, 4, 30, 0, time.UTC)
	r.Interference = []results.Interference{{Time: at, Command: []string{"lab", "exec", "--no-wait", "--", "true"}}}
	dir := t.TempDir()
	path, err := results.Save(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := results.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Interference, r.Interference) {
		t.Errorf("interference after a round trip = %+v, want %+v", back.Interference, r.Interference)
	}
	b, _ := os.ReadFile(path)
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil || raw["interference"] == nil {
		t.Errorf("saved document has no \"interference\" key: %v", err)
	}
	for _, w := range []func(*bytes.Buffer, *results.Result) error{
		func(b *bytes.Buffer, r *results.Result) error {
			return render.WriteSummary(b, r, false, render.Notes{})
		},
		func(b *bytes.Buffer, r *results.Result) error { return render.WriteMarkdown(b, r) },
	} {
		var buf bytes.Buffer
		if err := w(&buf, r); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"WARNING", "1 command(s) ran in the guest during this run", at.Local().Format("15:04:05") + " lab exec --no-wait -- true"} {
			if !strings.Contains(buf.String(), s) {
				t.Errorf("rendered result does not contain %q:\n%s", s, buf.String())
			}
		}
	}
	// Without interference nothing is said.
	r.Interference = nil
	var buf bytes.Buffer
	if err := render.WriteSummary(&buf, r, false, render.Notes{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "WARNING") {
		t.Errorf("a clean run warns:\n%s", buf.String())
	}
}

// TestDropImplausible: what a plugin returns is checked before it is
// saved (issue 31): a negative time, a repeat index past the run's
// repeats and samples beyond MaxSamples are dropped, each kind named once
// with its first sample's metric and repeat and a count; a signed metric
// (a difference) may be negative; a plausible run loses nothing.
func TestDropImplausible(t *testing.T) {
	signed := func(m string) bool { return m == "growth_ms" }
	r := fixture.Result()
	r.Parameters["repeat"] = "3"
	if lines := r.DropImplausible(signed); lines != nil || len(r.Samples) != 9 {
		t.Fatalf("a plausible run: dropped %v, %d samples left, want nothing dropped", lines, len(r.Samples))
	}
	r.Samples = append(r.Samples,
		results.Sample{Metric: "thread_create_join_us", Value: -1, Unit: "µs", Repeat: 0},
		results.Sample{Metric: "thread_create_join_us", Value: -2, Unit: "µs", Repeat: 1},
		results.Sample{Metric: "growth_ms", Value: -0.5, Unit: "ms", Repeat: 0},
		results.Sample{Metric: "fork_wait_us", Value: 380, Unit: "µs", Repeat: 3})
	lines := r.DropImplausible(signed)
	all := strings.Join(lines, "\n")
	for _, want := range []string{
		"2 sample(s) with a negative value of a metric that is not signed",
		"first metric thread_create_join_us repeat 0: -1 µs",
		"1 sample(s) with a repeat index outside the run's 3 repeat(s) (0 to 2), first metric fork_wait_us repeat 3",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("dropped %q, want it to say %q", all, want)
		}
	}
	if len(lines) != 2 || len(r.Samples) != 10 {
		t.Errorf("%d lines, %d samples left; want 2 lines and the 9 plausible samples plus the signed growth_ms", len(lines), len(r.Samples))
	}

	many := fixture.Result()
	many.Samples = fixture.Series("tick", "x", nil, make([]float64, results.MaxSamples+5)...)
	for i := range many.Samples {
		many.Samples[i].Repeat = 0
	}
	lines = many.DropImplausible(signed)
	if len(many.Samples) != results.MaxSamples || len(lines) != 1 || !strings.Contains(lines[0], "5 sample(s) beyond the") {
		t.Errorf("MaxSamples+5 samples: %d kept, dropped %v; want MaxSamples kept and 5 named", len(many.Samples), lines)
	}
}
