package contract

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

// UntestableClaim: a property of the original platform a Linux guest
// cannot show. No run decides it; the verdict names Property and quotes
// the series Instead{InsteadLabels} measured instead.
type UntestableClaim struct {
	Property      string            `json:"property"`
	Instead       string            `json:"instead,omitempty"`
	InsteadLabels map[string]string `json:"instead_labels,omitempty"`
	InsteadNote   string            `json:"instead_note,omitempty"`
}

// Kind is the claim's kind (KindRatio...), "" unless exactly one rule is
// set.
func (c *Claim) Kind() string {
	kinds := c.Kinds()
	if len(kinds) != 1 {
		return ""
	}
	return kinds[0]
}

// Kinds are the kinds whose rule is set, in the order of Claim's fields;
// a valid claim has one.
func (c *Claim) Kinds() []string {
	var k []string
	for _, x := range []struct {
		set  bool
		name string
	}{{c.Ratio != nil, KindRatio}, {c.Range != nil, KindRange},
		{c.Crossover != nil, KindCrossover}, {c.Speedup != nil, KindSpeedup}, {c.Crash != nil, KindCrash}, {c.Order != nil, KindOrder},
		{c.Equivalence != nil, KindEquivalence}, {c.DiffRatio != nil, KindDiffRatio}, {c.Trend != nil, KindTrend}, {c.Untestable != nil, KindUntestable}} {
		if x.set {
			k = append(k, x.name)
		}
	}
	return k
}
