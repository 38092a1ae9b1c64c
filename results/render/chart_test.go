package render

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lab/internal/fixture"
	"lab/results"
	"lab/results/compare"
)

// targetsRun is a printfbench targets run: two repeats on three targets.
func targetsRun() *results.Result {
	r := &results.Result{ID: "run-1", Plugin: "printfbench", Experiment: "targets",
		Parameters: map[string]string{"lines": "1000", "repeat": "2", "buffering": "auto"},
		Machine:    results.MachineRecord{Profile: map[string]any{"name": "xeon5130-fb", "console": "fb"}, Clock: "host", Accelerator: "tcg", KernelID: "debian-6.1-686"},
		Outcome:    results.Outcome{Status: "ok"}}
	add := func(target string, real, user, sys float64) {
		for rep := range 2 {
			for _, s := range []results.Sample{{Metric: "real_s", Value: real}, {Metric: "user_s", Value: user}, {Metric: "sys_s", Value: sys}, {Metric: "shown_vt", Value: 1, Unit: "vt"}} {
				s.Repeat, s.Labels = rep, map[string]string{"target": target}
				if s.Unit == "" {
					s.Unit = "s"
				}
				r.Samples = append(r.Samples, s)
			}
		}
	}
	add("vt_shown", 0.28, 0.004, 0.276)
	add("vt_hidden", 0.017, 0.003, 0.014)
	add("null", 0.001, 0.001, 0)
	r.Samples = append(r.Samples, results.Sample{Metric: "targets_skipped", Value: 0, Unit: "targets"})
	compare.Analyze(r, nil)
	return r
}

// targetsViews are what printfbench's targets experiment declares.
func targetsViews(t *testing.T) results.Views {
	t.Helper()
	return fixture.Views(t, "printfbench", "targets")
}

// chartLabel is the label of the chart that fits r, "" for none.
func chartLabel(r *results.Result, views results.Views) string {
	if c := ChartFor(r, views); c != nil {
		return c.Label
	}
	return ""
}

func TestChartFor(t *testing.T) {
	views := targetsViews(t)
	r := targetsRun()
	if got := chartLabel(r, views); got != "target" {
		t.Errorf("ChartFor(targets run) = %q, want target", got)
	}
	sweep := targetsRun()
	sweep.Sweep = &results.Sweep{}
	if got := chartLabel(sweep, views); got != "" {
		t.Errorf("ChartFor(a sweep) = %q, want none (a sweep has its own plot)", got)
	}
	fork := &results.Result{Samples: []results.Sample{{Metric: "user_s", Value: 1}, {Metric: "sys_s", Value: 1}}}
	if got := chartLabel(fork, views); got != "" {
		t.Errorf("ChartFor(unlabelled samples) = %q, want none", got)
	}
	two := targetsRun()
	two.Samples[1].Labels = map[string]string{"target": "null", "n": "5"}
	if got := chartLabel(two, views); got != "" {
		t.Errorf("ChartFor(samples with two labels) = %q, want none", got)
	}
	// A run of an experiment that declares no chart (or of a plugin not
	// installed) gets none.
	if got := chartLabel(r, results.Views{}); got != "" {
		t.Errorf("ChartFor(no declarations) = %q, want none", got)
	}
}

// TestWriteChart: one bar per target in the order measured, user and
// sys stacked, the real time written, a caption naming the run.
func TestWriteChart(t *testing.T) {
	r := targetsRun()
	var buf bytes.Buffer
	if err := WriteChart(&buf, r, targetsViews(t)); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if err := xml.Unmarshal(buf.Bytes(), new(struct{})); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	for _, want := range []string{"printfbench/targets: CPU time per target", "lines=1000", ">vt_shown<", ">vt_hidden<", ">null<",
		"real 0.28 s (user 0.004, sys 0.276)", "real 0.017 s", "user_s (median)", "sys_s (median)", "profile xeon5130-fb", "run run-1: ok", "medians of 2 repeat(s)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("plot lacks %q", want)
		}
	}
	// The first target measured is drawn at the top: last on the Y axis's
	// nominal ticks, which count from the bottom.
	if i, j := strings.Index(svg, ">null<"), strings.Index(svg, ">vt_shown<"); i < 0 || j < i {
		t.Errorf("tick order: null at %d, vt_shown at %d; want vt_shown on top (drawn after null)", i, j)
	}
	// Two stacked bar charts: 3 user and 3 sys rectangles, colours of
	// their own.
	for _, c := range []string{"#4C78A8", "#E45756"} {
		if n := strings.Count(strings.ToUpper(svg), "FILL:"+c); n != 3+1 {
			t.Errorf("%d shapes filled %s, want 3 bars and the legend's", n, c)
		}
	}
	if err := WriteChart(&buf, &results.Result{ID: "x"}, targetsViews(t)); !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("WriteChart of a run no chart fits = %v, want ErrNothingToPlot", err)
	}
}

func TestChartBeside(t *testing.T) {
	views := targetsViews(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "run-1.json")
	if got, want := ChartBeside(path, targetsRun(), views), "plot: "+filepath.Join(dir, "run-1.svg"); got != want {
		t.Fatalf("ChartBeside = %q, want %q", got, want)
	}
	if fi, err := os.Stat(filepath.Join(dir, "run-1.svg")); err != nil || fi.Size() == 0 || fi.Mode().Perm() != 0o644 {
		t.Errorf("plot file: %v, %v", fi, err)
	}
	if got := ChartBeside(path, &results.Result{ID: "fork"}, views); got != "" {
		t.Errorf("ChartBeside(no bars) = %q, want nothing said", got)
	}
	// A directory that cannot be written warns and leaves no file.
	bad := filepath.Join(dir, "gone", "run-2.json")
	if got := ChartBeside(bad, targetsRun(), views); !strings.HasPrefix(got, "warning: plot "+filepath.Join(dir, "gone", "run-2.svg")) {
		t.Errorf("ChartBeside into a missing directory = %q, want a warning naming the plot", got)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".plot-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
