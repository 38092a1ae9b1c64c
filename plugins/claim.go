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
	KindCrossover = contract.KindCrossover
	KindSpeedup   = contract.KindSpeedup
	KindCrash     = contract.KindCrash
	KindOrder     = contract.KindOrder

	KindEquivalence = contract.KindEquivalence
	KindDiffRatio   = contract.KindDiffRatio
	KindTrend       = contract.KindTrend
	KindUntestable  = contract.KindUntestable
)

// The clocks a scope names, crossover directions, equivalence sides.
const (
	ClockHost      = contract.ClockHost
	ClockIcount    = contract.ClockIcount
	BeforeBelow    = contract.BeforeBelow
	BeforeNotAbove = contract.BeforeNotAbove
	SidesBoth      = contract.SidesBoth
	SidesLower     = contract.SidesLower
)

// Claim is one statement of a write-up that an experiment's measurements
// decide (lab.plugin.v1.Claim); see lab/plugins/contract, which defines
// it and its rules for the SDK and the host alike.
type Claim = contract.Claim

// The rules a Claim sets exactly one of.
type (
	RatioClaim     = contract.RatioClaim
	RangeClaim     = contract.RangeClaim
	CrossoverClaim = contract.CrossoverClaim
	SpeedupClaim   = contract.SpeedupClaim
	CrashClaim     = contract.CrashClaim
	OrderClaim     = contract.OrderClaim

	EquivalenceClaim = contract.EquivalenceClaim
	DiffRatioClaim   = contract.DiffRatioClaim
	TrendClaim       = contract.TrendClaim
	UntestableClaim  = contract.UntestableClaim
	OrderPair        = contract.OrderPair
	Scope            = contract.Scope
	ScopeSweep       = contract.ScopeSweep
	Calibration      = contract.Calibration
)

// claimIDRE is what a claim id looks like: "E1.6", "mybench.3".
var claimIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// validateClaim checks claim c against its experiment e: one kind, the
// metrics and parameters it names exist, bounds that can be decided, a
// scope that names what a run must have.
func validateClaim(c *Claim, e *Experiment, where string) error {
	if !claimIDRE.MatchString(c.ID) {
		return fmt.Errorf("experiment %s: claim id %q: use letters, digits, '.', '-' and '_' (e.g. E1.6)", where, c.ID)
	}
	where = fmt.Sprintf("experiment %s: claim %s", where, c.ID)
	if c.Statement == "" || c.Source == "" {
		return fmt.Errorf("%s needs a statement and a source", where)
	}
	if k := c.Kinds(); len(k) != 1 {
		return fmt.Errorf("%s sets %d kinds (%s); set exactly one of ratio, range, crossover, speedup, crash, order, equivalence, diffratio, trend, untestable",
			where, len(k), strings.Join(k, ", "))
	}
	metric := func(names ...string) error {
		for _, name := range names {
			if e.metric(name) == nil {
				return fmt.Errorf("%s names unknown metric %q; the experiment's metrics: %s", where, name, e.metricList())
			}
		}
		return nil
	}
	for _, name := range c.Conventions {
		if _, ok := contract.ConventionNamed(name); !ok {
			return fmt.Errorf("%s cites convention %q, which lab does not have (known: %s; docs/claims.md, \"Word conventions\")",
				where, name, contract.ConventionNames())
		}
	}
	if err := validateScope(c.Scope, e, where); err != nil {
		return err
	}
	if k := c.Calibration; k != nil && !(k.InstrPerNsLo > 0 && k.InstrPerNsHi >= k.InstrPerNsLo && k.Basis != "") {
		return fmt.Errorf("%s: calibration needs 0 < instr_per_ns_lo <= instr_per_ns_hi and a basis (where the interval comes from)", where)
	}
	switch {
	case c.Ratio != nil:
		r := c.Ratio
		if err := metric(r.Numerator, r.Denominator); err != nil {
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
		if r.ShareWith != "" {
			if err := metric(r.ShareWith); err != nil {
				return err
			}
			if r.Unit != "share" || r.Min != nil && (*r.Min < 0 || *r.Min > 1) || r.Max != nil && (*r.Max < 0 || *r.Max > 1) {
				return fmt.Errorf("%s: a range with share_with bounds a share: unit \"share\", bounds in [0, 1]", where)
			}
		} else if err := unitMatches(e, r.Metric, r.Unit, where); err != nil {
			return err
		}
	case c.Crossover != nil:
		x := c.Crossover
		if err := metric(x.First, x.Second); err != nil {
			return err
		}
		if x.Sweep == "" || !(x.BandStart <= x.BandEnd) || x.BandStart == 0 && x.BandEnd == 0 {
			return fmt.Errorf("%s: crossover needs the sweep label and a band, band_start <= band_end (the sweep points that bracket the crossing)", where)
		}
		if x.Before != BeforeBelow && x.Before != BeforeNotAbove {
			return fmt.Errorf("%s: crossover's before is %q; use %q (first below second before the band) or %q (not above it beyond margin)",
				where, x.Before, BeforeBelow, BeforeNotAbove)
		}
		if x.Before == BeforeNotAbove && x.Margin <= 0 {
			return fmt.Errorf("%s: crossover before %q needs a margin > 0 (0.1: the \"close\" convention)", where, BeforeNotAbove)
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
		if e.param(k.Param) == nil || k.Never == (k.Signal != "") {
			return fmt.Errorf("%s: crash needs the size parameter (one of the experiment's) and either a signal with from, or never; %s", where, e.paramList())
		}
	case c.Order != nil:
		o := c.Order
		if err := metric(o.Metric); err != nil {
			return err
		}
		if o.Label == "" || (len(o.Above) == 0 || len(o.Below) == 0) && len(o.Pairs) == 0 {
			return fmt.Errorf("%s: order needs the label that tells the series apart and values above and below, or pairs", where)
		}
		for _, a := range o.Above {
			if slices.Contains(o.Below, a) {
				return fmt.Errorf("%s: order puts %s=%s both above and below", where, o.Label, a)
			}
		}
		for _, p := range o.Pairs {
			if p.Above == "" || p.Below == "" || p.Above == p.Below {
				return fmt.Errorf("%s: order pair %q > %q: name two different values of %s", where, p.Above, p.Below, o.Label)
			}
		}
		if _, ok := o.Labels[o.Label]; ok {
			return fmt.Errorf("%s: order's labels fix %s, the label it orders by; leave it out of labels", where, o.Label)
		}
		if o.Min <= 0 {
			return fmt.Errorf("%s: order needs min > 0 (1: greater; 5: at least five times), got %v", where, o.Min)
		}
	case c.Equivalence != nil:
		q := c.Equivalence
		if err := metric(q.Numerator, q.Denominator); err != nil {
			return err
		}
		if q.Margin <= 0 || q.Sides != SidesBoth && q.Sides != SidesLower {
			return fmt.Errorf("%s: equivalence needs a margin > 0 (0.1: the \"close\" convention) and sides %q or %q", where, SidesBoth, SidesLower)
		}
		if (q.Baseline == "") != (q.Profile == "") || q.Baseline != "" && q.Baseline == q.Profile {
			return fmt.Errorf("%s: equivalence across profiles needs both baseline and profile, different", where)
		}
		if (q.Label == "") != (len(q.Numerators) == 0 || len(q.Denominators) == 0) {
			return fmt.Errorf("%s: equivalence by label needs label, numerators and denominators together", where)
		}
	case c.DiffRatio != nil:
		d := c.DiffRatio
		if err := metric(d.Metric); err != nil {
			return err
		}
		if d.Label == "" || d.Numerator == "" || d.Baseline == "" || len(d.Denominators) == 0 || d.Factor <= 0 {
			return fmt.Errorf("%s: diffratio needs label, numerator, denominators, baseline and a factor > 0", where)
		}
	case c.Trend != nil:
		t := c.Trend
		if err := metric(t.Numerator, t.Denominator); err != nil {
			return err
		}
		if t.Sweep == "" || t.Margin <= 0 {
			return fmt.Errorf("%s: trend needs the sweep label and a margin > 0 (0.1: the \"close\" convention)", where)
		}
	case c.Untestable != nil:
		u := c.Untestable
		if u.Property == "" {
			return fmt.Errorf("%s: untestable needs the property of the original platform a guest cannot show", where)
		}
		if u.Instead != "" {
			if err := metric(u.Instead); err != nil {
				return err
			}
		}
	}
	return nil
}

// validateScope checks that a scope names parameters the experiment has,
// values they accept and clocks lab knows.
func validateScope(s *Scope, e *Experiment, where string) error {
	if s == nil {
		return nil
	}
	for name, v := range s.Params {
		p := e.param(name)
		if p == nil {
			return fmt.Errorf("%s: scope params names unknown parameter %q; %s", where, name, e.paramList())
		}
		if _, err := p.Check(v); err != nil {
			return fmt.Errorf("%s: scope: %w", where, err)
		}
	}
	if len(s.Builds) > 0 {
		p := e.param(contract.ParamBuild)
		if p == nil {
			return fmt.Errorf("%s: scope builds %v, but experiment %s has no %q parameter", where, s.Builds, e.Name, contract.ParamBuild)
		}
		for _, b := range s.Builds {
			if _, err := p.Check(b); err != nil {
				return fmt.Errorf("%s: scope builds: %w", where, err)
			}
		}
	}
	for _, c := range s.Clocks {
		if c != ClockHost && c != ClockIcount {
			return fmt.Errorf("%s: scope clock %q; use %q or %q", where, c, ClockHost, ClockIcount)
		}
	}
	if sw := s.Sweep; sw != nil {
		p := e.param(sw.Key)
		if p == nil {
			return fmt.Errorf("%s: scope sweep key %q is not a parameter; %s", where, sw.Key, e.paramList())
		}
		for _, v := range append(slices.Clone(sw.Points), sw.Required...) {
			if _, err := p.Check(v); err != nil {
				return fmt.Errorf("%s: scope sweep: %w", where, err)
			}
		}
		for _, r := range sw.Required {
			if len(sw.Points) > 0 && !slices.Contains(sw.Points, r) {
				return fmt.Errorf("%s: scope sweep requires %s=%s but does not list it among its points", where, sw.Key, r)
			}
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
