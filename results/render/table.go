package render

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/stats"
)

// A table a plugin declares (contract.Table): one row per value of a
// label, our medians beside each published machine's figures.

// tableRow is one row of a run: our medians and the published figures.
type tableRow struct {
	value string
	ours  map[string]float64 // metric -> median
	// pub holds, per published machine, the figures for this row by
	// metric.
	pub map[string]map[string]float64
}

// tableView is a table declaration with a run's rows and machines.
type tableView struct {
	t        *contract.Table
	rows     []tableRow
	machines []string
}

// TableFor is the first of views' tables that fits r, nil if none: a run
// that is not a sweep, with samples by the table's label alone whose
// values are rows of the table.
func TableFor(r *results.Result, views results.Views) *contract.Table {
	for i := range views.Tables {
		if tableOf(r, &views.Tables[i]) != nil {
			return &views.Tables[i]
		}
	}
	return nil
}

// tableOf is r's rows and machines for t, nil when t does not fit r.
func tableOf(r *results.Result, t *contract.Table) *tableView {
	if r == nil || t == nil || r.Sweep != nil {
		return nil
	}
	tv := &tableView{t: t}
	index := map[string]int{}
	only := func(labels map[string]string) (string, bool) {
		v, ok := labels[t.Label]
		return v, ok && len(labels) == 1
	}
	for _, s := range r.Samples {
		v, ok := only(s.Labels)
		if _, seen := index[v]; !ok || seen {
			continue
		}
		if _, named := t.Rows[v]; !named {
			continue
		}
		index[v] = len(tv.rows)
		tv.rows = append(tv.rows, tableRow{value: v, ours: map[string]float64{}, pub: map[string]map[string]float64{}})
	}
	if len(tv.rows) == 0 {
		return nil
	}
	for _, s := range stats.Summaries(r) {
		if v, ok := only(s.Labels); ok {
			if i, ok := index[v]; ok {
				tv.rows[i].ours[s.Metric] = s.Median
			}
		}
	}
	for _, c := range r.Comparisons {
		if _, ok := c.Labels[t.Label]; ok && !slices.Contains(tv.machines, c.Machine) {
			tv.machines = append(tv.machines, c.Machine)
		}
		if v, ok := only(c.Labels); ok {
			if i, ok := index[v]; ok {
				if tv.rows[i].pub[c.Machine] == nil {
					tv.rows[i].pub[c.Machine] = map[string]float64{}
				}
				tv.rows[i].pub[c.Machine][c.Metric] = c.Published
			}
		}
	}
	return tv
}

// published is machine's figure of column metric in row: its own, else
// the sum of its figures of the column's Sum, else the column's Baseline
// difference. depth bounds a chain of baselines.
func (tv *tableView) published(row tableRow, machine, metric string, depth int) (float64, bool) {
	if v, ok := row.pub[machine][metric]; ok {
		return v, true
	}
	i := slices.IndexFunc(tv.t.Columns, func(c contract.Column) bool { return c.Metric == metric })
	if i < 0 || depth > len(tv.t.Columns) {
		return 0, false
	}
	c := tv.t.Columns[i]
	if len(c.Sum) > 0 {
		sum := 0.0
		ok := true
		for _, m := range c.Sum {
			v, has := row.pub[machine][m]
			sum, ok = sum+v, ok && has
		}
		if ok {
			return sum, true
		}
	}
	if b := c.Baseline; b != nil {
		for _, base := range tv.rows {
			if base.value != b.Row {
				continue
			}
			v, ok := tv.published(row, machine, b.Metric, depth+1)
			w, okBase := tv.published(base, machine, b.Metric, depth+1)
			if ok && okBase {
				return v - w, true
			}
		}
	}
	return 0, false
}

// shown says which columns a machine has a figure of in any row.
func (tv *tableView) shown(machine string) []bool {
	out := make([]bool, len(tv.t.Columns))
	for i, c := range tv.t.Columns {
		for _, row := range tv.rows {
			if _, ok := tv.published(row, machine, c.Metric, 0); ok {
				out[i] = true
			}
		}
	}
	return out
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

// letter names the i-th published machine: A, B, ...
func letter(i int) string { return string(rune('A' + i)) }

// WriteTables writes r as each of views' tables that fits it: per row
// (the label's value and its name) our medians of the columns, then each
// published machine's figures of the columns it has, with a legend naming
// the machines and the table's notes. Nothing is written for a run no
// table fits.
func WriteTables(w io.Writer, r *results.Result, views results.Views) error {
	for i := range views.Tables {
		if tv := tableOf(r, &views.Tables[i]); tv != nil {
			if err := tv.write(w, r); err != nil {
				return err
			}
		}
	}
	return nil
}

func (tv *tableView) write(w io.Writer, r *results.Result) error {
	t := tv.t
	n := r.Parameters["repeat"]
	if n == "" {
		n = "?"
	}
	fmt.Fprintf(w, "\n%s; ours: medians of %s repeat(s) on profile %s (%s, clock %s)\n",
		t.Title, n, results.OrUnknown(results.ProfileName(r.Machine)), results.OrUnknown(r.Machine.Accelerator), results.OrUnknown(r.Machine.Clock))
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	head := []string{"row", t.Name}
	for _, c := range t.Columns {
		head = append(head, c.Header)
	}
	shown := make([][]bool, len(tv.machines))
	for i, m := range tv.machines {
		shown[i] = tv.shown(m)
		for j, c := range t.Columns {
			if shown[i][j] {
				head = append(head, letter(i)+" "+c.Header)
			}
		}
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, row := range tv.rows {
		line := []string{row.value, t.Rows[row.value]}
		for _, c := range t.Columns {
			v, ok := row.ours[c.Metric]
			line = append(line, cell(v, ok))
		}
		for i, m := range tv.machines {
			for j, c := range t.Columns {
				if shown[i][j] {
					line = append(line, pubCell(tv.published(row, m, c.Metric, 0)))
				}
			}
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, m := range tv.machines {
		fmt.Fprintf(w, "%s: %s\n", letter(i), m)
	}
	for _, note := range t.Notes {
		if _, err := fmt.Fprintln(w, note); err != nil {
			return err
		}
	}
	return nil
}

// WriteTableChart draws r as t's chart (t.Chart): one bar per row, the
// first measured on top, our medians of the chart's Stack stacked, and
// at each bar's end the figures of the chart's Figures columns, ours then
// each machine's published ones.
func WriteTableChart(w io.Writer, r *results.Result, t *contract.Table) error {
	tv := tableOf(r, t)
	if tv == nil || t.Chart == nil {
		return fmt.Errorf("%w: run %s has no table with a chart (samples by one label that the plugin declares one for)", ErrNothingToPlot, r.ID)
	}
	c := t.Chart
	var bars []bar
	var texts []string
	for _, b := range barData(r, t.Label, c) {
		i := slices.IndexFunc(tv.rows, func(row tableRow) bool { return row.value == b.name })
		if i < 0 {
			continue
		}
		row := tv.rows[i]
		b.name += " " + t.Rows[row.value]
		text := fmt.Sprintf("  %s s", fmtSeconds(b.sum()))
		for _, f := range c.Figures[min(1, len(c.Figures)):] {
			if v, ok := row.ours[f]; ok {
				text += fmt.Sprintf(" (%+.3g)", v)
			}
		}
		for j, m := range tv.machines {
			var parts string
			for k, f := range c.Figures {
				v, ok := tv.published(row, m, f, 0)
				switch {
				case !ok:
				case k == 0:
					parts += " " + pubValue(v)
				default:
					parts += fmt.Sprintf(" (%+g)", math.Round(v*100)/100)
				}
			}
			if parts != "" {
				text += " | " + letter(j) + parts
			}
		}
		bars, texts = append(bars, b), append(texts, text)
	}
	reading := c.Reading
	for j, m := range tv.machines {
		reading += fmt.Sprintf(", %s: %s", letter(j), m)
	}
	return writeStackedBars(w, r, c, bars, texts, reading)
}

// TableChartBeside writes the chart of the table of views that fits r
// beside its result document at path (NAME.svg for NAME.json), as
// ChartBeside does, and returns the line for `lab run` to print; "" when
// no table with a chart fits r.
func TableChartBeside(path string, r *results.Result, views results.Views) string {
	t := TableFor(r, views)
	if path == "" || t == nil || t.Chart == nil {
		return ""
	}
	return plotBeside(path, func(w io.Writer) error { return WriteTableChart(w, r, t) })
}
