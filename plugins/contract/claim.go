package contract

// Claim kinds, as Claim.Kind names them.
const (
	KindRatio     = "ratio"
	KindRange     = "range"
	KindNear      = "near"
	KindCrossover = "crossover"
	KindSpeedup   = "speedup"
	KindCrash     = "crash"
	KindOrder     = "order"
)

// Claim is one statement of a write-up that an experiment's measurements
// decide (lab.plugin.v1.Claim). The plugin declares it with the
// experiment; the host evaluates it after every run. Exactly one of the
// kind fields (the rule) is set.
type Claim struct {
	// ID is unique across plugins; SEEDS.md numbers lab's E1.1..E5.2.
	ID        string `json:"id"`
	Source    string `json:"source"`
	Statement string `json:"statement"`
	// Machine is what the claim was made on; Profile the lab profile
	// standing for it, if any.
	Machine string `json:"machine"`
	Profile string `json:"profile,omitempty"`
	// Rationale says where the rule's bounds come from: the claim's own
	// words ("10+ times" is a factor of 10).
	Rationale string `json:"rationale,omitempty"`
	// Params, if set, restricts the claim to runs with these values.
	Params map[string]string `json:"params,omitempty"`

	Ratio     *RatioClaim     `json:"ratio,omitempty"`
	Range     *RangeClaim     `json:"range,omitempty"`
	Near      *NearClaim      `json:"near,omitempty"`
	Crossover *CrossoverClaim `json:"crossover,omitempty"`
	Speedup   *SpeedupClaim   `json:"speedup,omitempty"`
	Crash     *CrashClaim     `json:"crash,omitempty"`
	Order     *OrderClaim     `json:"order,omitempty"`
}

// RatioClaim: Numerator > Min x Denominator (and < Max x Denominator if
// Max is set), two series of one run.
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
// open.
type RangeClaim struct {
	Metric string            `json:"metric"`
	Min    *float64          `json:"min,omitempty"`
	Max    *float64          `json:"max,omitempty"`
	Unit   string            `json:"unit"`
	Labels map[string]string `json:"labels,omitempty"`
}

// NearClaim: Metric is Value +- Tolerance (in Unit), decided as a range.
type NearClaim struct {
	Metric    string            `json:"metric"`
	Value     float64           `json:"value"`
	Tolerance float64           `json:"tolerance"`
	Unit      string            `json:"unit"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// CrossoverClaim: the curves of First and Second over the numeric sweep
// label Sweep cross at At +- Tolerance, or (None) nowhere in the sweep.
//
// A curve is its metric's samples whose labels include FirstLabels
// (SecondLabels), so one metric in two series can be two curves. With
// FirstLowerBefore the crossing must also go that way: First below Second
// at the sweep's small end, above it after.
type CrossoverClaim struct {
	First            string            `json:"first"`
	Second           string            `json:"second"`
	Sweep            string            `json:"sweep"`
	At               *float64          `json:"at,omitempty"`
	Tolerance        float64           `json:"tolerance,omitempty"`
	None             bool              `json:"none,omitempty"`
	FirstLabels      map[string]string `json:"first_labels,omitempty"`
	SecondLabels     map[string]string `json:"second_labels,omitempty"`
	FirstLowerBefore bool              `json:"first_lower_before,omitempty"`
}

// SpeedupClaim: Metric (a time) on Profile is faster than on Baseline by a
// factor in [Min, Max] (Max optional); decided across two runs of the same
// experiment and parameters.
type SpeedupClaim struct {
	Metric   string            `json:"metric"`
	Baseline string            `json:"baseline"`
	Profile  string            `json:"profile"`
	Min      float64           `json:"min"`
	Max      *float64          `json:"max,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
}

// CrashClaim: the run ends in the expected crash, its reason naming
// Signal, when parameter Param is at least From, and runs to the end
// below it.
type CrashClaim struct {
	Signal string  `json:"signal"`
	Param  string  `json:"param"`
	From   float64 `json:"from"`
}

// OrderClaim: series of one metric told apart by label Label are ordered:
// every series Metric{Label=a} (a in Above) is greater than Min times
// every series Metric{Label=b} (b in Below), each pair decided as a ratio
// of one run (a Mann-Whitney U test). Both sides' series also carry
// Labels. E5's "fork per client costs far more server CPU than the
// pre-forked designs" is one: cpu_beyond_s, label design, above 1, below
// 2..5, min 5.
type OrderClaim struct {
	Metric string            `json:"metric"`
	Label  string            `json:"label"`
	Above  []string          `json:"above"`
	Below  []string          `json:"below"`
	Min    float64           `json:"min"`
	Labels map[string]string `json:"labels,omitempty"`
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
	}{{c.Ratio != nil, KindRatio}, {c.Range != nil, KindRange}, {c.Near != nil, KindNear},
		{c.Crossover != nil, KindCrossover}, {c.Speedup != nil, KindSpeedup}, {c.Crash != nil, KindCrash}, {c.Order != nil, KindOrder}} {
		if x.set {
			k = append(k, x.name)
		}
	}
	return k
}
