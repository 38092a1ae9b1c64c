package claims

import (
	"fmt"
	"reflect"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/stats"
)

// A kind is how the judge decides one kind of rule (a contract.Rule):
// one file a kind (kind_ratio.go, kind_range.go ...), each registering
// itself with register. The rest of the package asks a claim's kind what
// it needs and never which kind it is; docs/plugins.md, "Adding a claim
// kind", walks through adding one.
type kind interface {
	// text is the rule in words (RuleText), without the test's.
	text() string
	// evidence is what the kind decides from.
	evidence() evidence
	// pointKey is the sweep label the kind is decided over; "": the
	// scope's sweep key.
	pointKey() string
	// required are the points the kind cannot decide without, besides
	// the scope's Sweep.Required.
	required() []string
	// across names the two profiles of a kind decided between two
	// profiles' runs, the baseline and the other; ok is false for a kind
	// decided within a profile's runs.
	across() (base, other string, ok bool)
	// minRepeats is the fewest repeats a run needs for the kind to
	// decide, s's points known (MinRepeats).
	minRepeats(s *spec) int
	// decide applies the rule to one stratum's evidence (for a kind
	// across profiles, st.base and st.other).
	decide(s *spec, st *stratum) Decision
}

// evidence is what a kind decides from.
type evidence int

const (
	// fromSamples: the samples of the metrics its rule reads.
	fromSamples evidence = iota
	// fromEndings: how runs (or their repeats) ended; any run in scope
	// is evidence.
	fromEndings
	// fromNothing: no run decides it (an untestable claim).
	fromNothing
)

// judges are the registered kinds, by their contract rule's type.
var judges = map[reflect.Type]func(contract.Rule) kind{}

// register makes judge the kind of every rule of type R; each kind's
// file calls it from init.
func register[R contract.Rule](judge func(R) kind) {
	judges[reflect.TypeFor[R]()] = func(r contract.Rule) kind { return judge(r.(R)) }
}

// kindOf is c's kind; a claim with no rule, or one of a kind this lab
// does not judge, gets unknownKind, which decides nothing.
func kindOf(c *results.Claim) kind {
	if r := c.Rule(); r != nil {
		if j, ok := judges[reflect.TypeOf(r)]; ok {
			return j(r)
		}
	}
	return unknownKind{id: c.ID, kind: c.Kind}
}

// within are the defaults of a kind decided from samples of one
// profile's runs, over the scope's sweep key.
type within struct{}

func (within) evidence() evidence                    { return fromSamples }
func (within) pointKey() string                      { return "" }
func (within) required() []string                    { return nil }
func (within) across() (base, other string, ok bool) { return "", "", false }

// unknownKind is a claim whose rule this lab does not know.
type unknownKind struct {
	within
	id, kind string
}

func (unknownKind) text() string           { return "no rule" }
func (unknownKind) minRepeats(_ *spec) int { return DecideRepeats }
func (k unknownKind) decide(_ *spec, _ *stratum) Decision {
	return Decision{Verdict: results.Inconclusive, Reason: fmt.Sprintf("claim %s has no rule this lab knows (kind %q); upgrade lab", k.id, k.kind)}
}

// npoints is the number of points a run deciding the claim has, at least 1.
func (s *spec) npoints() int { return max(len(s.hintPoints(nil)), 1) }

// nbounds is 2 for a rule with an upper bound besides its lower one, else 1.
func nbounds(max *float64) int {
	if max != nil {
		return 2
	}
	return 1
}

// signedN is the fewest repeats for k signed-rank tests under Holm.
func signedN(k int) int { return stats.MinSignedRankN(stats.Alpha, k) }
