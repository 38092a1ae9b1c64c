package render

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/compare"
)

// sweepRun is a swept run of profile with metrics over key=values, the
// value of metric m at point v and repeat k given by f, each label set of
// rest a series of its own.
func sweepRun(profile, key string, values []string, metrics map[string]string, rest []map[string]string, repeats int,
	f func(metric string, x float64, rest map[string]string, k int) float64) *results.Result {
	r := &results.Result{
		ID: "20261201T120000.000000Z-bench-exp-" + profile, Plugin: "bench", Experiment: "exp",
		Machine: results.MachineRecord{Name: profile + "-run-1", Profile: profile, Accelerator: "tcg", Clock: "host",
			KernelID: "debian-6.1-686", KernelPackage: "linux-image-6.1.0-44-686 6.1.164-1", Boot: "snapshot"},
		Guest:      results.GuestEnv{KernelRelease: "6.1.0-44-686"},
		Parameters: map[string]string{"repeat": fmt.Sprint(repeats), key: strings.Join(values, ",")},
		Outcome:    results.Outcome{Status: "ok"},
		Sweep:      &results.Sweep{Axes: []results.SweepAxis{{Key: key, Values: values}}},
	}
	if len(rest) == 0 {
		rest = []map[string]string{nil}
	}
	for _, v := range values {
		var x float64
		fmt.Sscan(v, &x)
		for _, l := range rest {
			point := map[string]string{key: v}
			for k, lv := range l {
				point[k] = lv
			}
			r.Sweep.Points = append(r.Sweep.Points, results.SweepPoint{Labels: point, Status: "ok", Repeats: repeats})
			for k := range repeats {
				for m, unit := range metrics {
					r.Samples = append(r.Samples, results.Sample{Metric: m, Unit: unit, Repeat: k, Labels: point, Value: f(m, x, l, k)})
				}
			}
		}
	}
	compare.Analyze(r, nil)
	return r
}

func withVerdicts(r *results.Result, vs ...results.Verdict) *results.Result {
	r.Verdicts = vs
	return r
}

// svgTexts checks that data is well-formed XML with an <svg> root and
// returns the content of its <text> elements in document order.
func svgTexts(t *testing.T, data []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	var texts []string
	var root string
	var in bool
	var cur strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = el.Name.Local
			}
			if el.Name.Local == "text" {
				in = true
				cur.Reset()
			}
		case xml.CharData:
			if in {
				cur.Write(el)
			}
		case xml.EndElement:
			if el.Name.Local == "text" {
				in = false
				texts = append(texts, cur.String())
			}
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return texts
}

func plotGolden(t *testing.T, name string, texts []string) {
	t.Helper()
	got := strings.Join(texts, "\n") + "\n"
	path := filepath.Join("testdata", name+".plot.txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./results -run TestWriteSweepPlot -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("texts of the %s plot differ from %s (-update rewrites it):\n%s", name, path, got)
	}
}

func contains(texts []string, s string) bool {
	for _, x := range texts {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

func TestWriteSweepPlot(t *testing.T) {
	cross := results.Claim{Claim: contract.Claim{ID: "E1.1", Profile: "celeron-2.4", Crossover: &contract.CrossoverClaim{First: "process_s", Second: "thread_s", Sweep: "count", BandStart: 500, BandEnd: 700}}}.WithKind()
	fork := func(m string, x float64, _ map[string]string, k int) float64 {
		if m == "fork_wait_us" {
			return 400 + x/10 + float64(k)
		}
		return 90 + float64(k)
	}
	mode := func(m string, x float64, l map[string]string, k int) float64 {
		if m == "process_s" {
			return 0.2 + x*0.001 + float64(k)*0.01
		}
		return 0.1 + x*0.0012 + float64(k)*0.01
	}
	tests := []struct {
		name  string
		runs  []*results.Result
		opts  PlotOptions
		wants []string // texts that must be in the SVG
	}{
		{
			name: "forktime",
			runs: []*results.Result{sweepRun("celeron-2.4", "n", []string{"50", "100", "200"},
				map[string]string{"fork_wait_us": "µs", "thread_create_join_us": "µs", "ratio": "x"}, nil, 3, fork)},
			opts: PlotOptions{Metrics: []string{"fork_wait_us", "thread_create_join_us"}, XLabel: "n (calls per repeat)"},
			wants: []string{"bench/exp: fork_wait_us, thread_create_join_us against n", "time (µs)", "n (calls per repeat)",
				"fork_wait_us", "thread_create_join_us", "profile celeron-2.4", "kernel debian-6.1-686 (linux-image-6.1.0-44-686 6.1.164-1)",
				"clock host", "accelerator tcg", "3 of 3 points done", "median of 3 repeat(s)"},
		},
		{
			// Several series labels and the published crossover; x spans
			// three decades: log scale.
			name: "crossover",
			runs: []*results.Result{withVerdicts(sweepRun("celeron-2.4", "count", []string{"5", "500", "5000"},
				map[string]string{"process_s": "s", "thread_s": "s"}, []map[string]string{{"stdout": "pty"}, {"stdout": "null"}}, 2, mode),
				results.Verdict{Claim: "E1.1", Verdict: results.Reproduced, Numbers: []results.Number{{Name: "interpolated crossing", Value: 612.5}}})},
			opts: PlotOptions{Metrics: []string{"process_s", "thread_s"}, Claims: []results.Claim{cross}},
			wants: []string{"count (log scale)", "time (s)", "process_s stdout=pty", "thread_s stdout=null",
				"E1.1 published crossover count=500..700 (celeron-2.4)", "measured crossing count=612 (celeron-2.4, E1.1: reproduced)"},
		},
		{
			// One series per profile.
			name: "profiles",
			runs: []*results.Result{
				sweepRun("xeon5130-1core", "n", []string{"50", "100"}, map[string]string{"fork_wait_us": "µs"}, nil, 2, fork),
				sweepRun("xeon5130-2core", "n", []string{"50", "100"}, map[string]string{"fork_wait_us": "µs"}, nil, 2,
					func(m string, x float64, l map[string]string, k int) float64 { return fork(m, x, l, k) / 2 }),
			},
			opts:  PlotOptions{Metrics: []string{"fork_wait_us"}, Title: "forkbench/forktime on two profiles"},
			wants: []string{"forkbench/forktime on two profiles", "xeon5130-1core: fork_wait_us", "xeon5130-2core: fork_wait_us", "profile xeon5130-1core", "profile xeon5130-2core"},
		},
		{
			// A key whose values are not numbers: a nominal axis.
			name: "nominal",
			runs: []*results.Result{sweepRun("celeron-2.4", "stdout", []string{"pty", "null", "file"}, map[string]string{"real_s": "s"}, nil, 1,
				func(string, float64, map[string]string, int) float64 { return 1 })},
			opts:  PlotOptions{Metrics: []string{"real_s"}},
			wants: []string{"pty", "null", "file", "real_s"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteSweepPlot(&b, tt.runs, tt.opts); err != nil {
				t.Fatalf("WriteSweepPlot: %v", err)
			}
			texts := svgTexts(t, b.Bytes())
			for _, w := range tt.wants {
				if !contains(texts, w) {
					t.Errorf("the SVG has no text %q; its texts:\n%s", w, strings.Join(texts, "\n"))
				}
			}
			// A metric in another unit (ratio, x) is not drawn on a time axis.
			if contains(texts, "ratio") {
				t.Errorf("the plot draws the ratio metric on the time axis")
			}
			plotGolden(t, tt.name, texts)
		})
	}
}

func TestWriteSweepPlotNothing(t *testing.T) {
	r := sweepRun("celeron-2.4", "n", []string{"50"}, map[string]string{"fork_wait_us": "µs"}, nil, 1,
		func(string, float64, map[string]string, int) float64 { return 1 })
	notSwept := &results.Result{ID: "plain", Plugin: "p", Experiment: "e"}
	tests := []struct {
		name string
		runs []*results.Result
		opts PlotOptions
		want string
	}{
		{"no runs", nil, PlotOptions{}, "no runs"},
		{"not a sweep", []*results.Result{notSwept}, PlotOptions{Metrics: []string{"a"}}, "not a sweep"},
		{"no such metric", []*results.Result{r}, PlotOptions{Metrics: []string{"nosuch"}}, "no samples of nosuch labelled with n"},
		{"no metric", []*results.Result{r}, PlotOptions{}, "no metric"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteSweepPlot(io.Discard, tt.runs, tt.opts)
			if !errors.Is(err, ErrNothingToPlot) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("WriteSweepPlot: %v, want ErrNothingToPlot saying %q", err, tt.want)
			}
		})
	}
}

// svgText is a <text> element of an SVG with where gonum/plot put it.
type svgText struct {
	text string
	x, y float64
}

// svgTextsAt returns the <text> elements of data with their x and y
// attributes.
func svgTextsAt(t *testing.T, data []byte) []svgText {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	var out []svgText
	var cur *svgText
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if el.Name.Local == "text" {
				cur = &svgText{}
				for _, a := range el.Attr {
					switch a.Name.Local {
					case "x":
						fmt.Sscan(a.Value, &cur.x)
					case "y":
						fmt.Sscan(a.Value, &cur.y)
					}
				}
			}
		case xml.CharData:
			if cur != nil {
				cur.text += string(el)
			}
		case xml.EndElement:
			if el.Name.Local == "text" && cur != nil {
				out = append(out, *cur)
				cur = nil
			}
		}
	}
}

// xTickLabels are the texts of data among values (the swept values)
// that share the y of the first of them: the x axis's tick labels, left
// to right.
func xTickLabels(t *testing.T, data []byte, values []string) []svgText {
	t.Helper()
	var out []svgText
	for _, s := range svgTextsAt(t, data) {
		if slices.Contains(values, s.text) && (len(out) == 0 || s.y == out[0].y) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b svgText) int { return cmp.Compare(a.x, b.x) })
	return out
}

// TestSweepPlotClipsToData: a sweep that stops short of a published
// crossover is drawn on an axis spanning its own points, the band
// outside them marked at the edge it lies beyond, and no two tick labels
// of the x axis overlap.
func TestSweepPlotClipsToData(t *testing.T) {
	at, far, below := 600.0, 750.0, 2.0
	claim := func(id string, at *float64, tol float64) results.Claim {
		return results.Claim{Claim: contract.Claim{ID: id,
			Profile: "celeron-2.4",
			Crossover: &contract.CrossoverClaim{First: "real_s", Second: "real_s", Sweep: "count",
				BandStart: *at - tol, BandEnd: *at + tol, FirstLabels: map[string]string{"mode": "thread"}, SecondLabels: map[string]string{"mode": "process"}}}}.WithKind()
	}
	hello := func(_ string, x float64, l map[string]string, k int) float64 {
		if l["mode"] == "thread" {
			return 0.05 + x*0.002 + float64(k)*0.002
		}
		return 0.08 + x*0.0015 + float64(k)*0.002
	}
	modes := []map[string]string{{"mode": "process"}, {"mode": "thread"}}
	tests := []struct {
		name      string
		values    []string
		claims    []results.Claim
		lo, hi    float64  // the data's x range
		wantMarks []string // texts at the edges
		noMarks   []string
	}{
		{"band above the data", []string{"5", "20"}, []results.Claim{claim("E1.1", &at, 50)}, 5, 20, []string{"E1.1 band 550–650 →"}, nil},
		{"two bands above, one below", []string{"5", "20"}, []results.Claim{claim("E1.1", &at, 50), claim("E1.2", &far, 250), claim("E9.9", &below, 1)}, 5, 20,
			[]string{"E1.1 band 550–650 →", "E1.2 band 500–1000 →", "← E9.9 band 1–3"}, nil},
		{"a crossover with no tolerance", []string{"5", "20"}, []results.Claim{claim("E1.1", &at, 0)}, 5, 20, []string{"E1.1 at 600 →"}, nil},
		// Inside the data: drawn where it is, no edge mark.
		{"band inside", []string{"5", "500", "800"}, []results.Claim{claim("E1.1", &at, 50)}, 5, 800, nil, []string{"→", "←"}},
		// Swept values too close for their labels on a linear axis.
		{"crowded values", []string{"10", "11", "12", "13", "100"}, nil, 10, 100, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sweepRun("celeron-2.4", "count", tt.values, map[string]string{"real_s": "s"}, modes, 2, hello)
			o := PlotOptions{Metrics: []string{"real_s"}, Claims: tt.claims}
			fig, err := sweepPlot([]*results.Result{r}, o)
			if err != nil {
				t.Fatal(err)
			}
			margin := 0.1 * (tt.hi - tt.lo)
			if x := fig.plot.X; x.Min < tt.lo-margin || x.Max > tt.hi+margin || x.Min > tt.lo || x.Max < tt.hi {
				t.Errorf("x axis %g..%g, want it to span the data %g..%g within %g", x.Min, x.Max, tt.lo, tt.hi, margin)
			}
			var b bytes.Buffer
			if err := WriteSweepPlot(&b, []*results.Result{r}, o); err != nil {
				t.Fatal(err)
			}
			texts := svgTexts(t, b.Bytes())
			for _, w := range tt.wantMarks {
				if !slices.Contains(texts, w) {
					t.Errorf("no edge mark %q; the SVG's texts:\n%s", w, strings.Join(texts, "\n"))
				}
			}
			for _, w := range tt.noMarks {
				if contains(texts, w) {
					t.Errorf("an edge mark %q for a band inside the data; the SVG's texts:\n%s", w, strings.Join(texts, "\n"))
				}
			}
			// Tick labels: 10px digits are at most 6px wide; 6px
			// between one label's end and the next one's start.
			ticks := xTickLabels(t, b.Bytes(), tt.values)
			if len(ticks) < 2 {
				t.Fatalf("x tick labels %+v, want the first and last swept values at least", ticks)
			}
			if ticks[0].text != tt.values[0] || ticks[len(ticks)-1].text != tt.values[len(tt.values)-1] {
				t.Errorf("x tick labels %+v, want the first and last swept values labelled", ticks)
			}
			for i := 1; i < len(ticks); i++ {
				if gap := ticks[i].x - ticks[i-1].x - 6*float64(len(ticks[i-1].text)); gap < 6 {
					t.Errorf("x tick labels %q at x=%g and %q at x=%g overlap or nearly (gap %.1fpx, want 6 or more)",
						ticks[i-1].text, ticks[i-1].x, ticks[i].text, ticks[i].x, gap)
				}
			}
		})
	}
}
