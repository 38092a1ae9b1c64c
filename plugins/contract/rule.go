package contract

import (
	"reflect"
	"sort"
)

// Rule is one kind of claim rule: the one field of Claim that is set
// (*RatioClaim, *RangeClaim ...). A kind names itself, says the metrics
// it reads and checks itself against what its experiment declares; the
// host judges it (results/claims, a file a kind). Claim's rule fields are
// the contract's only list of kinds: adding a kind here is a type with
// these methods and a field of Claim (docs/plugins.md, "Adding a claim
// kind").
type Rule interface {
	// Kind is the kind's name (KindRatio...), also its field's JSON name
	// and the wire schema's field of Claim's kind.
	Kind() string
	// Metrics are the metrics the rule reads ("" entries are ignored).
	Metrics() []string
	// Validate checks the rule's own fields and the names it takes from
	// its experiment.
	Validate(d Declared) error
}

// Declared is what an experiment declares that a rule may name; each
// method's error says what the experiment has instead.
type Declared interface {
	// Metric checks that each name is one of the experiment's metrics.
	Metric(names ...string) error
	// Unit checks that unit is metric's unit.
	Unit(metric, unit string) error
	// Param checks that name is one of the experiment's parameters.
	Param(name string) error
	// ParamList lists the experiment's parameters, for errors.
	ParamList() string
}

var ruleType = reflect.TypeFor[Rule]()

// ruleFields are the indexes of Claim's rule fields.
var ruleFields = func() []int {
	t := reflect.TypeFor[Claim]()
	var out []int
	for i := range t.NumField() {
		if t.Field(i).Type.Implements(ruleType) {
			out = append(out, i)
		}
	}
	return out
}()

// Rules are the rules set, in the order of Claim's fields; a valid
// claim has exactly one.
func (c *Claim) Rules() []Rule {
	v := reflect.ValueOf(c).Elem()
	var out []Rule
	for _, i := range ruleFields {
		if f := v.Field(i); !f.IsNil() {
			out = append(out, f.Interface().(Rule))
		}
	}
	return out
}

// Rule is the claim's rule, nil unless exactly one is set.
func (c *Claim) Rule() Rule {
	if rs := c.Rules(); len(rs) == 1 {
		return rs[0]
	}
	return nil
}

// SetRule makes r the claim's rule, clearing any other.
func (c *Claim) SetRule(r Rule) {
	v := reflect.ValueOf(c).Elem()
	for _, i := range ruleFields {
		f := v.Field(i)
		f.SetZero()
		if r != nil && f.Type() == reflect.TypeOf(r) {
			f.Set(reflect.ValueOf(r))
		}
	}
}

// NewRule is an empty rule of the kind named, nil for a kind the
// contract does not have.
func NewRule(kind string) Rule {
	t := reflect.TypeFor[Claim]()
	for _, i := range ruleFields {
		r := reflect.New(t.Field(i).Type.Elem()).Interface().(Rule)
		if r.Kind() == kind {
			return r
		}
	}
	return nil
}

// KindNames are the contract's kinds, sorted.
func KindNames() []string {
	t := reflect.TypeFor[Claim]()
	var out []string
	for _, i := range ruleFields {
		out = append(out, reflect.New(t.Field(i).Type.Elem()).Interface().(Rule).Kind())
	}
	sort.Strings(out)
	return out
}
