package render

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"lab/plugins/contract"
	"lab/results"
)

// ChartFor is the first of views' charts that fits r, nil if none: a
// run that is not a sweep, whose samples of the chart's stacked metrics
// all carry exactly its label.
func ChartFor(r *results.Result, views results.Views) *contract.Chart {
	if r == nil || r.Sweep != nil {
		return nil
	}
	for i := range views.Charts {
		c := &views.Charts[i]
		n := 0
		ok := true
		for _, s := range r.Samples {
			if !slices.Contains(c.Stack, s.Metric) {
				continue
			}
			if _, has := s.Labels[c.Label]; !has || len(s.Labels) != 1 {
				ok = false
				break
			}
			n++
		}
		if ok && n > 0 {
			return c
		}
	}
	return nil
}

// bar is one bar: the medians of one label value.
type bar struct {
	name string
	// stack are the medians of the chart's Stack, total that of its
	// Total.
	stack    []float64
	total    float64
	hasTotal bool
}

func (b bar) sum() float64 {
	s := 0.0
	for _, v := range b.stack {
		s += v
	}
	return s
}

// barData is r's bars under key for chart c, in the order the run
// measured them.
func barData(r *results.Result, key string, c *contract.Chart) []bar {
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
		b := bar{name: n, stack: make([]float64, len(c.Stack))}
		for i, m := range c.Stack {
			b.stack[i], _ = median(m, n)
		}
		if c.Total != "" {
			b.total, b.hasTotal = median(c.Total, n)
		}
		out = append(out, b)
	}
	return out
}

// unitOf is the unit of metric in r's summaries, "" if none.
func unitOf(r *results.Result, metric string) string {
	for _, s := range r.Summary {
		if s.Metric == metric {
			return s.Unit
		}
	}
	return ""
}

// shortName is a metric's name less its unit suffix: user for user_s.
func shortName(metric string) string {
	if i := strings.LastIndexByte(metric, '_'); i > 0 {
		return metric[:i]
	}
	return metric
}

// WriteChart draws r as the first of views' charts that fits it
// (ChartFor): horizontal bars, one per value of the chart's label, in the
// order the run measured them from the top, the medians of its stacked
// metrics one after the other, and at each bar's end the median of its
// Total and of the stacked metrics. The axis is linear: a bar a hundred
// times shorter than the longest is a sliver, which is the finding.
func WriteChart(w io.Writer, r *results.Result, views results.Views) error {
	c := ChartFor(r, views)
	if c == nil {
		var want []string
		for _, c := range views.Charts {
			want = append(want, strings.Join(c.Stack, " and ")+" samples by "+c.Label)
		}
		if len(want) == 0 {
			return fmt.Errorf("%w: run %s: its experiment declares no chart", ErrNothingToPlot, r.ID)
		}
		return fmt.Errorf("%w: run %s has no %s", ErrNothingToPlot, r.ID, strings.Join(want, " or "))
	}
	bars := barData(r, c.Label, c)
	if len(bars) == 0 {
		return fmt.Errorf("%w: run %s has no samples", ErrNothingToPlot, r.ID)
	}
	unit := unitOf(r, c.Stack[0])
	texts := make([]string, len(bars))
	for i, b := range bars {
		parts := make([]string, len(c.Stack))
		for j, m := range c.Stack {
			parts[j] = shortName(m) + " " + fmtSeconds(b.stack[j])
		}
		texts[i] = "  " + strings.Join(parts, " + ") + " " + unit
		if b.hasTotal {
			texts[i] = fmt.Sprintf("  %s %s %s (%s)", shortName(c.Total), fmtSeconds(b.total), unit, strings.Join(parts, ", "))
		}
	}
	return writeStackedBars(w, r, c, bars, texts, c.Reading)
}

// barColors fill the stacked metrics' bars, in order.
var barColors = []color.RGBA{
	{R: 0x4c, G: 0x78, B: 0xa8, A: 0xff}, {R: 0xe4, G: 0x57, B: 0x56, A: 0xff},
	{R: 0x72, G: 0xb7, B: 0xb2, A: 0xff}, {R: 0xf5, G: 0x85, B: 0x18, A: 0xff},
	{R: 0x54, G: 0xa2, B: 0x4b, A: 0xff}, {R: 0xb2, G: 0x79, B: 0xa2, A: 0xff},
}

// writeStackedBars draws chart c of run r, one bar per entry of bars (the
// first on top) with texts written at each bar's end: the run's
// parameters in the title, a legend, and a caption naming the run and
// saying how to read the chart (reading) below the axes.
func writeStackedBars(w io.Writer, r *results.Result, c *contract.Chart, bars []bar, texts []string, reading string) error {
	bars, texts = slices.Clone(bars), slices.Clone(texts)
	// The first on top: NominalY counts from the bottom.
	slices.Reverse(bars)
	slices.Reverse(texts)
	values := make([]plotter.Values, len(c.Stack))
	for j := range values {
		values[j] = make(plotter.Values, len(bars))
	}
	names := make([]string, len(bars))
	var labels plotter.XYLabels
	for i, b := range bars {
		for j := range values {
			values[j][i] = b.stack[j]
		}
		names[i] = b.name
		labels.XYs = append(labels.XYs, plotter.XY{X: max(b.sum(), 0), Y: float64(i)})
		labels.Labels = append(labels.Labels, texts[i])
	}

	p := plot.New()
	p.Title.Text = r.Plugin + "/" + r.Experiment + ": " + c.Title
	params := paramLine(r)
	if c.Params != "" {
		params = paramRE.ReplaceAllStringFunc(c.Params, func(m string) string { return r.Parameters[m[1:len(m)-1]] })
	}
	if params != "" {
		p.Title.Text += " (" + params + ")"
	}
	p.X.Label.Text = c.Axis
	p.X.Min = 0
	p.NominalY(names...)
	width := vg.Points(min(28, 260/float64(len(bars))))
	charts := make([]*plotter.BarChart, len(values))
	for j, v := range values {
		bc, err := plotter.NewBarChart(v, width)
		if err != nil {
			return err
		}
		bc.Horizontal = true
		bc.Color = barColors[j%len(barColors)]
		bc.LineStyle.Width = vg.Points(0.5)
		if j > 0 {
			bc.StackOn(charts[j-1])
		}
		charts[j] = bc
		p.Add(bc)
	}
	lb, err := plotter.NewLabels(labels)
	if err != nil {
		return err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].YAlign = draw.YCenter
		lb.TextStyle[i].Font.Size = vg.Points(9)
	}
	p.Add(lb)
	// Room on the right for the longest bar's text.
	maxX := 0.0
	for _, b := range bars {
		maxX = max(maxX, b.sum())
	}
	room := c.Room
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
	for j, m := range c.Stack {
		legend.Add(m+" (median)", charts[j])
	}
	caption := plotCaption([]*results.Result{r})
	caption = caption[:len(caption)-1]
	n := r.Parameters["repeat"]
	if n == "" {
		n = "?"
	}
	caption = append(caption, "each bar: the medians of "+n+" repeat(s); "+reading+"; emulated machines under QEMU, not the original hardware or kernel")
	fig := &figure{plot: p, legend: legend, caption: wrapCaption(caption)}
	svg := vgsvg.New(fig.size())
	fig.draw(draw.New(svg))
	_, err = svg.WriteTo(w)
	return err
}

// paramRE is a parameter's place in a chart's Params: {name}.
var paramRE = regexp.MustCompile(`\{[^{}]*\}`)

// paramLine is the run's parameters other than repeat, "k=v, ...".
func paramLine(r *results.Result) string {
	var parts []string
	for _, k := range results.SortedKeys(r.Parameters) {
		if k != "repeat" {
			parts = append(parts, k+"="+r.Parameters[k])
		}
	}
	return strings.Join(parts, ", ")
}

// fmtSeconds renders a time in seconds to three significant digits.
func fmtSeconds(s float64) string { return fmt.Sprintf("%.3g", s) }

// ChartBeside writes the chart of r (ChartFor) beside its result
// document at path (NAME.svg for NAME.json), whole or not at all, and
// returns the line for `lab run` to print: "plot: PATH", a warning naming
// the plot, or "" when no chart of views fits r (a sweep has its own
// plot). A plot that cannot be drawn never fails the run.
func ChartBeside(path string, r *results.Result, views results.Views) string {
	if path == "" || ChartFor(r, views) == nil {
		return ""
	}
	return plotBeside(path, func(w io.Writer) error { return WriteChart(w, r, views) })
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
