package render

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"lab/results"
)

// barKeys are the labels whose values a bar plot can take its bars from:
// printfbench's targets and sinks.
var barKeys = []string{"target", "sink"}

// BarKey is the label key whose values are the bars of r's bar plot, ""
// when r has none: a run that is not a sweep, whose user_s and sys_s
// samples all carry exactly that one label.
func BarKey(r *results.Result) string {
	if r == nil || r.Sweep != nil {
		return ""
	}
	for _, key := range barKeys {
		n := 0
		ok := true
		for _, s := range r.Samples {
			if s.Metric != "user_s" && s.Metric != "sys_s" {
				continue
			}
			if _, has := s.Labels[key]; !has || len(s.Labels) != 1 {
				ok = false
				break
			}
			n++
		}
		if ok && n > 0 {
			return key
		}
	}
	return ""
}

// bar is one bar: the medians of one label value.
type bar struct {
	name            string
	user, sys, real float64
	hasReal         bool
}

// barData is r's bars under key, in the order the run measured them.
func barData(r *results.Result, key string) []bar {
	var names []string
	for _, s := range r.Samples {
		if v, ok := s.Labels[key]; ok && !slices.Contains(names, v) {
			names = append(names, v)
		}
	}
	median := func(metric, v string) (float64, bool) {
		for _, s := range r.Summary {
			if s.Metric == metric && len(s.Labels) == 1 && s.Labels[key] == v {
				return s.Median, true
			}
		}
		return 0, false
	}
	var out []bar
	for _, n := range names {
		b := bar{name: n}
		b.user, _ = median("user_s", n)
		b.sys, _ = median("sys_s", n)
		b.real, b.hasReal = median("real_s", n)
		out = append(out, b)
	}
	return out
}

// WriteBarPlot draws r as horizontal bars, one per value of label key
// (BarKey), in the order the run measured them from the top: the median
// user time with the median system time stacked on it, the median real
// time written at the bar's end. The axis is linear: a target a hundred
// times cheaper than the costliest is a sliver, which is the finding.
func WriteBarPlot(w io.Writer, r *results.Result, key string) error {
	if key == "" {
		return fmt.Errorf("%w: run %s has no user_s and sys_s samples by target or sink", ErrNothingToPlot, r.ID)
	}
	bars := barData(r, key)
	if len(bars) == 0 {
		return fmt.Errorf("%w: run %s has no samples", ErrNothingToPlot, r.ID)
	}
	texts := make([]string, len(bars))
	for i, b := range bars {
		texts[i] = fmt.Sprintf("  user %s + sys %s s", fmtSeconds(b.user), fmtSeconds(b.sys))
		if b.hasReal {
			texts[i] = fmt.Sprintf("  real %s s (user %s, sys %s)", fmtSeconds(b.real), fmtSeconds(b.user), fmtSeconds(b.sys))
		}
	}
	who := map[string]string{"target": "the printer", "sink": "the recording process"}[key]
	return writeStackedBars(w, r, stackedBars{
		title:  fmt.Sprintf("%s/%s: CPU time per %s", r.Plugin, r.Experiment, key),
		xLabel: "median CPU time of " + who + " (s): user, then sys stacked on it",
		bars:   bars, texts: texts,
		reading: "real: elapsed time, CLOCK_MONOTONIC",
	})
}

// stackedBars is a bar chart of user and sys medians: one bar per entry
// of bars, the first on top, texts written at each bar's end.
type stackedBars struct {
	title, xLabel string
	bars          []bar
	texts         []string
	// reading is how to read the chart, for the caption.
	reading string
	// room is the axis length as a multiple of the longest bar, leaving
	// room for its text; 0 means 1.6.
	room float64
	// params is what the title says of the run's parameters; "" means
	// all of them but repeat.
	params string
}

// writeStackedBars draws c for run r: the run's parameters in the title,
// a legend and a caption naming the run below the axes.
func writeStackedBars(w io.Writer, r *results.Result, c stackedBars) error {
	bars, texts := slices.Clone(c.bars), slices.Clone(c.texts)
	// The first on top: NominalY counts from the bottom.
	slices.Reverse(bars)
	slices.Reverse(texts)
	user, sys := make(plotter.Values, len(bars)), make(plotter.Values, len(bars))
	names := make([]string, len(bars))
	var labels plotter.XYLabels
	for i, b := range bars {
		user[i], sys[i], names[i] = b.user, b.sys, b.name
		labels.XYs = append(labels.XYs, plotter.XY{X: max(b.user+b.sys, 0), Y: float64(i)})
		labels.Labels = append(labels.Labels, texts[i])
	}

	p := plot.New()
	p.Title.Text = c.title
	params := c.params
	if params == "" {
		params = paramLine(r)
	}
	if params != "" {
		p.Title.Text += " (" + params + ")"
	}
	p.X.Label.Text = c.xLabel
	p.X.Min = 0
	p.NominalY(names...)
	width := vg.Points(min(28, 260/float64(len(bars))))
	ub, err := plotter.NewBarChart(user, width)
	if err != nil {
		return err
	}
	ub.Horizontal = true
	ub.Color = color.RGBA{R: 0x4c, G: 0x78, B: 0xa8, A: 0xff}
	ub.LineStyle.Width = vg.Points(0.5)
	sb, err := plotter.NewBarChart(sys, width)
	if err != nil {
		return err
	}
	sb.Horizontal = true
	sb.Color = color.RGBA{R: 0xe4, G: 0x57, B: 0x56, A: 0xff}
	sb.LineStyle.Width = vg.Points(0.5)
	sb.StackOn(ub)
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].YAlign = draw.YCenter
		lb.TextStyle[i].Font.Size = vg.Points(9)
	}
	p.Add(ub, sb, lb)
	// Room on the right for the costliest bar's text.
	maxX := 0.0
	for _, b := range bars {
		maxX = max(maxX, b.user+b.sys)
	}
	room := c.room
	if room == 0 {
		room = 1.6
	}
	if maxX > 0 {
		p.X.Max = maxX * room
	} else {
		p.X.Max = 1
	}

	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(10)
	legend.Padding = vg.Points(2)
	legend.Add("user_s (median)", ub)
	legend.Add("sys_s (median)", sb)
	caption := plotCaption([]*results.Result{r})
	caption = caption[:len(caption)-1]
	n := r.Parameters["repeat"]
	if n == "" {
		n = "?"
	}
	caption = append(caption, "each bar: the medians of "+n+" repeat(s); "+c.reading+"; emulated machines under QEMU, not the original hardware or kernel")
	fig := &figure{plot: p, legend: legend, caption: wrapCaption(caption)}
	svg := vgsvg.New(fig.size())
	fig.draw(draw.New(svg))
	_, err = svg.WriteTo(w)
	return err
}

// paramLine is the run's parameters other than repeat, "k=v, ...".
func paramLine(r *results.Result) string {
	var parts []string
	for _, k := range sortedKeys(r.Parameters) {
		if k != "repeat" {
			parts = append(parts, k+"="+r.Parameters[k])
		}
	}
	return strings.Join(parts, ", ")
}

// fmtSeconds renders a time in seconds to three significant digits.
func fmtSeconds(s float64) string { return fmt.Sprintf("%.3g", s) }

// BarPlotBeside writes the bar plot of r beside its result document at
// path (NAME.svg for NAME.json), whole or not at all, and returns the line
// for `lab run` to print: "plot: PATH", a warning naming the plot, or ""
// when r has nothing to draw as bars (a sweep has its own plot). A plot
// that cannot be drawn never fails the run.
func BarPlotBeside(path string, r *results.Result) string {
	key := BarKey(r)
	if key == "" || path == "" {
		return ""
	}
	return plotBeside(path, func(w io.Writer) error { return WriteBarPlot(w, r, key) })
}

// plotBeside writes what plot draws to NAME.svg beside the result at
// path, whole or not at all, and returns the line for `lab run` to print.
func plotBeside(path string, plot func(io.Writer) error) string {
	out := strings.TrimSuffix(path, filepath.Ext(path)) + ".svg"
	var buf bytes.Buffer
	if err := plot(&buf); err != nil {
		if errors.Is(err, ErrNothingToPlot) {
			return "no plot: " + err.Error()
		}
		return fmt.Sprintf("warning: plot %s: %v", out, err)
	}
	f, err := os.CreateTemp(filepath.Dir(out), ".plot-*.svg")
	if err != nil {
		return fmt.Sprintf("warning: plot %s: %v", out, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		return fmt.Sprintf("warning: plot %s: %v", out, err)
	}
	return "plot: " + out
}
