package claims

import (
	"reflect"
	"testing"

	"lab/plugins/contract"
	"lab/results"
)

// TestEveryKindJudged: each kind the contract has is registered here, so
// no claim of a kind the SDK accepts is judged by unknownKind.
func TestEveryKindJudged(t *testing.T) {
	for _, name := range contract.KindNames() {
		r := contract.NewRule(name)
		if _, ok := judges[reflect.TypeOf(r)]; !ok {
			t.Errorf("kind %s (%T) has no judge: add kind_%s.go registering one", name, r, name)
		}
		var c results.Claim
		c.ID = "X.1"
		c.SetRule(r)
		if _, unknown := kindOf(&c).(unknownKind); unknown {
			t.Errorf("kindOf(%s claim) is unknownKind", name)
		}
	}
}

// TestUnknownKindDecidesNothing: a claim with no rule, or two, is
// inconclusive and says to upgrade lab, whatever its runs.
func TestUnknownKindDecidesNothing(t *testing.T) {
	c := &results.Claim{Kind: "fancy"}
	c.ID = "X.2"
	k := kindOf(c)
	if _, ok := k.(unknownKind); !ok {
		t.Fatalf("kindOf(no rule) = %T", k)
	}
	d := k.decide(newSpec(c, nil), &stratum{})
	if d.Verdict != results.Inconclusive || RuleText(c) != "no rule" || MinRepeats(c) != DecideRepeats {
		t.Errorf("unknown kind: %+v, rule %q, repeats %d", d, RuleText(c), MinRepeats(c))
	}
	c.Ratio, c.Trend = &contract.RatioClaim{Min: 2}, &contract.TrendClaim{Margin: 0.1}
	if _, ok := kindOf(c).(unknownKind); !ok {
		t.Errorf("a claim with two rules is judged as %T", kindOf(c))
	}
}
