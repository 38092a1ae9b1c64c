package render

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"lab/results"
)

// The marks a sweep plot sets on its x axis, and how it keeps them and
// the swept values legible: the axis spans the points the run swept, a
// published crossover beyond them is named at the edge it lies beyond
// (stretching the axis to it would crush the run's points into a
// corner), and a swept value whose label would print over another's is
// left a tick without a label.

// mark is a published crossover (at, ± tol) or a measured crossing on
// the x axis.
type mark struct {
	name, id string
	at, tol  float64
}

// edgeText says where m lies beyond the x range swept, with an arrow
// pointing to the edge it lies beyond: "E1.1 band 550–650 →".
func (m mark) edgeText(right bool) string {
	s := m.id + " at " + results.FormatValue(m.at)
	if m.tol > 0 {
		s = m.id + " band " + results.FormatValue(m.at-m.tol) + "–" + results.FormatValue(m.at+m.tol)
	}
	if right {
		return s + " →"
	}
	return "← " + s
}

// crossoverMarks are the published crossovers over x among claims.
func crossoverMarks(claims []results.Claim, x string, numericX bool) []mark {
	var out []mark
	for _, c := range claims {
		k := c.Crossover
		if k == nil || k.Sweep != x || !numericX {
			continue
		}
		at, tol := (k.BandStart+k.BandEnd)/2, (k.BandEnd-k.BandStart)/2
		name := fmt.Sprintf("%s published crossover %s=%s..%s", c.ID, x, results.FormatValue(k.BandStart), results.FormatValue(k.BandEnd))
		if c.Profile != "" {
			name += " (" + c.Profile + ")"
		}
		out = append(out, mark{name: name, id: c.ID, at: at, tol: tol})
	}
	return out
}

// measuredCrossings are the crossings the runs' verdicts on crossover
// claims over x found (the "crossing" number), one per run and claim.
func measuredCrossings(runs []*results.Result, claims []results.Claim, x string, numericX bool) []mark {
	over := map[string]bool{}
	for _, c := range claims {
		if c.Crossover != nil && c.Crossover.Sweep == x {
			over[c.ID] = true
		}
	}
	if !numericX || len(over) == 0 {
		return nil
	}
	var out []mark
	seen := map[string]bool{}
	for _, r := range runs {
		for _, v := range r.Verdicts {
			if !over[v.Claim] {
				continue
			}
			for _, n := range v.Numbers {
				key := results.ProfileName(r.Machine) + " " + results.FormatValue(n.Value)
				// "crossing" in runs judged before the verdicts' strata;
				// the crossover kind's "interpolated crossing" (a
				// stratum's name before it) since.
				if n.Name != "crossing" && !strings.HasSuffix(n.Name, "interpolated crossing") || seen[key] {
					continue
				}
				seen[key] = true
				name := fmt.Sprintf("measured crossing %s=%s (%s, %s: %s)", x, results.FormatValue(n.Value), results.ProfileName(r.Machine), v.Claim, v.Verdict)
				out = append(out, mark{name: name, id: v.Claim, at: n.Value})
			}
		}
	}
	return out
}

// Sizes the marks and ticks are laid out with. The axes' width and
// height are those of the page less the axis labels, ticks and title,
// a little under the real ones: a label is then dropped or the headroom
// made a little early, never too late.
const (
	axesWidth  = 8*vg.Inch - 80 // points
	axesHeight = plotHeight - 80
	edgeLine   = 12 // points per line of edge marks
	edgePad    = 4  // points from the axes' corner
	tickGap    = 10 // points between two tick labels
)

// edgeMark is a published crossover beyond the x range swept, said in
// words at the top corner of the side it lies beyond, in its colour.
type edgeMark struct {
	text  string
	right bool
	color color.Color
}

// edgeMarks draws its marks stacked down from the axes' top corners, on
// white so that grid lines do not run through them. It has no data
// range: it does not widen the axes.
type edgeMarks []edgeMark

// Plot implements plot.Plotter.
func (ms edgeMarks) Plot(c draw.Canvas, _ *plot.Plot) {
	var n [2]int // marks drawn at the left, right
	for _, m := range ms {
		side := 0
		if m.right {
			side = 1
		}
		sty := edgeStyle()
		sty.Color = m.color
		w := sty.Width(m.text)
		top := c.Max.Y - edgePad - vg.Length(n[side]*edgeLine)
		n[side]++
		x := c.Min.X + edgePad
		if m.right {
			x = c.Max.X - edgePad - w
		}
		c.FillPolygon(color.NRGBA{R: 255, G: 255, B: 255, A: 230}, []vg.Point{
			{X: x - 2, Y: top + 1}, {X: x + w + 2, Y: top + 1}, {X: x + w + 2, Y: top - edgeLine + 1}, {X: x - 2, Y: top - edgeLine + 1}})
		c.FillText(sty, vg.Point{X: x, Y: top}, m.text)
	}
}

// lines is the most marks stacked at one corner.
func (ms edgeMarks) lines() int {
	var n [2]int
	for _, m := range ms {
		if m.right {
			n[1]++
		} else {
			n[0]++
		}
	}
	return max(n[0], n[1])
}

// headroom is the top of a y axis over lo..hi that leaves the top lines
// of edge marks above the data.
func (ms edgeMarks) headroom(lo, hi float64, log bool) float64 {
	n := ms.lines()
	if n == 0 || hi <= lo {
		return hi
	}
	f := float64(n*edgeLine+2*edgePad) / float64(axesHeight)
	f /= 1 - f // of the data's span
	if log {
		return hi * math.Pow(hi/lo, f)
	}
	return hi + (hi-lo)*f
}

func edgeStyle() text.Style {
	return text.Style{Font: font.From(plot.DefaultFont, 10), Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YTop}
}

// spacedTicks are the values swept as major ticks, each labelled where
// its label fits beside its labelled neighbours: close values on a
// linear axis (10, 11, 12 beside 100) would print over each other. The
// first and the last value swept keep their labels; a value left
// unlabelled keeps its (minor) tick mark.
type spacedTicks struct {
	ticks plot.ConstantTicks
	log   bool
	style text.Style // the labels'
}

// Ticks implements plot.Ticker.
func (t spacedTicks) Ticks(lo, hi float64) []plot.Tick {
	out := slices.Clone([]plot.Tick(t.ticks))
	pos := func(v float64) float64 {
		if t.log {
			return (math.Log(v) - math.Log(lo)) / (math.Log(hi) - math.Log(lo)) * float64(axesWidth)
		}
		return (v - lo) / (hi - lo) * float64(axesWidth)
	}
	fits := func(i, j int) bool {
		need := (t.style.Width(t.ticks[i].Label)+t.style.Width(t.ticks[j].Label))/2 + tickGap
		return math.Abs(pos(t.ticks[j].Value)-pos(t.ticks[i].Value)) >= float64(need)
	}
	last := -1
	for i := range out {
		if last >= 0 && !fits(last, i) {
			out[i].Label = ""
			continue
		}
		last = i
	}
	if n := len(out) - 1; n > 0 && out[n].Label == "" {
		out[n].Label = t.ticks[n].Label
		for i := n - 1; i > 0; i-- {
			if out[i].Label == "" {
				continue
			}
			if fits(i, n) {
				break
			}
			out[i].Label = ""
		}
	}
	return out
}
