package results

import (
	"maps"
)

// Claim is one statement of a write-up, declared by the plugin experiment
// that decides it (the host converts the SDK's plugins.Claim into this).
// Exactly one of the kind fields is set; Kind names it.
type Claim struct {
	ID     string `json:"id"`
	Plugin string `json:"plugin"`
	// Bench is the plugin experiment whose runs decide it.
	Bench     string            `json:"bench"`
	Source    string            `json:"source"`
	Statement string            `json:"statement"`
	Machine   string            `json:"machine"`
	Profile   string            `json:"profile,omitempty"`
	Rationale string            `json:"rationale,omitempty"`
	Params    map[string]string `json:"params,omitempty"`
	Kind      string            `json:"kind"`

	Ratio     *RatioRule     `json:"ratio,omitempty"`
	Range     *RangeRule     `json:"range,omitempty"`
	Near      *NearRule      `json:"near,omitempty"`
	Crossover *CrossoverRule `json:"crossover,omitempty"`
	Speedup   *SpeedupRule   `json:"speedup,omitempty"`
	Crash     *CrashRule     `json:"crash,omitempty"`
	Order     *OrderRule     `json:"order,omitempty"`
}

// RatioRule: Numerator > Min x Denominator (< Max x Denominator if Max is
// set), two series of one run. A series is a metric with exactly the
// labels Labels plus that side's NumeratorLabels or DenominatorLabels, so
// one metric in two series (real_s at mode=thread against mode=process)
// can be set against itself.
type RatioRule struct {
	Numerator         string            `json:"numerator"`
	Denominator       string            `json:"denominator"`
	Min               float64           `json:"min"`
	Max               *float64          `json:"max,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	NumeratorLabels   map[string]string `json:"numerator_labels,omitempty"`
	DenominatorLabels map[string]string `json:"denominator_labels,omitempty"`
}

// RangeRule: Metric in [Min, Max] (Unit); a bound left out is open.
type RangeRule struct {
	Metric string            `json:"metric"`
	Min    *float64          `json:"min,omitempty"`
	Max    *float64          `json:"max,omitempty"`
	Unit   string            `json:"unit"`
	Labels map[string]string `json:"labels,omitempty"`
}

// NearRule: Metric is Value +- Tolerance (Unit), decided as a range.
type NearRule struct {
	Metric    string            `json:"metric"`
	Value     float64           `json:"value"`
	Tolerance float64           `json:"tolerance"`
	Unit      string            `json:"unit"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// CrossoverRule: the curves of First and Second over the numeric label
// Sweep cross at At +- Tolerance, or (None) nowhere in the sweep. A curve
// is its metric's samples whose labels include FirstLabels (SecondLabels),
// so one metric in two series can be two curves. With FirstLowerBefore
// the crossing must also go the claimed way: First below Second at the
// sweep's small end, above it after the crossing.
type CrossoverRule struct {
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

// SpeedupRule: Metric (a time) on Profile is faster than on Baseline by a
// factor in [Min, Max]; two runs of the same experiment and parameters.
type SpeedupRule struct {
	Metric   string            `json:"metric"`
	Baseline string            `json:"baseline"`
	Profile  string            `json:"profile"`
	Min      float64           `json:"min"`
	Max      *float64          `json:"max,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
}

// CrashRule: the run ends in the expected crash, naming Signal, when
// parameter Param is at least From, and runs to the end below it.
type CrashRule struct {
	Signal string  `json:"signal"`
	Param  string  `json:"param"`
	From   float64 `json:"from"`
}

// OrderRule: every series Metric{Label=a} (a in Above) is greater than
// Min x every series Metric{Label=b} (b in Below), each pair decided as a
// ratio of one run; both sides' series also carry Labels.
type OrderRule struct {
	Metric string            `json:"metric"`
	Label  string            `json:"label"`
	Above  []string          `json:"above"`
	Below  []string          `json:"below"`
	Min    float64           `json:"min"`
	Labels map[string]string `json:"labels,omitempty"`
}

// Verdicts.
const (
	Reproduced    = "reproduced"
	NotReproduced = "not reproduced"
	// Inconclusive: too few samples, or too much noise, to decide.
	Inconclusive = "inconclusive"
	// NotComparable: an absolute time measured under a clock that does
	// not make absolute times comparable.
	NotComparable = "not comparable"
	// NotRun: no run decided the claim.
	NotRun = "not run"
)

// Verdict is what a claim's rule said about one run (or, for a speedup,
// a pair of runs), with the numbers that decided it.
type Verdict struct {
	Claim     string `json:"claim"`
	Kind      string `json:"kind"`
	Statement string `json:"statement"`
	Verdict   string `json:"verdict"`
	// Reason says why, in one line carrying the deciding numbers.
	Reason string `json:"reason"`
	// Rule is the rule applied, in words.
	Rule    string   `json:"rule"`
	Numbers []Number `json:"numbers,omitempty"`
	// Runs are the runs whose samples decided it: this run, and for a
	// speedup the other run.
	Runs []string `json:"runs,omitempty"`
	// Note qualifies the verdict: the clock under which an absolute time
	// was decided, a profile other than the claim's.
	Note string `json:"note,omitempty"`
}

// Number is one number that decided a verdict.
type Number struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

// Decided says whether v is a verdict a run gave (anything but not run).
func (v Verdict) Decided() bool { return v.Verdict != "" && v.Verdict != NotRun }

// Values returns the samples of one series of r: metric with exactly
// these labels.
func (r *Result) Values(metric string, labels map[string]string) []float64 {
	var out []float64
	key := LabelKey(labels)
	for _, s := range r.Samples {
		if s.Metric == metric && LabelKey(s.Labels) == key {
			out = append(out, s.Value)
		}
	}
	return out
}

// WithKind returns c with Kind filled in from the rule that is set, for
// claims built in Go.
func (c Claim) WithKind() Claim {
	switch {
	case c.Ratio != nil:
		c.Kind = KindRatio
	case c.Range != nil:
		c.Kind = KindRange
	case c.Near != nil:
		c.Kind = KindNear
	case c.Crossover != nil:
		c.Kind = KindCrossover
	case c.Speedup != nil:
		c.Kind = KindSpeedup
	case c.Crash != nil:
		c.Kind = KindCrash
	case c.Order != nil:
		c.Kind = KindOrder
	}
	c.Params = maps.Clone(c.Params)
	return c
}

// Claim kinds, as Claim.Kind names them (the same names as the plugin
// SDK's).
const (
	KindRatio     = "ratio"
	KindRange     = "range"
	KindNear      = "near"
	KindCrossover = "crossover"
	KindSpeedup   = "speedup"
	KindCrash     = "crash"
	KindOrder     = "order"
)
