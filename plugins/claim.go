package plugins

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"lab/plugins/contract"
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
		return fmt.Errorf("%s sets %d kinds (%s); set exactly one of %s",
			where, len(k), strings.Join(k, ", "), strings.Join(contract.KindNames(), ", "))
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
	if _, err := json.Marshal(c.Rule()); err != nil {
		return fmt.Errorf("%s: its %s rule's numbers must be finite: %v", where, c.Kind(), err)
	}
	if err := c.Rule().Validate(declared{e}); err != nil {
		return fmt.Errorf("%s: %w", where, err)
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
		p := e.Param(name)
		if p == nil {
			return fmt.Errorf("%s: scope params names unknown parameter %q; %s", where, name, e.paramList())
		}
		if _, err := p.Check(v); err != nil {
			return fmt.Errorf("%s: scope: %w", where, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Run)) {
		p := e.Param(name)
		switch _, given := s.Params[name]; {
		case p == nil:
			return fmt.Errorf("%s: scope run names unknown parameter %q; %s", where, name, e.paramList())
		case given:
			return fmt.Errorf("%s: scope run and scope params both give %s; a run parameter is one no run must have: keep it in one", where, name)
		case name == contract.ParamBuild || s.Sweep != nil && name == s.Sweep.Key:
			return fmt.Errorf("%s: scope run cannot give %s (the builds and the sweep have their own keys)", where, name)
		}
		if _, err := p.Check(s.Run[name]); err != nil {
			return fmt.Errorf("%s: scope run: %w", where, err)
		}
	}
	if len(s.Builds) > 0 {
		p := e.Param(contract.ParamBuild)
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
		p := e.Param(sw.Key)
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

// declared is what an experiment declares, as its claims' rules check
// the names they take from it (contract.Declared).
type declared struct{ e *Experiment }

func (d declared) Metric(names ...string) error {
	for _, name := range names {
		if d.e.metric(name) == nil {
			return fmt.Errorf("the rule names unknown metric %q; the experiment's metrics: %s", name, d.e.metricList())
		}
	}
	return nil
}

// Unit refuses a bound in another unit than its metric's: a
// range in ms on a metric in µs would decide nonsense.
func (d declared) Unit(metric, unit string) error {
	if m := d.e.metric(metric); m != nil && unit != m.Unit {
		return fmt.Errorf("unit %q is not metric %s's unit %q; give the bounds in %s", unit, metric, m.Unit, m.Unit)
	}
	return nil
}

func (d declared) Param(name string) error {
	if d.e.Param(name) == nil {
		return fmt.Errorf("unknown parameter %q; %s", name, d.e.paramList())
	}
	return nil
}

func (d declared) ParamList() string { return d.e.paramList() }

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
