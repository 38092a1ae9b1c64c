package contract

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Claim kinds, as Claim.Kind names them.
const (
	KindRatio       = "ratio"
	KindRange       = "range"
	KindCrossover   = "crossover"
	KindSpeedup     = "speedup"
	KindCrash       = "crash"
	KindOrder       = "order"
	KindEquivalence = "equivalence"
	KindDiffRatio   = "diffratio"
	KindTrend       = "trend"
	KindUntestable  = "untestable"
)

// Clocks a scope names: a run's clock is "host" or "icount:N".
const (
	ClockHost   = "host"
	ClockIcount = "icount"
)

// Crossover directions (CrossoverClaim.Before) and equivalence sides
// (EquivalenceClaim.Sides).
const (
	BeforeBelow    = "below"
	BeforeNotAbove = "not_above"
	SidesBoth      = "both"
	SidesLower     = "lower"
)

// Claim is one statement of a write-up that an experiment's measurements
// decide (lab.plugin.v1.Claim). The plugin declares it with the
// experiment; the host decides it from the stored runs in its Scope.
// Exactly one of the kind fields (the rule) is set; Untestable is a kind.
type Claim struct {
	// ID is unique across plugins; SEEDS.md numbers lab's E1.1..E5.2, a
	// part of a compound claim adds a letter (E1.2a).
	ID string `json:"id"`
	// PartOf is the compound claim's id (E1.2 for E1.2a).
	PartOf string `json:"part_of,omitempty"`
	Source string `json:"source"`
	// SourceWords are the write-up's own words, verbatim; DigestWords,
	// where lab has none, the digest's (SEEDS.md's) wording, never shown
	// as a quote.
	SourceWords string `json:"source_words,omitempty"`
	DigestWords string `json:"digest_words,omitempty"`
	Statement   string `json:"statement"`
	// Machine is what the claim was made on; Profile the lab profile
	// standing for it, if any (shown; Scope.Profiles decides).
	Machine string `json:"machine"`
	Profile string `json:"profile,omitempty"`
	// Rationale says where the rule's bounds come from: the claim's own
	// words or figures, read by Conventions.
	Rationale   string   `json:"rationale,omitempty"`
	Conventions []string `json:"conventions,omitempty"`
	// Fidelity is what our machine, kernel or emulation cannot show for
	// this claim; every verdict's reason carries it.
	Fidelity string `json:"fidelity,omitempty"`
	// ByConstruction, when set, says why the claim is true by
	// construction of the workload.
	ByConstruction string `json:"by_construction,omitempty"`
	// Scope says which runs may decide the claim.
	Scope *Scope `json:"scope,omitempty"`
	// Calibration is the claim's own machine speed for absolute times
	// under icount, when its machine is not its profile's.
	Calibration *Calibration `json:"calibration,omitempty"`

	Ratio       *RatioClaim       `json:"ratio,omitempty"`
	Range       *RangeClaim       `json:"range,omitempty"`
	Crossover   *CrossoverClaim   `json:"crossover,omitempty"`
	Speedup     *SpeedupClaim     `json:"speedup,omitempty"`
	Crash       *CrashClaim       `json:"crash,omitempty"`
	Order       *OrderClaim       `json:"order,omitempty"`
	Equivalence *EquivalenceClaim `json:"equivalence,omitempty"`
	DiffRatio   *DiffRatioClaim   `json:"diffratio,omitempty"`
	Trend       *TrendClaim       `json:"trend,omitempty"`
	Untestable  *UntestableClaim  `json:"untestable,omitempty"`
}

// Scope is the conditions a claim was made under: the runs that may
// decide it. A run outside it is listed as out of scope, with why.
type Scope struct {
	// Profiles decide the claim, each its own stratum; with Variants,
	// so do profiles whose variant_of is one of them (era kernels).
	Profiles []string `json:"profiles,omitempty"`
	Variants bool     `json:"variants,omitempty"`
	// Params are values a run must have (an unset parameter counts at
	// its default).
	Params map[string]string `json:"params,omitempty"`
	Sweep  *ScopeSweep       `json:"sweep,omitempty"`
	// Clocks are ClockHost and ClockIcount; none: both.
	Clocks []string `json:"clocks,omitempty"`
	// MinPluginVersion puts runs of older plugin versions out of scope.
	MinPluginVersion string `json:"min_plugin_version,omitempty"`
	// Builds are the workload builds (parameter ParamBuild) whose runs
	// decide the claim, each its own stratum; none: DefaultBuild only.
	Builds []string `json:"builds,omitempty"`
	// Run are parameter values the claim's runs are made with (lab
	// reproduce's plan, the command lab claims names) beyond Params,
	// that put no run out of scope: values that measure only what the
	// rule reads (printfbench's one target of several, netbench's
	// designs the rule compares). A run made with other values is
	// evidence as far as it has the samples the rule reads.
	Run map[string]string `json:"run,omitempty"`
}

// ParamBuild is the parameter that chooses how an experiment's workload
// was compiled (static-O2, dynamic-O0...); a run without it ran
// DefaultBuild, the only build there was before it.
const (
	ParamBuild   = "build"
	DefaultBuild = "static-O2"
)

// ScopeSweep is the sweep key a claim is decided over, its points in
// scope (none: all) and the points without which it cannot be decided.
type ScopeSweep struct {
	Key      string   `json:"key"`
	Points   []string `json:"points,omitempty"`
	Required []string `json:"required,omitempty"`
}

// Calibration is a machine's speed for absolute times under icount: an
// interval of instructions per ns, with its basis and confidence.
type Calibration struct {
	InstrPerNsLo float64 `json:"instr_per_ns_lo" yaml:"instr_per_ns_lo"`
	InstrPerNsHi float64 `json:"instr_per_ns_hi" yaml:"instr_per_ns_hi"`
	Basis        string  `json:"basis" yaml:"basis"`
	Confidence   string  `json:"confidence,omitempty" yaml:"confidence,omitempty"`
}

// RatioClaim: Numerator > Min x Denominator (and < Max x Denominator if
// Max is set), two series of one run paired by repeat and point.
//
// A side is a series: the metric with exactly the labels Labels plus that
// side's NumeratorLabels or DenominatorLabels, so one metric in two series
// (real_s at mode=thread against mode=process) can be set against itself.
type RatioClaim struct {
	Numerator         string            `json:"numerator"`
	Denominator       string            `json:"denominator"`
	Min               float64           `json:"min"`
	Max               *float64          `json:"max,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	NumeratorLabels   map[string]string `json:"numerator_labels,omitempty"`
	DenominatorLabels map[string]string `json:"denominator_labels,omitempty"`
}

func (*RatioClaim) Kind() string { return KindRatio }

func (r *RatioClaim) Metrics() []string { return []string{r.Numerator, r.Denominator} }

func (r *RatioClaim) Validate(d Declared) error {
	if err := d.Metric(r.Numerator, r.Denominator); err != nil {
		return err
	}
	if r.Min <= 0 || (r.Max != nil && *r.Max < r.Min) {
		return fmt.Errorf("ratio needs min > 0 and max (if set) >= min (got min %v)", r.Min)
	}
	return nil
}

// RangeClaim: Metric lies in [Min, Max] (in Unit); a bound left out is
// open. With ShareWith, the value is Metric / (Metric + ShareWith) of
// each repeat. An absolute time is decided only under icount, against a
// calibration.
type RangeClaim struct {
	Metric    string            `json:"metric"`
	Min       *float64          `json:"min,omitempty"`
	Max       *float64          `json:"max,omitempty"`
	Unit      string            `json:"unit"`
	Labels    map[string]string `json:"labels,omitempty"`
	ShareWith string            `json:"share_with,omitempty"`
}

func (*RangeClaim) Kind() string { return KindRange }

func (r *RangeClaim) Metrics() []string { return []string{r.Metric, r.ShareWith} }

func (r *RangeClaim) Validate(d Declared) error {
	if err := d.Metric(r.Metric); err != nil {
		return err
	}
	if r.Min == nil && r.Max == nil || r.Min != nil && r.Max != nil && *r.Max < *r.Min {
		return errors.New("range needs min or max, and max >= min")
	}
	if r.ShareWith == "" {
		return d.Unit(r.Metric, r.Unit)
	}
	if err := d.Metric(r.ShareWith); err != nil {
		return err
	}
	if r.Unit != "share" || r.Min != nil && (*r.Min < 0 || *r.Min > 1) || r.Max != nil && (*r.Max < 0 || *r.Max > 1) {
		return errors.New(`a range with share_with bounds a share: unit "share", bounds in [0, 1]`)
	}
	return nil
}

// CrossoverClaim: the curves of First and Second over the numeric sweep
// label Sweep cross inside [BandStart, BandEnd]: First below Second at
// the band's start (Before "below"), or not above it beyond Margin
// ("not_above"), and above it at the band's end.
//
// A curve is its metric's samples whose labels include FirstLabels
// (SecondLabels), so one metric in two series can be two curves.
type CrossoverClaim struct {
	First        string            `json:"first"`
	Second       string            `json:"second"`
	Sweep        string            `json:"sweep"`
	FirstLabels  map[string]string `json:"first_labels,omitempty"`
	SecondLabels map[string]string `json:"second_labels,omitempty"`
	BandStart    float64           `json:"band_start"`
	BandEnd      float64           `json:"band_end"`
	Before       string            `json:"before"`
	Margin       float64           `json:"margin,omitempty"`
}

func (*CrossoverClaim) Kind() string { return KindCrossover }

func (x *CrossoverClaim) Metrics() []string { return []string{x.First, x.Second} }

func (x *CrossoverClaim) Validate(d Declared) error {
	if err := d.Metric(x.First, x.Second); err != nil {
		return err
	}
	if x.Sweep == "" || !(x.BandStart <= x.BandEnd) || x.BandStart == 0 && x.BandEnd == 0 {
		return errors.New("crossover needs the sweep label and a band, band_start <= band_end (the sweep points that bracket the crossing)")
	}
	if x.Before != BeforeBelow && x.Before != BeforeNotAbove {
		return fmt.Errorf("crossover's before is %q; use %q (first below second before the band) or %q (not above it beyond margin)",
			x.Before, BeforeBelow, BeforeNotAbove)
	}
	if x.Before == BeforeNotAbove && x.Margin <= 0 {
		return fmt.Errorf(`crossover before %q needs a margin > 0 (0.1: the "close" convention)`, BeforeNotAbove)
	}
	if x.First == x.Second && maps.Equal(x.FirstLabels, x.SecondLabels) {
		return fmt.Errorf("crossover's two curves are the same series (%s); tell them apart with first_labels and second_labels", x.First)
	}
	return nil
}

// SpeedupClaim: Metric (a time) on Profile is faster than on Baseline by a
// factor in [Min, Max] (Max optional); decided across runs of the same
// experiment, parameters and clock, unpaired.
type SpeedupClaim struct {
	Metric   string            `json:"metric"`
	Baseline string            `json:"baseline"`
	Profile  string            `json:"profile"`
	Min      float64           `json:"min"`
	Max      *float64          `json:"max,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
}

func (*SpeedupClaim) Kind() string { return KindSpeedup }

func (s *SpeedupClaim) Metrics() []string { return []string{s.Metric} }

func (s *SpeedupClaim) Validate(d Declared) error {
	if err := d.Metric(s.Metric); err != nil {
		return err
	}
	if s.Baseline == "" || s.Profile == "" || s.Baseline == s.Profile {
		return errors.New("speedup needs two different profiles, baseline and profile")
	}
	if s.Min <= 0 || (s.Max != nil && *s.Max < s.Min) {
		return errors.New("speedup needs min > 0 and max (if set) >= min")
	}
	return nil
}

// CrashClaim: the program crashes with Signal when parameter Param is at
// least From, and runs to the end below it; or (Never) runs to the end at
// every point. The points that must have been run are the scope's
// Sweep.Required.
type CrashClaim struct {
	Signal string  `json:"signal,omitempty"`
	Param  string  `json:"param"`
	From   float64 `json:"from,omitempty"`
	Never  bool    `json:"never,omitempty"`
}

func (*CrashClaim) Kind() string { return KindCrash }

// Metrics: none, a crash's evidence is how runs ended.
func (*CrashClaim) Metrics() []string { return nil }

func (k *CrashClaim) Validate(d Declared) error {
	if err := d.Param(k.Param); err != nil || k.Never == (k.Signal != "") {
		return fmt.Errorf("crash needs the size parameter (one of the experiment's) and either a signal with from, or never; %s", d.ParamList())
	}
	return nil
}

// OrderClaim: series of one metric told apart by label Label are ordered:
// every series Metric{Label=a} (a in Above) is greater than Min times
// every series Metric{Label=b} (b in Below), and so is each of Pairs;
// each pair decided as a paired ratio within a run. Both sides' series
// also carry Labels.
type OrderClaim struct {
	Metric string            `json:"metric"`
	Label  string            `json:"label"`
	Above  []string          `json:"above,omitempty"`
	Below  []string          `json:"below,omitempty"`
	Min    float64           `json:"min"`
	Labels map[string]string `json:"labels,omitempty"`
	Pairs  []OrderPair       `json:"pairs,omitempty"`
}

func (*OrderClaim) Kind() string { return KindOrder }

func (o *OrderClaim) Metrics() []string { return []string{o.Metric} }

func (o *OrderClaim) Validate(d Declared) error {
	if err := d.Metric(o.Metric); err != nil {
		return err
	}
	if o.Label == "" || (len(o.Above) == 0 || len(o.Below) == 0) && len(o.Pairs) == 0 {
		return errors.New("order needs the label that tells the series apart and values above and below, or pairs")
	}
	for _, a := range o.Above {
		if slices.Contains(o.Below, a) {
			return fmt.Errorf("order puts %s=%s both above and below", o.Label, a)
		}
	}
	for _, p := range o.Pairs {
		if p.Above == "" || p.Below == "" || p.Above == p.Below {
			return fmt.Errorf("order pair %q > %q: name two different values of %s", p.Above, p.Below, o.Label)
		}
	}
	if _, ok := o.Labels[o.Label]; ok {
		return fmt.Errorf("order's labels fix %s, the label it orders by; leave it out of labels", o.Label)
	}
	if o.Min <= 0 {
		return fmt.Errorf("order needs min > 0 (1: greater; 5: at least five times), got %v", o.Min)
	}
	return nil
}

// OrderPair is one pair of an order: Label=Above is greater than
// Label=Below.
type OrderPair struct {
	Above string `json:"above"`
	Below string `json:"below"`
}

// EquivalenceClaim: "about the same", "close" (Sides "both": Numerator /
// Denominator within [1/(1+Margin), 1+Margin]), "no advantage", "no
// faster" (Sides "lower": not below 1/(1+Margin)). Paired within a run;
// with Baseline and Profile set, Numerator on Profile against Denominator
// on Baseline, unpaired. With Label set, each value of Numerators
// against each of Denominators (the series Numerator{Label=n} and
// Denominator{Label=d}).
type EquivalenceClaim struct {
	Numerator         string            `json:"numerator"`
	Denominator       string            `json:"denominator"`
	Labels            map[string]string `json:"labels,omitempty"`
	NumeratorLabels   map[string]string `json:"numerator_labels,omitempty"`
	DenominatorLabels map[string]string `json:"denominator_labels,omitempty"`
	Margin            float64           `json:"margin"`
	Sides             string            `json:"sides"`
	Baseline          string            `json:"baseline,omitempty"`
	Profile           string            `json:"profile,omitempty"`
	Label             string            `json:"label,omitempty"`
	Numerators        []string          `json:"numerators,omitempty"`
	Denominators      []string          `json:"denominators,omitempty"`
}

func (*EquivalenceClaim) Kind() string { return KindEquivalence }

func (q *EquivalenceClaim) Metrics() []string { return []string{q.Numerator, q.Denominator} }

func (q *EquivalenceClaim) Validate(d Declared) error {
	if err := d.Metric(q.Numerator, q.Denominator); err != nil {
		return err
	}
	if q.Margin <= 0 || q.Sides != SidesBoth && q.Sides != SidesLower {
		return fmt.Errorf(`equivalence needs a margin > 0 (0.1: the "close" convention) and sides %q or %q`, SidesBoth, SidesLower)
	}
	if (q.Baseline == "") != (q.Profile == "") || q.Baseline != "" && q.Baseline == q.Profile {
		return errors.New("equivalence across profiles needs both baseline and profile, different")
	}
	if (q.Label == "") != (len(q.Numerators) == 0 || len(q.Denominators) == 0) {
		return errors.New("equivalence by label needs label, numerators and denominators together")
	}
	return nil
}

// DiffRatioClaim: (Metric{Label=Numerator} - Metric{Label=Baseline}) is
// at least Factor times (Metric{Label=d} - Metric{Label=Baseline}) for
// each d in Denominators, all of one repeat.
type DiffRatioClaim struct {
	Metric       string            `json:"metric"`
	Label        string            `json:"label"`
	Numerator    string            `json:"numerator"`
	Denominators []string          `json:"denominators"`
	Baseline     string            `json:"baseline"`
	Factor       float64           `json:"factor"`
	Labels       map[string]string `json:"labels,omitempty"`
}

func (*DiffRatioClaim) Kind() string { return KindDiffRatio }

func (r *DiffRatioClaim) Metrics() []string { return []string{r.Metric} }

func (r *DiffRatioClaim) Validate(d Declared) error {
	if err := d.Metric(r.Metric); err != nil {
		return err
	}
	if r.Label == "" || r.Numerator == "" || r.Baseline == "" || len(r.Denominators) == 0 || r.Factor <= 0 {
		return errors.New("diffratio needs label, numerator, denominators, baseline and a factor > 0")
	}
	return nil
}

// TrendClaim: Numerator / Denominator falls by more than Margin from the
// smallest point of sweep label Sweep to its largest.
type TrendClaim struct {
	Numerator         string            `json:"numerator"`
	Denominator       string            `json:"denominator"`
	Sweep             string            `json:"sweep"`
	Margin            float64           `json:"margin"`
	Labels            map[string]string `json:"labels,omitempty"`
	NumeratorLabels   map[string]string `json:"numerator_labels,omitempty"`
	DenominatorLabels map[string]string `json:"denominator_labels,omitempty"`
}

func (*TrendClaim) Kind() string { return KindTrend }

func (t *TrendClaim) Metrics() []string { return []string{t.Numerator, t.Denominator} }

func (t *TrendClaim) Validate(d Declared) error {
	if err := d.Metric(t.Numerator, t.Denominator); err != nil {
		return err
	}
	if t.Sweep == "" || t.Margin <= 0 {
		return errors.New(`trend needs the sweep label and a margin > 0 (0.1: the "close" convention)`)
	}
	return nil
}

// UntestableClaim: a property of the original platform a Linux guest
// cannot show. No run decides it; the verdict names Property and quotes
// the series Instead{InsteadLabels} measured instead.
type UntestableClaim struct {
	Property      string            `json:"property"`
	Instead       string            `json:"instead,omitempty"`
	InsteadLabels map[string]string `json:"instead_labels,omitempty"`
	InsteadNote   string            `json:"instead_note,omitempty"`
}

func (*UntestableClaim) Kind() string { return KindUntestable }

// Metrics: the series measured instead, if any.
func (u *UntestableClaim) Metrics() []string { return []string{u.Instead} }

func (u *UntestableClaim) Validate(d Declared) error {
	if u.Property == "" {
		return errors.New("untestable needs the property of the original platform a guest cannot show")
	}
	if u.Instead != "" {
		return d.Metric(u.Instead)
	}
	return nil
}

// Kind is the claim's kind (KindRatio...), "" unless exactly one rule is
// set.
func (c *Claim) Kind() string {
	if r := c.Rule(); r != nil {
		return r.Kind()
	}
	return ""
}

// Kinds are the kinds whose rule is set, in the order of Claim's fields;
// a valid claim has one.
func (c *Claim) Kinds() []string {
	var k []string
	for _, r := range c.Rules() {
		k = append(k, r.Kind())
	}
	return k
}
