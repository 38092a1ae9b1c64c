package render

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"lab/results"
	"lab/results/history"
)

// The report's History section: the nights read as series (lab history),
// a plot of each series that changed with its change points marked, and
// the claims' verdicts night by night.

type (
	historyView struct {
		Anchor            string
		Nights            []nightView
		First, Last       nightView
		Alpha, MinChange  string
		UnstableAbove     string
		Series            int
		Changed           []historySeriesView
		Unchanged, TooFew int
		Claims            []claimHistoryView
		// ClaimsNotRun counts the claims no night's runs decided.
		ClaimsNotRun int
		NightNumbers []int
		VerdictKey   string
	}
	nightView struct {
		N                int
		Name, Start, Dir string
		Runs             int
	}
	historySeriesView struct {
		Anchor, Cell, Name, Unit string
		Unstable                 bool
		Noise                    string
		Changes                  []string
		Plot                     template.HTML
		PlotNote                 string
		Rows                     []historyRow
	}
	historyRow struct {
		N                   int
		Name, Median, Range string
		Count               int
		Change, Class       string
	}
	claimHistoryView struct {
		ID, Anchor, Statement string
		Verdicts              []letterView
		Flips                 []string
	}
	letterView struct{ Letter, Verdict, Class string }
)

// historyViewOf is what the report shows of h: claimAnchor links a
// claim to its place in the claims table, where it has one.
func historyViewOf(h *history.History, ids anchors, claimAnchor map[string]string) *historyView {
	v := &historyView{Anchor: ids.make("", "history"), Series: len(h.Series),
		Alpha: strconv.FormatFloat(h.Options.Alpha, 'g', -1, 64), MinChange: results.FormatValue(h.Options.MinChange),
		UnstableAbove: results.FormatValue(h.Options.MinChange / 2), VerdictKey: results.LetterKey}
	for i, n := range h.Nights {
		v.Nights = append(v.Nights, nightView{N: i + 1, Name: n.Name, Start: n.Start.UTC().Format("2006-01-02 15:04 UTC"), Dir: n.Dir, Runs: n.Runs})
		v.NightNumbers = append(v.NightNumbers, i+1)
	}
	if len(v.Nights) > 0 {
		v.First, v.Last = v.Nights[0], v.Nights[len(v.Nights)-1]
	}
	for _, s := range h.Series {
		switch {
		case len(s.Changes) > 0:
			v.Changed = append(v.Changed, historySeriesViewOf(h, s, ids.make("history-", s.Cell+"-"+s.Name())))
		case len(s.Points) < 3:
			v.TooFew++
			v.Unchanged++
		default:
			v.Unchanged++
		}
	}
	for _, c := range h.Claims {
		if !slices.ContainsFunc(c.Verdicts, func(x string) bool { return x != results.NotRun }) {
			v.ClaimsNotRun++ // a row of dashes says nothing
			continue
		}
		cv := claimHistoryView{ID: c.ID, Anchor: claimAnchor[c.ID], Statement: c.Statement}
		for _, verdict := range c.Verdicts {
			cv.Verdicts = append(cv.Verdicts, letterView{Letter: results.Letter(verdict), Verdict: verdict, Class: verdictClass(verdict)})
		}
		for _, f := range c.Flips {
			cv.Flips = append(cv.Flips, fmt.Sprintf("night %d: %s → %s", f.Night+1, f.From, f.To))
		}
		v.Claims = append(v.Claims, cv)
	}
	return v
}

func historySeriesViewOf(h *history.History, s history.Series, anchor string) historySeriesView {
	sv := historySeriesView{Anchor: anchor, Cell: s.Cell, Name: s.Name(), Unit: s.Unit, Unstable: s.Unstable,
		Noise: strconv.FormatFloat(s.Noise, 'g', 2, 64) + "%"}
	for _, c := range s.Changes {
		sv.Changes = append(sv.Changes, fmt.Sprintf("night %d (%s): %s", c.Night+1, h.Nights[c.Night].Name, changeDetail(c)))
	}
	for _, p := range s.Points {
		row := historyRow{N: p.Night + 1, Name: h.Nights[p.Night].Name, Median: history.Value(p.Median),
			Range: history.Value(p.Min) + ".." + history.Value(p.Max), Count: p.N}
		for _, c := range s.Changes {
			if c.Night == p.Night {
				row.Change, row.Class = changeDetail(c), changeClass(c)
			}
		}
		sv.Rows = append(sv.Rows, row)
	}
	var buf bytes.Buffer
	fig, err := historyPlot(h, s)
	if err == nil {
		svg := vgsvg.New(fig.size())
		fig.draw(draw.New(svg))
		_, err = svg.WriteTo(&buf)
	}
	if err != nil {
		sv.PlotNote = "the plot could not be drawn: " + err.Error()
		return sv
	}
	if sv.Plot, err = InlineSVG(buf.Bytes()); err != nil {
		sv.PlotNote = "the plot was not inlined: " + err.Error()
	}
	return sv
}

// changeDetail is c.Text() as the page writes it, with an arrow.
func changeDetail(c history.Change) string {
	return fmt.Sprintf("%s (%s → %s, p %.2g)", c.Label(), history.Value(c.Before), history.Value(c.After), c.P)
}

func changeClass(c history.Change) string {
	if c.Worse {
		return "v-bad"
	}
	return "v-ok"
}

// Colours of the history plot: the nights' medians blue, the levels dark grey, a change the worse way
// red and the better way green (the report's badge colours).
var (
	medianColor = color.NRGBA{R: 9, G: 105, B: 218, A: 255}
	levelColor  = color.NRGBA{R: 66, G: 74, B: 83, A: 255}
	worseColor  = color.NRGBA{R: 207, G: 34, B: 46, A: 255}
	betterColor = color.NRGBA{R: 26, G: 127, B: 55, A: 255}
)

// historyPlotHeight is the height of a history plot's axes: lower than
// a sweep's, as a page may carry many.
const historyPlotHeight = 3.5 * vg.Inch

// historyPlot is the plot of series s of h: x the night's number, y its
// median with its min..max as bars, a line at each level's mean (the
// mean of the nights' medians between change points), and each change
// point a dashed vertical line at the first night of its new level,
// labelled with its change. The y axis is fitted to the data (a change
// of a few percent would not show on an axis from zero).
func historyPlot(h *history.History, s history.Series) (*figure, error) {
	if len(s.Points) == 0 {
		return nil, fmt.Errorf("%w: series %s has no nights", ErrNothingToPlot, s.Name())
	}
	p := plot.New()
	p.Title.Text = s.Cell + ": " + s.Name()
	p.X.Label.Text = "night"
	if results.IsTimeUnit(s.Unit) {
		p.Y.Label.Text = s.Metric + ", time (" + s.Unit + ")"
	} else {
		p.Y.Label.Text = s.Metric + " (" + s.Unit + ")"
	}
	p.Y.Tick.Marker = valueTicks{plot.DefaultTicks{}}
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(10)
	legend.Padding = vg.Points(2)

	n := len(h.Nights)
	xlo, xhi := 0.5, float64(n)+0.5
	var ticks plot.ConstantTicks
	for i := 1; i <= n; i++ {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: strconv.Itoa(i)})
	}
	p.X.Tick.Marker = spacedTicks{ticks: ticks, style: p.X.Tick.Label}
	p.X.Min, p.X.Max = xlo, xhi

	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, pt := range s.Points {
		ylo, yhi = math.Min(ylo, pt.Min), math.Max(yhi, pt.Max)
	}
	pad := (yhi - ylo) * 0.08
	if pad == 0 {
		pad = math.Max(math.Abs(yhi)*0.01, 1e-9)
	}
	ylo, yhi = ylo-pad, yhi+pad
	labels := newChangeLabels(s.Changes, xlo, xhi)
	ytop := labels.headroom(ylo, yhi)

	// The levels: the mean of the nights' medians between change points.
	cuts := []int{0}
	for _, c := range s.Changes {
		cuts = append(cuts, c.Index)
	}
	cuts = append(cuts, len(s.Points))
	var level *plotter.Line
	for i := 0; i+1 < len(cuts); i++ {
		seg := s.Points[cuts[i]:cuts[i+1]]
		if len(seg) == 0 {
			continue
		}
		sum := 0.0
		for _, pt := range seg {
			sum += pt.Median
		}
		m := sum / float64(len(seg))
		l, err := plotter.NewLine(plotter.XYs{{X: float64(seg[0].Night+1) - 0.35, Y: m}, {X: float64(seg[len(seg)-1].Night+1) + 0.35, Y: m}})
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = levelColor, vg.Points(2)
		p.Add(l)
		level = l
	}

	// The change points, dashed, at the first night of the new level.
	var worse, better *plotter.Line
	for _, c := range s.Changes {
		x := float64(c.Night + 1)
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: ylo}, {X: x, Y: ytop}})
		if err != nil {
			return nil, err
		}
		l.Width = vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		l.Color = betterColor
		if c.Worse {
			l.Color = worseColor
			worse = l
		} else {
			better = l
		}
		p.Add(l)
	}

	// The nights: median and range.
	xys := make(plotter.XYs, len(s.Points))
	errs := make(plotter.YErrors, len(s.Points))
	for i, pt := range s.Points {
		xys[i] = plotter.XY{X: float64(pt.Night + 1), Y: pt.Median}
		errs[i].Low, errs[i].High = pt.Median-pt.Min, pt.Max-pt.Median
	}
	line, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return nil, fmt.Errorf("plot series %s: %w", s.Name(), err)
	}
	line.Color = color.NRGBA{R: 175, G: 184, B: 193, A: 255}
	line.Width = vg.Points(0.75)
	pts.Color, pts.Shape, pts.Radius = medianColor, draw.CircleGlyph{}, vg.Points(3)
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{xys, errs})
	if err != nil {
		return nil, fmt.Errorf("plot series %s: %w", s.Name(), err)
	}
	bars.Color = medianColor
	p.Add(line, bars, pts)
	p.Add(labels)
	p.Y.Min, p.Y.Max = ylo, ytop

	legend.Add("the night's median (bars: min..max)", pts)
	if level != nil {
		legend.Add("level: the mean of its nights' medians", level)
	}
	if worse != nil {
		legend.Add("change point the worse way (its first night)", worse)
	}
	if better != nil {
		legend.Add("change point the better way (its first night)", better)
	}
	caption := []string{
		fmt.Sprintf("nights 1..%d: %s .. %s, named in the table below", n, h.Nights[0].Name, h.Nights[n-1].Name),
		fmt.Sprintf("change points: E-divisive means with a t-test, p < %g, at least %s%% (docs/history.md)",
			h.Options.Alpha, results.FormatValue(h.Options.MinChange)),
		"each point: the median of the night's samples of the cell (every run that night); the y axis does not start at zero",
	}
	if s.Unstable {
		caption = append(caption, fmt.Sprintf("unstable: the nights vary by %.2g%% around their levels, more than half the smallest change asked for; no gate fails on it", s.Noise))
	}
	if s.TickSampled {
		caption = append(caption, "tick-sampled: the metric counts timer ticks (a CPU time from rusage); no gate fails on it")
	}
	return &figure{plot: p, legend: legend, caption: wrapCaption(caption), height: historyPlotHeight}, nil
}

// changeLabels labels each change point at the top of the axes, beside
// its line, on white: "+25.0% worse". Labels that would print over each
// other go a line lower.
type changeLabels []changeLabelMark

type changeLabelMark struct {
	x    float64
	text string
	row  int
	left bool // the label is left of its line (a change in the right half)
	col  color.Color
}

// historyAxesWidth is the axes' width of a history plot, a little under
// the real one (as axesWidth).
const historyAxesWidth = axesWidth

func newChangeLabels(cs []history.Change, xlo, xhi float64) changeLabels {
	sty := edgeStyle()
	var out changeLabels
	var ends []float64 // per row: where its last label ends, in points
	for _, c := range cs {
		m := changeLabelMark{x: float64(c.Night + 1), text: c.Label(), col: betterColor}
		if c.Worse {
			m.col = worseColor
		}
		pos := (m.x - xlo) / (xhi - xlo) * float64(historyAxesWidth)
		w := float64(sty.Width(m.text)) + 4
		m.left = pos > float64(historyAxesWidth)/2
		from := pos + 3
		if m.left {
			from = pos - 3 - w
		}
		m.row = slices.IndexFunc(ends, func(e float64) bool { return e+tickGap <= from })
		if m.row < 0 {
			m.row = len(ends)
			ends = append(ends, 0)
		}
		ends[m.row] = from + w
		out = append(out, m)
	}
	return out
}

func (ls changeLabels) rows() int {
	n := 0
	for _, l := range ls {
		n = max(n, l.row+1)
	}
	return n
}

// headroom is the top of a y axis over lo..hi that leaves the labels'
// rows above the data.
func (ls changeLabels) headroom(lo, hi float64) float64 {
	n := ls.rows()
	if n == 0 || hi <= lo {
		return hi
	}
	f := float64(n*edgeLine+2*edgePad) / float64(historyPlotHeight-80)
	return hi + (hi-lo)*f/(1-f)
}

// Plot implements plot.Plotter.
func (ls changeLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, l := range ls {
		sty := edgeStyle()
		sty.Color = l.col
		w := sty.Width(l.text)
		x := trX(l.x) + 4
		if l.left {
			x = trX(l.x) - 4 - w
		}
		top := c.Max.Y - edgePad - vg.Length(l.row*edgeLine)
		c.FillPolygon(color.NRGBA{R: 255, G: 255, B: 255, A: 230}, []vg.Point{
			{X: x - 2, Y: top + 1}, {X: x + w + 2, Y: top + 1}, {X: x + w + 2, Y: top - edgeLine + 1}, {X: x - 2, Y: top - edgeLine + 1}})
		c.FillText(sty, vg.Point{X: x, Y: top}, l.text)
	}
}
