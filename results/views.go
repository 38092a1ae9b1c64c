package results

import "lab/plugins/contract"

// Views is what an experiment's plugin asks lab to show of its runs
// beyond the generic summary, as its description declares it: the CLI
// hands them to lab/results/render with a run. A run
// whose plugin is not installed has none and gets only the generic views.
// The JSON names are those of description.json.
type Views struct {
	Tables   []Table   `json:"tables,omitempty"`
	Charts   []Chart   `json:"charts,omitempty"`
	WriteUps []WriteUp `json:"writeups,omitempty"`
}

// The parts of Views, as the contract defines them (lab/plugins/contract).
type (
	Table    = contract.Table
	Column   = contract.Column
	Baseline = contract.Baseline
	Chart    = contract.Chart
	WriteUp  = contract.WriteUp
)
