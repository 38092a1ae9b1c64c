package render

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"lab/results"
	"lab/results/stats"
)

// DesignNames are the rows of the book's table of server designs (UNP
// vol. 1 ch. 30, SEEDS.md E5), by design number: netbench's label design.
var DesignNames = []string{
	"iterative (the baseline)",
	"fork per client",
	"pre-forked, each child calls accept",
	"pre-forked, file lock around accept",
	"pre-forked, thread mutex around accept",
	"pre-forked, parent passes the descriptor",
	"thread per client",
	"pre-threaded, mutex around accept",
	"pre-threaded, main thread accepts",
}

// IsDesigns says whether r is a run of netbench's designs experiment
// that the book's table fits: not a sweep, samples by design alone.
func IsDesigns(r *results.Result) bool {
	if r == nil || r.Plugin != "netbench" || r.Experiment != "designs" || r.Sweep != nil {
		return false
	}
	return len(designRows(r)) > 0
}

// designRow is one design of a run: our medians and the published figures.
type designRow struct {
	design int
	ours   map[string]float64 // metric -> median
	// pub holds, per published machine (in published order), the
	// figures for this design by metric.
	pub map[string]map[string]float64
}

// designRows are r's designs in the order the run measured them.
func designRows(r *results.Result) []designRow {
	var rows []designRow
	index := map[string]int{}
	for _, s := range r.Samples {
		d, ok := s.Labels["design"]
		if !ok || len(s.Labels) != 1 {
			continue
		}
		if _, seen := index[d]; seen {
			continue
		}
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n >= len(DesignNames) {
			continue
		}
		index[d] = len(rows)
		rows = append(rows, designRow{design: n, ours: map[string]float64{}, pub: map[string]map[string]float64{}})
	}
	for _, s := range stats.Summaries(r) {
		if i, ok := index[s.Labels["design"]]; ok && len(s.Labels) == 1 {
			rows[i].ours[s.Metric] = s.Median
		}
	}
	for _, c := range r.Comparisons {
		if i, ok := index[c.Labels["design"]]; ok && len(c.Labels) == 1 {
			if rows[i].pub[c.Machine] == nil {
				rows[i].pub[c.Machine] = map[string]float64{}
			}
			rows[i].pub[c.Machine][c.Metric] = c.Published
		}
	}
	return rows
}

// designMachines are the machines with published figures in r, in the
// order the comparisons name them.
func designMachines(r *results.Result) []string {
	var out []string
	for _, c := range r.Comparisons {
		if _, ok := c.Labels["design"]; ok && !slices.Contains(out, c.Machine) {
			out = append(out, c.Machine)
		}
	}
	return out
}

// pubFigures is one machine's figures for a design: user, sys, their
// total, and the total beyond that machine's iterative server (its own
// cpu_beyond_s figure, else its total less design 0's); the has fields
// say which are known.
type pubFigures struct {
	user, sys, total, beyond         float64
	hasUser, hasSys, hasTotal, hasBy bool
}

func publishedFor(rows []designRow, row designRow, machine string) pubFigures {
	var p pubFigures
	f := row.pub[machine]
	p.user, p.hasUser = f["user_s"]
	p.sys, p.hasSys = f["sys_s"]
	if p.hasUser && p.hasSys {
		p.total, p.hasTotal = p.user+p.sys, true
	}
	if v, ok := f["cpu_beyond_s"]; ok {
		p.beyond, p.hasBy = v, true
		return p
	}
	for _, base := range rows {
		if base.design != 0 || !p.hasTotal {
			continue
		}
		if u, ok := base.pub[machine]["user_s"]; ok {
			if s, ok := base.pub[machine]["sys_s"]; ok {
				p.beyond, p.hasBy = p.total-(u+s), true
			}
		}
	}
	return p
}

// hasFigures says which columns a machine has for any row of the run:
// user/sys/total, and beyond.
func hasFigures(rows []designRow, machine string) (times, beyond bool) {
	for _, row := range rows {
		p := publishedFor(rows, row, machine)
		times = times || p.hasUser || p.hasSys
		beyond = beyond || p.hasBy
	}
	return times, beyond
}

func cell(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return results.FormatValue(v)
}

// pubValue renders a published figure (or a sum of them) as published,
// to the hundredth: 504.2, not 504.
func pubValue(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

func pubCell(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return pubValue(v)
}

// WriteDesignsTable writes r in the shape of the book's table of server
// designs: per design (number and name) our medians of user, sys and
// total server CPU, the total beyond the iterative server, wall time and
// connections per second, then each published machine's figures for the
// same design, with a legend naming the machines. Nothing is written for
// a run IsDesigns does not fit.
func WriteDesignsTable(w io.Writer, r *results.Result) error {
	if !IsDesigns(r) {
		return nil
	}
	rows := designRows(r)
	machines := designMachines(r)
	letter := func(i int) string { return string(rune('A' + i)) }
	n := r.Parameters["repeat"]
	if n == "" {
		n = "?"
	}
	fmt.Fprintf(w, "\nE5, the book's table (UNP vol. 1 ch. 30): server CPU seconds per design; ours: medians of %s repeat(s) on profile %s (%s, clock %s)\n",
		n, orUnknown(results.ProfileName(r.Machine)), orUnknown(r.Machine.Accelerator), orUnknown(r.Machine.Clock))
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	head := []string{"row", "server design", "user", "sys", "total", "beyond 0", "wall s", "conn/s"}
	cols := make([][2]bool, len(machines))
	for i, m := range machines {
		times, beyond := hasFigures(rows, m)
		cols[i] = [2]bool{times, beyond}
		if times {
			head = append(head, letter(i)+" user", letter(i)+" sys", letter(i)+" total")
		}
		if beyond {
			head = append(head, letter(i)+" beyond 0")
		}
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, row := range rows {
		o := row.ours
		get := func(m string) string { v, ok := o[m]; return cell(v, ok) }
		line := []string{strconv.Itoa(row.design), DesignNames[row.design], get("user_s"), get("sys_s"), get("cpu_s"), get("cpu_beyond_s"), get("wall_s"), get("conn_per_s")}
		for i, m := range machines {
			p := publishedFor(rows, row, m)
			if cols[i][0] {
				line = append(line, pubCell(p.user, p.hasUser), pubCell(p.sys, p.hasSys), pubCell(p.total, p.hasTotal))
			}
			if cols[i][1] {
				line = append(line, pubCell(p.beyond, p.hasBy))
			}
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, m := range machines {
		fmt.Fprintf(w, "%s: %s\n", letter(i), m)
	}
	fmt.Fprintln(w, "beyond 0: total less the iterative server's (ours: the median of each repeat's difference, with design 0 in the run); published totals are user + sys;")
	_, err := fmt.Fprintln(w, "ours are the emulated machine's seconds for this run's connections: set the designs against each other, not our seconds against theirs")
	return err
}

// WriteDesignsPlot draws r as the book's table drawn as bars: one per
// design, the first run on top, our median user time with the median
// system time stacked on it, and at each bar's end the total, the total
// beyond the iterative server, and the published figures for the design.
func WriteDesignsPlot(w io.Writer, r *results.Result) error {
	if !IsDesigns(r) {
		return fmt.Errorf("%w: run %s is not a netbench designs run with samples by design", ErrNothingToPlot, r.ID)
	}
	rows := designRows(r)
	machines := designMachines(r)
	bars := barData(r, "design")
	texts := make([]string, len(bars))
	for i, b := range bars {
		var row designRow
		for _, x := range rows {
			if strconv.Itoa(x.design) == b.name {
				row = x
			}
		}
		b.name = b.name + " " + DesignNames[row.design]
		bars[i] = b
		t := fmt.Sprintf("  %s s", fmtSeconds(b.user+b.sys))
		if v, ok := row.ours["cpu_beyond_s"]; ok {
			t += fmt.Sprintf(" (%+.3g)", v)
		}
		for j, m := range machines {
			p := publishedFor(rows, row, m)
			switch {
			case p.hasTotal && p.hasBy:
				t += fmt.Sprintf(" | %c %s (%+g)", 'A'+j, pubValue(p.total), math.Round(p.beyond*100)/100)
			case p.hasTotal:
				t += fmt.Sprintf(" | %c %s", 'A'+j, pubValue(p.total))
			case p.hasBy:
				t += fmt.Sprintf(" | %c (%+g)", 'A'+j, math.Round(p.beyond*100)/100)
			}
		}
		texts[i] = t
	}
	reading := "at each bar: our total (user + sys) and, in brackets, beyond the iterative server's, then each machine's published figures"
	for j, m := range machines {
		reading += fmt.Sprintf(", %c: %s", 'A'+j, m)
	}
	return writeStackedBars(w, r, stackedBars{
		title:   fmt.Sprintf("%s/%s: server CPU time per design (UNP ch. 30)", r.Plugin, r.Experiment),
		xLabel:  "median server CPU time, its children and threads included (s): user, then sys stacked on it",
		bars:    bars,
		texts:   texts,
		reading: reading,
		room:    3.2, // the published figures follow the total
		params: fmt.Sprintf("%sx%sx%s, %s B, prefork %s, %s", r.Parameters["nclients"], r.Parameters["children"],
			r.Parameters["loops"], r.Parameters["bytes"], r.Parameters["prefork"], r.Parameters["clients"]),
	})
}

// DesignsPlotBeside writes r's design chart beside its result document
// at path (NAME.svg for NAME.json), as BarPlotBeside does, and returns
// the line for `lab run` to print; "" when r is not a designs run.
func DesignsPlotBeside(path string, r *results.Result) string {
	if path == "" || !IsDesigns(r) {
		return ""
	}
	return plotBeside(path, func(w io.Writer) error { return WriteDesignsPlot(w, r) })
}
