package plugins

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

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
// kind fields is set.
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
// Max is set), two metrics of one run.
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

// RangeClaim: Metric lies in [Min, Max] (in Unit); either bound may be
// left out.
type RangeClaim struct {
	Metric string            `json:"metric"`
	Min    *float64          `json:"min,omitempty"`
	Max    *float64          `json:"max,omitempty"`
	Unit   string            `json:"unit"`
	Labels map[string]string `json:"labels,omitempty"`
}

// NearClaim: Metric is Value +- Tolerance (in Unit).
type NearClaim struct {
	Metric    string            `json:"metric"`
	Value     float64           `json:"value"`
	Tolerance float64           `json:"tolerance"`
	Unit      string            `json:"unit"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// CrossoverClaim: the curves of First and Second over the sweep label
// Sweep cross at At +- Tolerance, or (None) nowhere in the sweep.
//
// A curve is its metric's samples whose labels include FirstLabels
// (SecondLabels). With FirstLowerBefore the crossing must also go that way:
// First below Second at the sweep's small end, above it after.
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
// factor in [Min, Max] (Max optional); decided across two runs.
type SpeedupClaim struct {
	Metric   string            `json:"metric"`
	Baseline string            `json:"baseline"`
	Profile  string            `json:"profile"`
	Min      float64           `json:"min"`
	Max      *float64          `json:"max,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
}

// CrashClaim: the run ends in the expected crash, its reason naming
// Signal, when parameter Param is at least From, and does not below it.
type CrashClaim struct {
	Signal string  `json:"signal"`
	Param  string  `json:"param"`
	From   float64 `json:"from"`
}

// OrderClaim: series of one metric told apart by label Label are ordered:
// every series Metric{Label=a} (a in Above) is greater than Min times
// every series Metric{Label=b} (b in Below), each pair decided with a
// Mann-Whitney U test. Both sides' series also carry Labels. E5's "fork
// per client costs far more server CPU than the pre-forked designs" is
// one: cpu_beyond_s, label design, above 1, below 2..5, min 5.
type OrderClaim struct {
	Metric string            `json:"metric"`
	Label  string            `json:"label"`
	Above  []string          `json:"above"`
	Below  []string          `json:"below"`
	Min    float64           `json:"min"`
	Labels map[string]string `json:"labels,omitempty"`
}

// Kind is the claim's kind (KindRatio...), "" when none is set.
func (c *Claim) Kind() string {
	kinds := c.kinds()
	if len(kinds) != 1 {
		return ""
	}
	return kinds[0]
}

func (c *Claim) kinds() []string {
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

// claimIDRE is what a claim id looks like: "E1.6", "mybench.3".
var claimIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// validate checks the claim against its experiment e: one kind, the
// metrics and parameters it names exist, bounds that can be decided.
func (c *Claim) validate(e *Experiment, where string) error {
	if !claimIDRE.MatchString(c.ID) {
		return fmt.Errorf("experiment %s: claim id %q: use letters, digits, '.', '-' and '_' (e.g. E1.6)", where, c.ID)
	}
	where = fmt.Sprintf("experiment %s: claim %s", where, c.ID)
	if c.Statement == "" || c.Source == "" {
		return fmt.Errorf("%s needs a statement and a source", where)
	}
	if k := c.kinds(); len(k) != 1 {
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
