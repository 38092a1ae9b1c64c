package contract

import "strings"

// Table asks for a run drawn as a table with one row per value of Label
// (lab.plugin.v1.Table): after `lab run`'s summary, for a run that is not
// a sweep whose samples by Label carry that label alone. Rows are in the
// order the run measured them, each "value  name" then the columns: our
// medians, then, per machine with published figures for the rows (lettered
// A, B, ... in a legend), that machine's figures of the columns it has.
type Table struct {
	Label string `json:"label"`
	// Title heads the table; lab adds what ours are (repeats, profile,
	// accelerator, clock).
	Title string `json:"title"`
	// Name heads the column of row names.
	Name string `json:"name"`
	// Rows names the rows by the label's value; samples whose value is
	// not here are not in the table.
	Rows    map[string]string `json:"rows"`
	Columns []Column          `json:"columns"`
	// Notes are lines written under the table.
	Notes []string `json:"notes,omitempty"`
	// Chart, if set, draws the table as bars beside the result (its
	// Label is the table's): each bar a row, named "value name".
	Chart *Chart `json:"chart,omitempty"`
}

// Column is one column of a Table: a metric's median (ours) and its
// published figure (each machine's). Where a machine publishes no figure
// of Metric, Sum and then Baseline derive one from its other figures.
type Column struct {
	Metric string `json:"metric"`
	Header string `json:"header"`
	// Sum: the published figures of these metrics added up.
	Sum []string `json:"sum,omitempty"`
	// Baseline: the published value of column Baseline.Metric in this
	// row less its value in the row Baseline.Row.
	Baseline *Baseline `json:"baseline,omitempty"`
}

// Baseline derives a column's published figure from another column's, as
// a difference to one row (lab.plugin.v1.Baseline).
type Baseline struct {
	Metric string `json:"metric"`
	Row    string `json:"row"`
}

// Chart asks for a run drawn as horizontal bars, one per value of Label,
// the first measured on top, the medians of Stack stacked in each bar
// (lab.plugin.v1.Chart). A run is drawn by the first of an experiment's
// charts that fits it: not a sweep, every sample of Stack's metrics
// carrying Label alone. The chart is written beside the result
// (NAME.svg) and inlined in the report.
type Chart struct {
	// Label is ignored for a table's chart (the table's label).
	Label string   `json:"label,omitempty"`
	Stack []string `json:"stack"`
	// Total, if set, is a metric written first at each bar's end, then
	// the stacked medians (e.g. real_s: elapsed beside CPU time).
	Total string `json:"total,omitempty"`
	// Figures, for a table's chart, are columns of the table written at
	// each bar's end: the first is the bar's total (ours: the stacked
	// medians' sum), the others follow signed, in brackets; then each
	// machine's published figures of the same columns.
	Figures []string `json:"figures,omitempty"`
	// Title follows "plugin/experiment: " in the chart's title.
	Title string `json:"title"`
	// Axis labels the value axis.
	Axis string `json:"axis"`
	// Reading says how to read the chart, for its caption.
	Reading string `json:"reading,omitempty"`
	// Params is what the title says of the run's parameters, each
	// {name} replaced by the parameter's value; "" means every parameter
	// but repeat, as name=value.
	Params string `json:"params,omitempty"`
	// Room is the axis length as a multiple of the longest bar, room for
	// the text at its end; 0 means 1.6.
	Room float64 `json:"room,omitempty"`
}

// WriteUp is a write-up (lab.plugin.v1.WriteUp): a paper, an article, a
// book, whose statements the claims are and whose figures the references
// are. A claim belongs to the write-up whose ID is its own or its prefix
// before a dot (E1 for E1.6); a reference to the one its Experiment names.
type WriteUp struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// References are the write-up's published figures that no metric of
	// the experiment measures, shown with the write-up in the report.
	References []Reference `json:"references,omitempty"`
}

// Owns says whether claim id belongs to the write-up: the same id, or the
// write-up's id and a dot before the rest.
func (w *WriteUp) Owns(id string) bool {
	return id == w.ID || strings.HasPrefix(id, w.ID+".")
}
