package plugins

import (
	"lab/plugins/contract"

	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Claim kinds, as Claim.Kind names them.
const (
	KindRatio     = contract.KindRatio
	KindRange     = contract.KindRange
	KindNear      = contract.KindNear
	KindCrossover = contract.KindCrossover
	KindSpeedup   = contract.KindSpeedup
	KindCrash     = contract.KindCrash
	KindOrder     = contract.KindOrder
)

// Claim is one statement of a write-up that an experiment's measurements
// decide (lab.plugin.v1.Claim); see lab/plugins/contract, which defines
// it and its rules for the SDK and the host alike.
type Claim = contract.Claim

// The rules a Claim sets exactly one of.
type (
	RatioClaim     = contract.RatioClaim
	RangeClaim     = contract.RangeClaim
	NearClaim      = contract.NearClaim
	CrossoverClaim = contract.CrossoverClaim
	SpeedupClaim   = contract.SpeedupClaim
	CrashClaim     = contract.CrashClaim
	OrderClaim     = contract.OrderClaim
)

// claimIDRE is what a claim id looks like: "E1.6", "mybench.3".
var claimIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// validateClaim checks claim c against its experiment e: one kind, the
// metrics and parameters it names exist, bounds that can be decided.
func validateClaim(c *Claim, e *Experiment, where string) error {
	if !claimIDRE.MatchString(c.ID) {
		return fmt.Errorf("experiment %s: claim id %q: use letters, digits, '.', '-' and '_' (e.g. E1.6)", where, c.ID)
	}
	where = fmt.Sprintf("experiment %s: claim %s", where, c.ID)
	if c.Statement == "" || c.Source == "" {
		return fmt.Errorf("%s needs a statement and a source", where)
	}
	if k := c.Kinds(); len(k) != 1 {
		return fmt.Errorf("%s sets %d kinds (%s); set exactly one of ratio, range, near, crossover, speedup, crash, order", where, len(k), strings.Join(k, ", "))
	}
	metric := func(name string) error {
		if e.metric(name) == nil {
			return fmt.Errorf("%s names unknown metric %q; the experiment's metrics: %s", where, name, e.metricList())
		}
		return nil
	}
	for name, v := range c.Params {
		p := e.param(name)
		if p == nil {
			return fmt.Errorf("%s: params names unknown parameter %q; %s", where, name, e.paramList())
		}
		if _, err := p.Check(v); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	switch {
	case c.Ratio != nil:
		r := c.Ratio
		if err := metric(r.Numerator); err != nil {
			return err
		}
		if err := metric(r.Denominator); err != nil {
			return err
		}
		if r.Min <= 0 || (r.Max != nil && *r.Max < r.Min) {
			return fmt.Errorf("%s: ratio needs min > 0 and max (if set) >= min (got min %v)", where, r.Min)
		}
	case c.Range != nil:
		r := c.Range
		if err := metric(r.Metric); err != nil {
			return err
		}
		if r.Min == nil && r.Max == nil || r.Min != nil && r.Max != nil && *r.Max < *r.Min {
			return fmt.Errorf("%s: range needs min or max, and max >= min", where)
		}
		if err := unitMatches(e, r.Metric, r.Unit, where); err != nil {
			return err
		}
	case c.Near != nil:
		n := c.Near
		if err := metric(n.Metric); err != nil {
			return err
		}
		if n.Tolerance <= 0 {
			return fmt.Errorf("%s: near needs a tolerance > 0 (in %s): say how close counts, from the claim's words", where, n.Unit)
		}
		if err := unitMatches(e, n.Metric, n.Unit, where); err != nil {
			return err
		}
	case c.Crossover != nil:
		x := c.Crossover
		if err := metric(x.First); err != nil {
			return err
		}
		if err := metric(x.Second); err != nil {
			return err
		}
		if x.Sweep == "" || (x.At == nil) == !x.None {
			return fmt.Errorf("%s: crossover needs the sweep label and exactly one of at (with a tolerance) or none", where)
		}
		if x.First == x.Second && maps.Equal(x.FirstLabels, x.SecondLabels) {
			return fmt.Errorf("%s: crossover's two curves are the same series (%s); tell them apart with first_labels and second_labels", where, x.First)
		}
	case c.Speedup != nil:
		s := c.Speedup
		if err := metric(s.Metric); err != nil {
			return err
		}
		if s.Baseline == "" || s.Profile == "" || s.Baseline == s.Profile {
			return fmt.Errorf("%s: speedup needs two different profiles, baseline and profile", where)
		}
		if s.Min <= 0 || (s.Max != nil && *s.Max < s.Min) {
			return fmt.Errorf("%s: speedup needs min > 0 and max (if set) >= min", where)
		}
	case c.Crash != nil:
		k := c.Crash
		if k.Signal == "" || e.param(k.Param) == nil {
			return fmt.Errorf("%s: crash needs a signal and the size parameter (one of the experiment's); %s", where, e.paramList())
		}
	case c.Order != nil:
		o := c.Order
		if err := metric(o.Metric); err != nil {
			return err
		}
		if o.Label == "" || len(o.Above) == 0 || len(o.Below) == 0 {
			return fmt.Errorf("%s: order needs the label that tells the series apart and at least one value above and one below", where)
		}
		for _, a := range o.Above {
			if slices.Contains(o.Below, a) {
				return fmt.Errorf("%s: order puts %s=%s both above and below", where, o.Label, a)
			}
		}
		if _, ok := o.Labels[o.Label]; ok {
			return fmt.Errorf("%s: order's labels fix %s, the label it orders by; leave it out of labels", where, o.Label)
		}
		if o.Min <= 0 {
			return fmt.Errorf("%s: order needs min > 0 (1: greater; 5: at least five times), got %v", where, o.Min)
		}
	}
	return nil
}

// unitMatches refuses a bound in another unit than its metric's: a
// range in ms on a metric in µs would decide nonsense.
func unitMatches(e *Experiment, metric, unit, where string) error {
	if m := e.metric(metric); m != nil && unit != m.Unit {
		return fmt.Errorf("%s: unit %q is not metric %s's unit %q; give the bounds in %s", where, unit, metric, m.Unit, m.Unit)
	}
	return nil
}

func (e *Experiment) metric(name string) *Metric {
	for i := range e.Metrics {
		if e.Metrics[i].Name == name {
			return &e.Metrics[i]
		}
	}
	return nil
}

func (e *Experiment) metricList() string {
	names := make([]string, len(e.Metrics))
	for i, m := range e.Metrics {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}
