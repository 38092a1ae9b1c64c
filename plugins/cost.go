package plugins

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Cost is an experiment's cost model (lab.plugin.v1.Cost): the wall time,
// in seconds, of one repeat at one point, on lab's 2-core development host
// under TCG, as Seconds (the fixed part) plus each term's Seconds times
// the product of its parameters' values at the point. In a term an int or
// float parameter counts its number, a duration its seconds, a bool 1 or
// 0, and a string its weight from Weights, else the number of its items
// separated by commas or + ("0,1,2" is 3). The first of Cases whose clock
// and profiles match a run replaces Seconds and Terms; Weights hold in
// every case. Fitted says which runs the coefficients were fitted to.
type Cost struct {
	Seconds float64      `json:"seconds,omitempty"`
	Terms   []CostTerm   `json:"terms,omitempty"`
	Weights []CostWeight `json:"weights,omitempty"`
	Cases   []CostCase   `json:"cases,omitempty"`
	Fitted  string       `json:"fitted,omitempty"`
}

// CostTerm is Seconds per unit of the product of the Per parameters'
// values: per line (["lines"]), per connection and request (["connections",
// "requests"]).
type CostTerm struct {
	Per     []string `json:"per"`
	Seconds float64  `json:"seconds"`
}

// CostWeight is what each value of a string or bool parameter counts for
// in the terms that name it: mode both 2, process 1, thread 1.
type CostWeight struct {
	Param  string             `json:"param"`
	Values map[string]float64 `json:"values"`
}

// CostCase is the cost of runs under Clock ("host"; "icount", any shift;
// "icount:SHIFT"; empty: any) on Profiles (empty: any).
type CostCase struct {
	Clock    string     `json:"clock,omitempty"`
	Profiles []string   `json:"profiles,omitempty"`
	Seconds  float64    `json:"seconds,omitempty"`
	Terms    []CostTerm `json:"terms,omitempty"`
}

// Matches says whether the case applies to a run under clock on profile.
// A run whose clock is not known ("") matches only a case for any clock,
// and one whose profile is not known only a case for any profile.
func (c *CostCase) Matches(clock, profile string) bool {
	switch {
	case c.Clock == "":
	case c.Clock == "icount":
		if clock != "icount" && !strings.HasPrefix(clock, "icount:") {
			return false
		}
	case c.Clock != clock:
		return false
	}
	return len(c.Profiles) == 0 || slices.Contains(c.Profiles, profile)
}

// For is the fixed part and the terms of the cost of a run under clock on
// profile: the first matching case's, else the model's own.
func (c *Cost) For(clock, profile string) (float64, []CostTerm) {
	for i := range c.Cases {
		if c.Cases[i].Matches(clock, profile) {
			return c.Cases[i].Seconds, c.Cases[i].Terms
		}
	}
	return c.Seconds, c.Terms
}

// CostFactor is the product of the per parameters' values in params (a
// point's resolved parameters; a parameter missing takes its default), as
// the cost model counts them (see Cost).
func (e *Experiment) CostFactor(per []string, params map[string]string) (float64, error) {
	f := 1.0
	for _, name := range per {
		v, err := e.costValue(name, params)
		if err != nil {
			return 0, err
		}
		f *= v
	}
	return f, nil
}

// costValue is one parameter's value in a term.
func (e *Experiment) costValue(name string, params map[string]string) (float64, error) {
	p := e.Param(name)
	if p == nil {
		return 0, fmt.Errorf("experiment %s: cost names parameter %q, which it does not have", e.Name, name)
	}
	v, ok := params[name]
	if !ok {
		v = p.Default
	}
	if e.Cost != nil {
		for _, w := range e.Cost.Weights {
			if w.Param == name {
				if x, ok := w.Values[v]; ok {
					return x, nil
				}
			}
		}
	}
	switch p.Type {
	case TypeInt, TypeFloat:
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, fmt.Errorf("experiment %s: cost: parameter %s: %q is not a number", e.Name, name, v)
		}
		return x, nil
	case TypeDuration:
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("experiment %s: cost: parameter %s: %q is not a duration", e.Name, name, v)
		}
		return d.Seconds(), nil
	case TypeBool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return 0, fmt.Errorf("experiment %s: cost: parameter %s: %q is not a bool", e.Name, name, v)
		}
		if b {
			return 1, nil
		}
		return 0, nil
	}
	n := 0
	for _, item := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '+' }) {
		if strings.TrimSpace(item) != "" {
			n++
		}
	}
	return float64(n), nil
}

// RepeatCost is the expected wall time, in seconds, of one repeat of the
// experiment at a point with params (missing ones take their defaults)
// under clock on profile: its cost model's, else RepeatSeconds. ok is
// false when the experiment declares neither.
func (e *Experiment) RepeatCost(params map[string]string, clock, profile string) (seconds float64, ok bool, err error) {
	if e.Cost == nil {
		return e.RepeatSeconds, e.RepeatSeconds > 0, nil
	}
	fixed, terms := e.Cost.For(clock, profile)
	seconds = fixed
	for _, t := range terms {
		f, err := e.CostFactor(t.Per, params)
		if err != nil {
			return 0, false, err
		}
		seconds += t.Seconds * f
	}
	return seconds, true, nil
}

// validate checks the cost model against its experiment e: coefficients
// finite and not negative, terms naming e's parameters, weights for
// string or bool parameters' valid values (every choice of a parameter
// with choices that a term names), cases under a known clock.
func (c *Cost) validate(e *Experiment, where string) error {
	if c == nil {
		return nil
	}
	bad := func(x float64) bool { return !(x >= 0) || math.IsInf(x, 1) }
	weighted := map[string]*CostWeight{}
	for i := range c.Weights {
		w := &c.Weights[i]
		p := e.Param(w.Param)
		if p == nil {
			return fmt.Errorf("experiment %s: cost weights name parameter %q, which it does not have; %s", where, w.Param, e.paramList())
		}
		if p.Type != TypeString && p.Type != TypeBool {
			return fmt.Errorf("experiment %s: cost weights of parameter %s: it is of type %s, which counts its value; weigh only string and bool parameters", where, w.Param, p.Type)
		}
		if weighted[w.Param] != nil {
			return fmt.Errorf("experiment %s: cost weights of parameter %s are declared twice", where, w.Param)
		}
		weighted[w.Param] = w
		for _, v := range slices.Sorted(maps.Keys(w.Values)) {
			if _, err := p.Check(v); err != nil {
				return fmt.Errorf("experiment %s: cost weights: %w", where, err)
			}
			if x := w.Values[v]; bad(x) {
				return fmt.Errorf("experiment %s: cost weight of %s=%s is %v: want a number, 0 or more", where, w.Param, v, x)
			}
		}
	}
	terms := func(what string, fixed float64, ts []CostTerm) error {
		if bad(fixed) {
			return fmt.Errorf("experiment %s: cost%s: seconds %v: want a number of seconds, 0 or more", where, what, fixed)
		}
		for i, t := range ts {
			if len(t.Per) == 0 {
				return fmt.Errorf("experiment %s: cost%s: term %d names no parameter (per); the fixed part is seconds", where, what, i+1)
			}
			if bad(t.Seconds) {
				return fmt.Errorf("experiment %s: cost%s: term per %s: seconds %v: want a number of seconds, 0 or more", where, what, strings.Join(t.Per, " x "), t.Seconds)
			}
			for _, name := range t.Per {
				p := e.Param(name)
				if p == nil {
					return fmt.Errorf("experiment %s: cost%s: term per %s names parameter %q, which it does not have; %s", where, what, strings.Join(t.Per, " x "), name, e.paramList())
				}
				if p.Type != TypeString || len(p.Choices) == 0 {
					continue
				}
				w := weighted[name]
				for _, ch := range p.Choices {
					if w == nil {
						return fmt.Errorf("experiment %s: cost%s: term per %s names parameter %s, whose values are choices: give each a weight (cost weights)", where, what, strings.Join(t.Per, " x "), name)
					}
					if _, ok := w.Values[ch]; !ok {
						return fmt.Errorf("experiment %s: cost weights of parameter %s: no weight for %q (a term names the parameter: weigh each of its choices)", where, name, ch)
					}
				}
			}
		}
		return nil
	}
	if c.Seconds == 0 && len(c.Terms) == 0 && len(c.Cases) == 0 {
		return fmt.Errorf("experiment %s: cost declares nothing: give seconds, terms or cases (or leave cost out)", where)
	}
	if err := terms("", c.Seconds, c.Terms); err != nil {
		return err
	}
	for i, k := range c.Cases {
		what := fmt.Sprintf(" case %d", i+1)
		switch {
		case k.Clock == "", k.Clock == "host", k.Clock == "icount":
		case strings.HasPrefix(k.Clock, "icount:"):
			if n, err := strconv.Atoi(strings.TrimPrefix(k.Clock, "icount:")); err != nil || n < 0 {
				return fmt.Errorf("experiment %s: cost%s: clock %q: want host, icount or icount:SHIFT", where, what, k.Clock)
			}
		default:
			return fmt.Errorf("experiment %s: cost%s: clock %q: want host, icount or icount:SHIFT", where, what, k.Clock)
		}
		if slices.Contains(k.Profiles, "") {
			return fmt.Errorf("experiment %s: cost%s: an empty profile name", where, what)
		}
		if err := terms(what, k.Seconds, k.Terms); err != nil {
			return err
		}
	}
	return nil
}
