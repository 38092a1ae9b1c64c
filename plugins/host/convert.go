package host

import (
	"lab/plugins"
	"lab/results"
)

// What the host adds to the contract's types (lab/plugins/contract, which
// the SDK and lab/results share) when a plugin's answer or declarations
// become part of a result: the defaults a plugin may leave out, and whose
// claims and figures they are.

// Outcome is how a plugin says its run ended; an empty status (a plugin
// that left it unset) is ok.
func Outcome(o plugins.Outcome) results.Outcome {
	if o.Status == "" {
		o.Status = plugins.StatusOK
	}
	return o
}

// References are an experiment's published figures; Bench is the
// experiment they belong to.
func References(e *plugins.Experiment) []results.Reference {
	var out []results.Reference
	for _, r := range e.References {
		out = append(out, results.Reference{Reference: r, Bench: e.Name})
	}
	return out
}

// Views is what an experiment asks lab to show of its runs: its tables,
// charts and write-ups. A nil experiment (a plugin not installed) has
// none.
func Views(e *plugins.Experiment) results.Views {
	if e == nil {
		return results.Views{}
	}
	return results.Views{Tables: e.Tables, Charts: e.Charts, WriteUps: e.WriteUps}
}

// Claims are the claims experiment e of plugin declares; Plugin and Bench
// say whose runs decide them.
func Claims(plugin string, e *plugins.Experiment) []results.Claim {
	var out []results.Claim
	for _, c := range e.Claims {
		out = append(out, results.Claim{Claim: c, Plugin: plugin, Bench: e.Name, Kind: c.Kind()})
	}
	return out
}

// AllClaims are every claim of every experiment of d.
func AllClaims(d *plugins.Description) []results.Claim {
	var out []results.Claim
	for i := range d.Experiments {
		out = append(out, Claims(d.Name, &d.Experiments[i])...)
	}
	return out
}
