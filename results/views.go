package results

// Views is what an experiment's plugin asks lab to show of its runs
// beyond the generic summary, as its description declares it (see
// lab/plugins' Table, Chart and WriteUp, whose documentation these
// mirror): the CLI hands them to lab/results/render with a run. A run
// whose plugin is not installed has none and gets only the generic views.
// The JSON names are those of description.json.
type Views struct {
	Tables   []Table   `json:"tables,omitempty"`
	Charts   []Chart   `json:"charts,omitempty"`
	WriteUps []WriteUp `json:"writeups,omitempty"`
}

// Table is a run drawn as a table, one row per value of Label.
type Table struct {
	Label string `json:"label"`
	Title string `json:"title"`
	// Name heads the column of row names.
	Name string `json:"name"`
	// Rows names the rows by the label's value.
	Rows    map[string]string `json:"rows"`
	Columns []Column          `json:"columns"`
	// Notes are written under the table.
	Notes []string `json:"notes,omitempty"`
	// Chart, if set, draws the table as bars.
	Chart *Chart `json:"chart,omitempty"`
}

// Column is one column of a Table: a metric's median and published
// figures; a machine without a figure of Metric gets the sum of its
// figures of Sum, else Baseline's difference.
type Column struct {
	Metric   string    `json:"metric"`
	Header   string    `json:"header"`
	Sum      []string  `json:"sum,omitempty"`
	Baseline *Baseline `json:"baseline,omitempty"`
}

// Baseline is the value of column Metric in a row less its value in row
// Row.
type Baseline struct {
	Metric string `json:"metric"`
	Row    string `json:"row"`
}

// Chart is a run drawn as bars by Label, the medians of Stack stacked.
type Chart struct {
	Label string   `json:"label,omitempty"`
	Stack []string `json:"stack"`
	// Total is a metric written first at each bar's end.
	Total string `json:"total,omitempty"`
	// Figures, for a table's chart, are its columns written at each
	// bar's end.
	Figures []string `json:"figures,omitempty"`
	// Title follows "plugin/experiment: "; Axis labels the value axis;
	// Reading is for the caption.
	Title   string `json:"title"`
	Axis    string `json:"axis"`
	Reading string `json:"reading,omitempty"`
	// Params is the title's parameters, {name} replaced; "" for all
	// but repeat.
	Params string `json:"params,omitempty"`
	// Room is the axis length as a multiple of the longest bar; 0 means
	// 1.6.
	Room float64 `json:"room,omitempty"`
}

// WriteUp is a write-up the claims and references come from: its id, its
// title, and its published figures no metric of the experiment measures.
type WriteUp struct {
	ID         string      `json:"id"`
	Title      string      `json:"title"`
	References []Reference `json:"references,omitempty"`
}

// Owns says whether claim id belongs to the write-up: the same id, or
// the write-up's id and a dot before the rest.
func (w *WriteUp) Owns(id string) bool {
	return id == w.ID || len(id) > len(w.ID) && id[:len(w.ID)] == w.ID && id[len(w.ID)] == '.'
}
