package render

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"lab/results"
	"lab/results/stats"
)

// PlotOptions say what a sweep plot shows. Zero fields are filled in from
// the runs.
type PlotOptions struct {
	// X is the swept key on the x axis; default: the first swept key whose
	// values are all numbers, else the first swept key.
	X string
	// XLabel labels the x axis; default X.
	XLabel string
	// Metrics are the metrics drawn (PlotMetrics chooses them); those in
	// another unit than the first found are left out: one y axis.
	Metrics []string
	// YLabel labels the y axis; default "time (UNIT)" for a time unit,
	// else the metrics and their unit.
	YLabel string
	// Title is the plot's title; default plugin/experiment: metrics
	// against X.
	Title string
	// Claims are the experiment's claims: each crossover over X with a
	// published point (At) is marked there, its tolerance shaded; one
	// beyond the points swept is named at that edge of the axes
	// ("E1.1 band 550–650 →") rather than stretching the axis to it.
	Claims []results.Claim
}

// PlotMetrics chooses what a sweep plot over x draws: the two curves of
// a crossover claim over x, when the experiment has one (that is what the
// claim is about, and its published point is marked on them); else main,
// the experiment's main metric, with the metrics its ratio claims set
// against it (fork+wait beside pthread_create+join).
func PlotMetrics(main, x string, claims []results.Claim) []string {
	var out []string
	add := func(ms ...string) {
		for _, m := range ms {
			if m != "" && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	for _, c := range claims {
		if c.Crossover != nil && c.Crossover.Sweep == x {
			add(c.Crossover.First, c.Crossover.Second)
		}
	}
	if len(out) > 0 {
		return out
	}
	add(main)
	for _, c := range claims {
		if r := c.Ratio; r != nil && (r.Numerator == main || r.Denominator == main) {
			add(r.Numerator, r.Denominator)
		}
	}
	return out
}

// PlotX is the default x axis of a sweep: the first swept key whose
// values are all numbers, else the first.
func PlotX(s *results.Sweep) string {
	if s == nil || len(s.Axes) == 0 {
		return ""
	}
	for _, a := range s.Axes {
		if results.Numeric(a.Values) {
			return a.Key
		}
	}
	return s.Axes[0].Key
}

// plotPoint is one point of a series: the median and range of a summary.
type plotPoint struct {
	x, y, lo, hi float64
	label        string // the x value as swept
}

// plotSeries is one line: a metric of one run at one set of the labels
// other than x.
type plotSeries struct {
	name, metric string
	points       []plotPoint
}

// ErrNothingToPlot is returned (wrapped) by WriteSweepPlot when the runs
// have no samples of the metrics at any point of the sweep.
var ErrNothingToPlot = errors.New("nothing to plot")

// WriteSweepPlot writes an SVG of runs against a swept key: y the median
// of each metric at each point (bars: min..max over the repeats), one
// line per metric and per set of the other labels (mode=process,
// mode=thread), and with several runs (one per profile) one set of lines
// per run; published crossovers marked (named at the edge when beyond
// the points swept: the x axis spans the points); a title, axes with
// units, a legend, and a caption with each run's profile, kernel, clock
// and accelerator. The x (and y) axis is logarithmic when its values are
// positive and span two decades or more.
func WriteSweepPlot(w io.Writer, runs []*results.Result, o PlotOptions) error {
	fig, err := sweepPlot(runs, o)
	if err != nil {
		return err
	}
	svg := vgsvg.New(fig.size())
	fig.draw(draw.New(svg))
	_, err = svg.WriteTo(w)
	return err
}

// figure is a plot with its legend and caption below it: a legend inside
// the axes would hide the curves that start at its corner.
type figure struct {
	plot    *plot.Plot
	legend  plot.Legend
	caption []string
	// height is the axes' height; 0: plotHeight.
	height vg.Length
}

// sweepPlot builds the figure WriteSweepPlot draws.
func sweepPlot(runs []*results.Result, o PlotOptions) (*figure, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("%w: no runs", ErrNothingToPlot)
	}
	if o.X == "" {
		o.X = PlotX(runs[0].Sweep)
	}
	if o.X == "" {
		return nil, fmt.Errorf("%w: run %s is not a sweep", ErrNothingToPlot, runs[0].ID)
	}
	series, unit, nominal, err := plotData(runs, o)
	if err != nil {
		return nil, err
	}
	fillPlotDefaults(&o, runs[0], unit)

	p := plot.New()
	p.Title.Text = o.Title
	p.X.Label.Text = o.XLabel
	p.Y.Label.Text = o.YLabel
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(10)
	legend.Padding = vg.Points(2)
	p.Add(plotter.NewGrid())

	var xs, ys []float64
	for _, s := range series {
		for _, pt := range s.points {
			xs = append(xs, pt.x)
			ys = append(ys, pt.lo, pt.hi)
		}
	}
	logX := nominal == nil && logWorthy(xs)
	logY := logWorthy(ys)
	if logX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		p.X.Label.Text += " (log scale)"
	}
	if logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		p.Y.Label.Text += " (log scale)"
	} else {
		p.Y.Tick.Marker = valueTicks{plot.DefaultTicks{}}
		if slices.Min(ys) >= 0 {
			// From zero: the reader sees proportions, not just slopes.
			p.Y.Min = 0
		}
	}
	switch ticks := sweptTicks(series); {
	case nominal != nil:
		p.NominalX(nominal...)
	case len(ticks) <= 12:
		// The values swept, not round numbers between them.
		p.X.Tick.Marker = spacedTicks{ticks: ticks, log: logX, style: p.X.Tick.Label}
	case !logX:
		p.X.Tick.Marker = valueTicks{plot.DefaultTicks{}}
	}
	ylo, yhi := slices.Min(ys), slices.Max(ys)
	if !logY && ylo >= 0 {
		ylo = 0
	}

	// The x axis spans the points swept (and where their curves
	// crossed): a published crossover beyond them is named at the edge,
	// not drawn there.
	xlo, xhi := slices.Min(xs), slices.Max(xs)
	crossings := measuredCrossings(runs, o.Claims, o.X, nominal == nil)
	for _, m := range crossings {
		xlo, xhi = math.Min(xlo, m.at), math.Max(xhi, m.at)
	}
	marks := crossoverMarks(o.Claims, o.X, nominal == nil)
	// Marks in warm colours the series palette does not start with, told
	// apart by colour and dash.
	markColors := []color.NRGBA{{R: 200, G: 110, B: 0, A: 255}, {R: 140, G: 60, B: 160, A: 255}, {R: 120, G: 120, B: 120, A: 255}}
	var edges edgeMarks
	for i, m := range marks {
		if m.at < xlo || m.at > xhi {
			edges = append(edges, edgeMark{text: m.edgeText(m.at > xhi), right: m.at > xhi, color: markColors[i%len(markColors)]})
		}
	}
	ytop := edges.headroom(ylo, yhi, logY)
	for i, m := range marks {
		mc := markColors[i%len(markColors)]
		lo, hi := m.at-m.tol, m.at+m.tol
		if logX {
			lo = math.Max(lo, m.at/10)
		}
		lo, hi = math.Max(lo, xlo), math.Min(hi, xhi)
		if m.tol > 0 && lo < hi {
			band, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: ylo}, {X: hi, Y: ylo}, {X: hi, Y: ytop}, {X: lo, Y: ytop}})
			if err != nil {
				return nil, err
			}
			band.Color = color.NRGBA{R: mc.R, G: mc.G, B: mc.B, A: 40}
			band.LineStyle.Width = 0
			p.Add(band)
		}
		l, err := plotter.NewLine(plotter.XYs{{X: m.at, Y: ylo}, {X: m.at, Y: ytop}})
		if err != nil {
			return nil, err
		}
		l.Color = mc
		l.Width = vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(float64(6 + 3*i)), vg.Points(3)}
		if m.at >= xlo && m.at <= xhi {
			p.Add(l)
		}
		legend.Add(m.name, l)
	}
	// Where this run's curves crossed, as its verdict placed it.
	for _, m := range crossings {
		pts, err := plotter.NewScatter(plotter.XYs{{X: m.at, Y: ylo}})
		if err != nil {
			return nil, err
		}
		pts.Shape = draw.PyramidGlyph{}
		pts.Radius = vg.Points(5)
		pts.Color = color.Black
		p.Add(pts)
		legend.Add(m.name, pts)
	}

	for i, s := range series {
		xys := make(plotter.XYs, len(s.points))
		errs := make(plotter.YErrors, len(s.points))
		for j, pt := range s.points {
			xys[j] = plotter.XY{X: pt.x, Y: pt.y}
			errs[j].Low, errs[j].High = pt.y-pt.lo, pt.hi-pt.y
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("plot series %s: %w", s.name, err)
		}
		line.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		line.Width = vg.Points(1.5)
		line.Dashes = plotutil.Dashes(i)
		pts.Shape = plotutil.Shape(i)
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{xys, errs})
		if err != nil {
			return nil, fmt.Errorf("plot series %s: %w", s.name, err)
		}
		bars.Color = plotutil.Color(i)
		p.Add(line, pts, bars)
		legend.Add(s.name, line, pts)
	}
	if nominal == nil {
		p.X.Min, p.X.Max = xlo, xhi
	}
	p.Y.Max = math.Max(p.Y.Max, ytop)
	if len(edges) > 0 {
		p.Add(edges)
	}

	return &figure{plot: p, legend: legend, caption: wrapCaption(plotCaption(runs))}, nil
}

const captionLine = 12 // points

// plotHeight is the height of the axes; the page is 8 inches wide.
const plotHeight = 5 * vg.Inch

func (f *figure) legendHeight() vg.Length {
	r := f.legend.Rectangle(draw.Canvas{})
	return r.Max.Y - r.Min.Y + vg.Points(8)
}

func (f *figure) captionHeight() vg.Length {
	return vg.Points(float64(len(f.caption)*captionLine + 8))
}

// size is the page: the axes, the legend below them, the caption last.
func (f *figure) size() (w, h vg.Length) {
	axes := f.height
	if axes == 0 {
		axes = plotHeight
	}
	return 8 * vg.Inch, axes + f.legendHeight() + f.captionHeight()
}

// draw draws the figure on dc, with a margin.
func (f *figure) draw(dc draw.Canvas) {
	capH, legH := f.captionHeight(), f.legendHeight()
	pad := vg.Points(8)
	f.plot.Draw(draw.Crop(dc, pad/2, -pad, capH+legH, -pad/2))
	leg := draw.Crop(dc, 0, 0, capH, 0)
	leg.Max.Y = leg.Min.Y + legH
	leg.Min.X += vg.Points(48)
	f.legend.Draw(leg)
	sty := captionStyle()
	for i, line := range f.caption {
		dc.FillText(sty, vg.Point{X: dc.Min.X + pad, Y: dc.Min.Y + capH - vg.Points(float64(4+i*captionLine))}, line)
	}
}

// captionStyle is the caption's text style.
func captionStyle() text.Style {
	return text.Style{Color: color.Gray{Y: 60}, Font: font.From(plot.DefaultFont, 9), Handler: plot.DefaultTextHandler, YAlign: draw.YTop}
}

// wrapCaption breaks caption lines wider than the page at ", ",
// indenting the continuations.
func wrapCaption(lines []string) []string {
	sty := captionStyle()
	room := 8*vg.Inch - vg.Points(16)
	var out []string
	for _, line := range lines {
		for sty.Width(line) > room {
			cut := -1
			for i := strings.Index(line, ", "); i >= 0; {
				if sty.Width(line[:i+1]) > room {
					break
				}
				cut = i
				j := strings.Index(line[i+2:], ", ")
				if j < 0 {
					break
				}
				i += 2 + j
			}
			if cut < 0 {
				break
			}
			out = append(out, line[:cut+1])
			indent := "    "
			if strings.HasPrefix(line, indent) {
				indent += "    "
			}
			line = indent + line[cut+2:]
		}
		out = append(out, line)
	}
	return out
}

// plotData gathers the series of runs: per run, per metric of o.Metrics
// (in the first unit found), per set of labels other than o.X. nominal is
// the x values in order when one is not a number (then x is the index).
func plotData(runs []*results.Result, o PlotOptions) (series []plotSeries, unit string, nominal []string, err error) {
	// The x values, in sweep order where the run records it.
	var xvals []string
	for _, r := range runs {
		if r.Sweep != nil {
			for _, a := range r.Sweep.Axes {
				if a.Key == o.X {
					for _, v := range a.Values {
						if !slices.Contains(xvals, v) {
							xvals = append(xvals, v)
						}
					}
				}
			}
		}
		for _, s := range stats.Summaries(r) {
			if v, ok := s.Labels[o.X]; ok && !slices.Contains(xvals, v) {
				xvals = append(xvals, v)
			}
		}
	}
	if !results.Numeric(xvals) {
		nominal = xvals
	}
	metrics := o.Metrics
	if len(metrics) == 0 {
		return nil, "", nil, fmt.Errorf("%w: no metric chosen", ErrNothingToPlot)
	}
	for _, r := range runs {
		byName := map[string]*plotSeries{}
		var order []string
		for _, s := range stats.Summaries(r) {
			x, ok := s.Labels[o.X]
			if !ok || !slices.Contains(metrics, s.Metric) {
				continue
			}
			if unit == "" {
				unit = s.Unit
			}
			if s.Unit != unit {
				continue
			}
			rest := maps.Clone(s.Labels)
			delete(rest, o.X)
			name := seriesName(runs, r, metrics, s.Metric, rest)
			ps := byName[name]
			if ps == nil {
				ps = &plotSeries{name: name, metric: s.Metric}
				byName[name] = ps
				order = append(order, name)
			}
			pt := plotPoint{y: s.Median, lo: s.Min, hi: s.Max, label: x}
			if nominal != nil {
				pt.x = float64(slices.Index(nominal, x))
			} else {
				pt.x, _ = strconv.ParseFloat(x, 64)
			}
			ps.points = append(ps.points, pt)
		}
		// Series of one run: by metric as given, then by labels.
		slices.SortStableFunc(order, func(a, b string) int {
			return cmp.Compare(slices.Index(metrics, byName[a].metric), slices.Index(metrics, byName[b].metric))
		})
		for _, name := range order {
			s := byName[name]
			slices.SortFunc(s.points, func(a, b plotPoint) int { return cmp.Compare(a.x, b.x) })
			series = append(series, *s)
		}
	}
	if len(series) == 0 {
		return nil, "", nil, fmt.Errorf("%w: no samples of %s labelled with %s", ErrNothingToPlot, strings.Join(metrics, ", "), o.X)
	}
	return series, unit, nominal, nil
}

// seriesName names a line in the legend with what tells it apart: the
// profile when several runs are drawn, the metric when several are, and
// the other labels.
func seriesName(runs []*results.Result, r *results.Result, metrics []string, metric string, rest map[string]string) string {
	var parts []string
	if len(runs) > 1 {
		parts = append(parts, results.ProfileName(r.Machine)+":")
	}
	if len(metrics) > 1 || len(rest) == 0 {
		parts = append(parts, metric)
	}
	if l := results.FormatLabels(rest); l != "" {
		parts = append(parts, l)
	}
	return strings.Join(parts, " ")
}

func fillPlotDefaults(o *PlotOptions, r *results.Result, unit string) {
	if o.XLabel == "" {
		o.XLabel = o.X
	}
	if o.YLabel == "" {
		if results.IsTimeUnit(unit) {
			o.YLabel = "time (" + unit + ")"
		} else {
			o.YLabel = strings.Join(o.Metrics, ", ") + " (" + unit + ")"
		}
	}
	if o.Title == "" {
		o.Title = fmt.Sprintf("%s/%s: %s against %s", r.Plugin, r.Experiment, strings.Join(o.Metrics, ", "), o.X)
	}
}

// valueTicks labels a ticker's major ticks as the tables do (FormatValue:
// 250, not 250.00).
type valueTicks struct{ plot.Ticker }

func (t valueTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := t.Ticker.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = results.FormatValue(ticks[i].Value)
		}
	}
	return ticks
}

// sweptTicks are the x values of the series, as swept, as major ticks.
func sweptTicks(series []plotSeries) plot.ConstantTicks {
	seen := map[float64]bool{}
	var ticks plot.ConstantTicks
	for _, s := range series {
		for _, pt := range s.points {
			if !seen[pt.x] {
				seen[pt.x] = true
				ticks = append(ticks, plot.Tick{Value: pt.x, Label: pt.label})
			}
		}
	}
	slices.SortFunc(ticks, func(a, b plot.Tick) int { return cmp.Compare(a.Value, b.Value) })
	return ticks
}

// logWorthy says whether values are positive and span two decades or
// more, where a linear axis would crush the small ones.
func logWorthy(vs []float64) bool {
	if len(vs) == 0 {
		return false
	}
	lo, hi := slices.Min(vs), slices.Max(vs)
	return lo > 0 && hi/lo >= 100
}

// plotCaption is one line per run: profile, kernel, clock, accelerator,
// how it booted, outcome and id; then how to read the points.
func plotCaption(runs []*results.Result) []string {
	var lines []string
	repeats := map[string]bool{}
	for _, r := range runs {
		kernel := results.OrUnknown(r.Machine.KernelID)
		if r.Machine.KernelPackage != "" {
			kernel += " (" + r.Machine.KernelPackage + ")"
		}
		if r.Guest.KernelRelease != "" {
			kernel += " release " + r.Guest.KernelRelease
		}
		line := fmt.Sprintf("profile %s, kernel %s, clock %s, accelerator %s", results.OrUnknown(results.ProfileName(r.Machine)), kernel,
			results.OrUnknown(r.Machine.Clock), results.OrUnknown(r.Machine.Accelerator))
		if r.Machine.Boot != "" {
			line += ", boot " + r.Machine.Boot
		}
		lines = append(lines, line)
		status := results.OrUnknown(r.Outcome.Status)
		if r.Sweep != nil {
			status += fmt.Sprintf(", %d of %d points done", r.Sweep.Done(), len(r.Sweep.Points))
		}
		lines = append(lines, "    run "+r.ID+": "+status)
		if n := r.Parameters["repeat"]; n != "" {
			repeats[n] = true
		}
	}
	how := "each point: the median over the repeats"
	if len(repeats) == 1 {
		for n := range repeats {
			how = "each point: the median of " + n + " repeat(s)"
		}
	}
	lines = append(lines, how+"; bars: min..max; emulated machines under QEMU, not the original hardware or kernel")
	return lines
}
