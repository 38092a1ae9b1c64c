package results

import (
	"lab/plugins/contract"
)

// Claim is one statement of a write-up, declared by the plugin experiment
// that decides it (lab/plugins/contract's Claim, with its rule), and
// whose it is: the host fills in Plugin, Bench and Kind.
type Claim struct {
	contract.Claim
	Plugin string `json:"plugin"`
	// Bench is the plugin experiment whose runs decide it.
	Bench string `json:"bench"`
	// Kind names the rule that is set (contract.KindRatio...).
	Kind string `json:"kind"`
}

// Verdicts.
const (
	Reproduced    = "reproduced"
	NotReproduced = "not reproduced"
	// Inconclusive: too few samples, or too much noise, to decide.
	Inconclusive = "inconclusive"
	// NotComparable: an absolute time measured under a clock that does
	// not make absolute times comparable.
	NotComparable = "not comparable"
	// NotRun: no run decided the claim.
	NotRun = "not run"
)

// Verdict is what a claim's rule said about one run (or, for a speedup,
// a pair of runs), with the numbers that decided it.
type Verdict struct {
	Claim     string `json:"claim"`
	Kind      string `json:"kind"`
	Statement string `json:"statement"`
	Verdict   string `json:"verdict"`
	// Reason says why, in one line carrying the deciding numbers.
	Reason string `json:"reason"`
	// Rule is the rule applied, in words.
	Rule    string   `json:"rule"`
	Numbers []Number `json:"numbers,omitempty"`
	// Runs are the runs whose samples decided it: this run, and for a
	// speedup the other run.
	Runs []string `json:"runs,omitempty"`
	// Note qualifies the verdict: the clock under which an absolute time
	// was decided, a profile other than the claim's.
	Note string `json:"note,omitempty"`
}

// Number is one number that decided a verdict.
type Number struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

// Decided says whether v is a verdict a run gave (anything but not run).
func (v Verdict) Decided() bool { return v.Verdict != "" && v.Verdict != NotRun }

// Values returns the samples of one series of r: metric with exactly
// these labels.
func (r *Result) Values(metric string, labels map[string]string) []float64 {
	var out []float64
	key := LabelKey(labels)
	for _, s := range r.Samples {
		if s.Metric == metric && LabelKey(s.Labels) == key {
			out = append(out, s.Value)
		}
	}
	return out
}

// WithKind returns c with Kind filled in from the rule that is set, for
// claims built in Go.
func (c Claim) WithKind() Claim {
	c.Kind = c.Claim.Kind()
	return c
}
