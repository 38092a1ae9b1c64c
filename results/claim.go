package results

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
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

// The statistical rules, as the verdicts and docs/claims.md state them.
const (
	// Alpha is the significance level of every test.
	Alpha = 0.05
	// MinRankSamples: a two-sided Mann-Whitney U test cannot reach
	// p < 0.05 with fewer than 4 samples a side (3 and 3 give at best
	// p = 0.1; 4 and 4 give 0.029).
	MinRankSamples = 4
	// MinSignSamples: a two-sided exact sign test cannot reach p < 0.05
	// with fewer than 6 samples (5 give at best 0.0625; 6 give 0.031).
	MinSignSamples = 6

	RankRule = "two-sided Mann-Whitney U at alpha 0.05, which needs at least 4 samples a side"
	SignRule = "two-sided exact sign test against each bound at alpha 0.05, which needs at least 6 samples"
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

// Describe says in words how the claim is decided: its rule and the test.
func (c *Claim) Describe() string {
	switch {
	case c.Ratio != nil:
		r := c.Ratio
		return fmt.Sprintf("%s / %s %s%s, from one run's samples (%s)", seriesLabel(r.Numerator, r.NumeratorLabels),
			seriesLabel(r.Denominator, r.DenominatorLabels), factorBounds(r.Min, r.Max), seriesNote(r.Labels), RankRule)
	case c.Range != nil:
		r := c.Range
		return fmt.Sprintf("%s in %s %s%s (%s)%s", r.Metric, boundsText(r.Min, r.Max), r.Unit, seriesNote(r.Labels),
			SignRule, absoluteNote(r.Unit))
	case c.Near != nil:
		n := c.Near
		return fmt.Sprintf("%s within %s of %s %s, i.e. in %s..%s %s%s (%s)%s", n.Metric, FormatValue(n.Tolerance),
			FormatValue(n.Value), n.Unit, FormatValue(n.Value-n.Tolerance), FormatValue(n.Value+n.Tolerance), n.Unit,
			seriesNote(n.Labels), SignRule, absoluteNote(n.Unit))
	case c.Crossover != nil:
		x := c.Crossover
		where := "nowhere in the sweep"
		if x.At != nil {
			where = fmt.Sprintf("at %s +- %s", FormatValue(*x.At), FormatValue(x.Tolerance))
		}
		way := ""
		if x.FirstLowerBefore {
			way = fmt.Sprintf(", %s below before the crossing and above after it", seriesLabel(x.First, x.FirstLabels))
		}
		return fmt.Sprintf("the curves of %s and %s over %s cross %s%s; at each point which is larger by %s; the crossing interpolated linearly between the points where the order flips",
			seriesLabel(x.First, x.FirstLabels), seriesLabel(x.Second, x.SecondLabels), x.Sweep, where, way, RankRule)
	case c.Speedup != nil:
		s := c.Speedup
		return fmt.Sprintf("%s on %s / %s on %s %s%s, from the latest run of each in the result store (same experiment and parameters, same accelerator and clock; %s)",
			s.Metric, s.Baseline, s.Metric, s.Profile, factorBounds(s.Min, s.Max), seriesNote(s.Labels), RankRule)
	case c.Crash != nil:
		k := c.Crash
		return fmt.Sprintf("the run crashes (%s, outcome expected-crash) when %s >= %s and runs to the end below",
			k.Signal, k.Param, FormatValue(k.From))
	case c.Order != nil:
		o := c.Order
		return fmt.Sprintf("%s at %s=%s above %s times %s at %s=%s%s: every pair, from one run's samples (%s)",
			o.Metric, o.Label, strings.Join(o.Above, ","), FormatValue(o.Min), o.Metric, o.Label, strings.Join(o.Below, ","),
			seriesNote(o.Labels), RankRule)
	}
	return "no rule"
}

func factorBounds(lo float64, hi *float64) string {
	if hi == nil {
		return ">= " + FormatValue(lo)
	}
	return "in " + FormatValue(lo) + ".." + FormatValue(*hi)
}

func boundsText(lo, hi *float64) string {
	switch {
	case lo != nil && hi != nil:
		return FormatValue(*lo) + ".." + FormatValue(*hi)
	case lo != nil:
		return ">= " + FormatValue(*lo)
	case hi != nil:
		return "<= " + FormatValue(*hi)
	}
	return "any"
}

// seriesLabel is a metric with the labels picking one of its series:
// "real_s at mode=thread".
func seriesLabel(metric string, labels map[string]string) string {
	if len(labels) == 0 {
		return metric
	}
	return metric + " at " + FormatLabels(labels)
}

// merged is a with b's labels added (b wins), nil when both are empty.
func merged(a, b map[string]string) map[string]string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

func seriesNote(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	return " at " + FormatLabels(labels)
}

func absoluteNote(unit string) string {
	if !isTime(unit) {
		return ""
	}
	return "; an absolute time: decided only under an icount clock"
}

func isTime(unit string) bool {
	_, ok := timeUnits[unit]
	return ok
}

// ClockNote says what absolute times mean under a run's clock and
// accelerator, and whether they can be compared with a real machine's:
// under icount:N the guest's time is deterministic (one instruction =
// 2^N ns); under the host clock they are the speed of TCG's emulation
// (or, under KVM, of this host's CPU).
func ClockNote(m Machine) (string, bool) {
	if shift, ok := strings.CutPrefix(m.Clock, "icount:"); ok {
		if n, err := strconv.Atoi(shift); err == nil {
			return fmt.Sprintf("guest time deterministic, one instruction = 2^%d ns (clock %s)", n, m.Clock), true
		}
	}
	if m.Accelerator == "kvm" {
		return "under KVM with the host clock absolute times are this host's CPU speed, not the original machine's", false
	}
	return "under " + orUnknown(m.Accelerator) + " with the " + orUnknown(m.Clock) +
		" clock absolute times are emulation speed; run with --clock icount:N to decide it", false
}

// Judge decides every claim of the run's experiment and records the
// verdicts in r. store holds other stored runs (newest first), from which
// a speedup takes its other run; it may be nil.
func (r *Result) Judge(claims []Claim, store []*Result) {
	r.Verdicts = nil
	for i := range claims {
		if claims[i].Plugin != "" && claims[i].Plugin != r.Plugin || claims[i].Bench != "" && claims[i].Bench != r.Experiment {
			continue
		}
		r.Verdicts = append(r.Verdicts, Decide(&claims[i], r, store))
	}
}

// Decide applies claim c's rule to run r (and for a speedup to the latest
// matching run of store).
func Decide(c *Claim, r *Result, store []*Result) Verdict {
	v := decide(c, r, store)
	v.Claim, v.Kind, v.Statement = c.ID, c.Kind, c.Statement
	if v.Rule == "" {
		v.Rule = c.Describe()
	}
	if v.Decided() && len(v.Runs) == 0 && r.ID != "" {
		v.Runs = []string{r.ID}
	}
	if v.Decided() && c.Profile != "" && c.Kind != KindSpeedup {
		switch p := ProfileName(r.Machine); {
		case p == c.Profile:
		case FiguresProfile(r.Machine) == c.Profile:
			v.Note = joinNote(v.Note, fmt.Sprintf("ran on profile %s: %s's machine on another kernel (%s)", p, c.Profile, orUnknown(r.Machine.KernelID)))
		default:
			v.Note = joinNote(v.Note, fmt.Sprintf("ran on profile %s, not %s (the profile standing for the claim's machine)", orUnknown(p), c.Profile))
		}
	}
	return v
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func decide(c *Claim, r *Result, store []*Result) Verdict {
	for _, k := range sortedKeys(c.Params) {
		if got := r.Parameters[k]; got != c.Params[k] {
			return Verdict{Verdict: NotRun, Reason: fmt.Sprintf("decided only by runs with %s; this run had %s=%s",
				FormatLabels(c.Params), k, orUnknown(got))}
		}
	}
	if c.Kind == KindCrash {
		return decideCrash(c.Crash, r)
	}
	if r.Outcome.Status == "failed" {
		return Verdict{Verdict: Inconclusive, Reason: "the run failed (" + r.Outcome.Reason + "); its samples decide nothing"}
	}
	if r.Outcome.Status == StatusInterrupted {
		return Verdict{Verdict: Inconclusive, Reason: "the run was interrupted (" + r.Outcome.Reason + "); its samples decide nothing"}
	}
	switch c.Kind {
	case KindRatio:
		q := c.Ratio
		x := r.values(q.Numerator, merged(q.Labels, q.NumeratorLabels))
		y := r.values(q.Denominator, merged(q.Labels, q.DenominatorLabels))
		return factorVerdict(seriesLabel(q.Numerator, q.NumeratorLabels), seriesLabel(q.Denominator, q.DenominatorLabels), x, y, q.Min, q.Max)
	case KindRange:
		return r.rangeVerdict(c.Range.Metric, c.Range.Labels, c.Range.Unit, c.Range.Min, c.Range.Max)
	case KindNear:
		n := c.Near
		lo, hi := n.Value-n.Tolerance, n.Value+n.Tolerance
		v := r.rangeVerdict(n.Metric, n.Labels, n.Unit, &lo, &hi)
		v.Numbers = append(v.Numbers, Number{Name: "published", Value: n.Value, Unit: n.Unit})
		return v
	case KindCrossover:
		return crossoverVerdict(c.Crossover, r)
	case KindSpeedup:
		return speedupVerdict(c.Speedup, r, store)
	case KindOrder:
		return orderVerdict(c.Order, r)
	}
	return Verdict{Verdict: Inconclusive, Reason: fmt.Sprintf("claim %s has no rule lab knows (kind %q); upgrade lab", c.ID, c.Kind)}
}

// Values returns the samples of one series of r: metric with exactly
// these labels.
func (r *Result) Values(metric string, labels map[string]string) []float64 {
	return r.values(metric, labels)
}

// values returns the samples of one series of r: metric with exactly
// these labels.
func (r *Result) values(metric string, labels map[string]string) []float64 {
	var out []float64
	key := labelKey(labels)
	for _, s := range r.Samples {
		if s.Metric == metric && labelKey(s.Labels) == key {
			out = append(out, s.Value)
		}
	}
	return out
}

func (r *Result) unitOf(metric string) string {
	for _, s := range r.Samples {
		if s.Metric == metric {
			return s.Unit
		}
	}
	return ""
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
