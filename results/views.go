package results

import "lab/plugins/contract"

// Views is what an experiment's plugin asks lab to show of its runs
// beyond the generic summary, as its description declares it (the
// contract's tables, charts and write-ups): the CLI hands them to
// lab/results/render with a run. A run whose plugin is not installed has
// none and gets only the generic views. The JSON names are those of
// description.json.
type Views struct {
	Tables   []contract.Table   `json:"tables,omitempty"`
	Charts   []contract.Chart   `json:"charts,omitempty"`
	WriteUps []contract.WriteUp `json:"writeups,omitempty"`
}
