package claims

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/stats"
)

// The evidence of a claim in one stratum, as its kind takes it. Every
// value is keyed (Key): Run is the unit's key (the run's id, plus the
// point's labels other than the claim's sweep key), Point the value of
// the claim's sweep key (from the sample's labels, else the parameters
// the point ran with), Repeat the sample's repeat. Pairs are built by
// key. A series is a metric with exactly the labels the rule names, the
// sweep point's labels and the claim's sweep key aside (a crossover's
// curves: at least those labels). A kind that tests several series
// (an equivalence or a ratio of differences by label) puts the series
// in the Point too, so each is tested apart.

// sample is one value of a series, with its unit of measure.
type sample struct {
	Value
	unit string
}

// ignorable says whether label k of a sample of u may be left out of a
// series' labels: a sweep point's label, the claim's sweep key.
func (s *spec) ignorable(u *unit, k string) bool {
	if _, ok := u.labels[k]; ok {
		return true
	}
	return k == s.pointKey || k == s.sweep().Key
}

// samples are the values of series metric{want} in units, sorted by key
// (then value). superset takes samples with at least the labels want.
func (s *spec) samples(us []*unit, metric string, want map[string]string, superset bool) []sample {
	var out []sample
	for _, u := range us {
	next:
		for _, smp := range u.run.Samples {
			if smp.Metric != metric || !results.HasLabels(smp.Labels, u.labels) || !results.HasLabels(smp.Labels, want) {
				continue
			}
			if !superset {
				for k := range smp.Labels {
					if _, named := want[k]; !named && !s.ignorable(u, k) {
						continue next
					}
				}
			}
			pt, ok := s.pointOf(u, smp.Labels)
			if !ok {
				continue
			}
			out = append(out, sample{Value{Key{Run: u.key, Point: pt, Repeat: smp.Repeat}, smp.Value}, smp.Unit})
		}
	}
	slices.SortFunc(out, func(a, b sample) int { return cmp.Or(compareKeys(a.Key, b.Key), cmp.Compare(a.X, b.X)) })
	return out
}

// pointOf is a sample's value of the claim's sweep key, and false when
// its value of the scope's sweep key is not one of the scope's points.
func (s *spec) pointOf(u *unit, labels map[string]string) (string, bool) {
	if k := s.sweep().Key; k != "" {
		if v, ok := labels[k]; ok && s.pointOut(v) != "" {
			return "", false
		}
	}
	if s.pointKey == "" {
		return "", true
	}
	if v, ok := labels[s.pointKey]; ok {
		return v, true
	}
	return u.params[s.pointKey], true
}

// values are the samples' values.
func values(ss []sample) []Value {
	out := make([]Value, len(ss))
	for i, x := range ss {
		out[i] = x.Value
	}
	return out
}

// series is values of metric{labels} in units.
func (s *spec) series(us []*unit, metric string, labels map[string]string) []Value {
	return values(s.samples(us, metric, labels, false))
}

// merge is the labels of every map, later ones winning.
func merge(ls ...map[string]string) map[string]string {
	var out map[string]string
	for _, l := range ls {
		out = results.MergeLabels(out, l)
	}
	return out
}

// withPoint puts a series' name before each value's point: "design=2"
// alone, or "design=2 at count=5".
func (s *spec) withPoint(name string, vs []Value) []Value {
	out := slices.Clone(vs)
	for i := range out {
		if p := out[i].Point; p != "" {
			out[i].Point = name + " at " + s.pointKey + "=" + p
		} else {
			out[i].Point = name
		}
	}
	return out
}

// pointsOf are the values of the claim's sweep key that units hold
// evidence at, sorted: where they have samples (a crash claim's: where
// they ran).
func (s *spec) pointsOf(us []*unit) []string {
	seen := map[string]bool{}
	for _, u := range us {
		if s.c.Crash != nil && u.point != "" {
			seen[u.point] = true
		}
		for _, smp := range u.run.Samples {
			if !results.HasLabels(smp.Labels, u.labels) {
				continue
			}
			if v, in := s.pointOf(u, smp.Labels); in && v != "" {
				seen[v] = true
			}
		}
	}
	return slices.SortedFunc(maps.Keys(seen), comparePoints)
}

// lowerBound is a rule's min as a bound: none when it is 0 (a rule with
// only a max).
func lowerBound(min float64, max *float64) Bounds {
	b := Bounds{Max: max}
	if min != 0 {
		b.Min = &min
	}
	return b
}

// decideKind applies the claim's rule to the evidence of one stratum:
// units, or for a kind across profiles, base and other (the baseline's
// units and the other profile's).
func (s *spec) decideKind(st *stratum) Decision {
	c, us := s.c, st.units
	switch {
	case c.Ratio != nil:
		r := c.Ratio
		num := s.series(us, r.Numerator, merge(r.Labels, r.NumeratorLabels))
		den := s.series(us, r.Denominator, merge(r.Labels, r.DenominatorLabels))
		return Ratio(pairUp(num, den), RatioRule{Num: results.SeriesLabel(r.Numerator, r.NumeratorLabels),
			Den: results.SeriesLabel(r.Denominator, r.DenominatorLabels), Bounds: lowerBound(r.Min, r.Max)})
	case c.Range != nil:
		return s.decideRange(st)
	case c.Crossover != nil:
		x := c.Crossover
		first := values(s.samples(us, x.First, x.FirstLabels, true))
		second := values(s.samples(us, x.Second, x.SecondLabels, true))
		return Crossover(pairUp(first, second), CrossoverRule{First: results.SeriesLabel(x.First, x.FirstLabels),
			Second: results.SeriesLabel(x.Second, x.SecondLabels), Sweep: x.Sweep, Band: [2]float64{x.BandStart, x.BandEnd},
			NotAbove: x.Before == contract.BeforeNotAbove, Margin: x.Margin})
	case c.Speedup != nil:
		sp := c.Speedup
		return Speedup(s.series(st.base, sp.Metric, sp.Labels), s.series(st.other, sp.Metric, sp.Labels),
			SpeedupRule{Metric: sp.Metric, Base: sp.Baseline, Fast: sp.Profile, Bounds: lowerBound(sp.Min, sp.Max)})
	case c.Crash != nil:
		return s.decideCrash(us)
	case c.Order != nil:
		o := c.Order
		rule := OrderRule{Label: o.Label, Above: o.Above, Below: o.Below, Min: o.Min}
		for _, p := range o.Pairs {
			rule.Pairs = append(rule.Pairs, [2]string{p.Above, p.Below})
		}
		vals := map[string][]Value{}
		for _, ab := range rule.pairs() {
			for _, v := range ab {
				if _, ok := vals[v]; !ok {
					vals[v] = s.series(us, o.Metric, merge(o.Labels, map[string]string{o.Label: v}))
				}
			}
		}
		return Order(vals, rule)
	case c.Equivalence != nil:
		return s.decideEquivalence(st)
	case c.DiffRatio != nil:
		d := c.DiffRatio
		at := func(v string) []Value { return s.series(us, d.Metric, merge(d.Labels, map[string]string{d.Label: v})) }
		a, z := at(d.Numerator), at(d.Baseline)
		var rows []DiffRow
		for _, k := range d.Denominators {
			rows = append(rows, rowsOf(s.withPoint(d.Label+"="+k, a), s.withPoint(d.Label+"="+k, at(k)), s.withPoint(d.Label+"="+k, z))...)
		}
		series := func(v string) string { return fmt.Sprintf("%s{%s=%s}", d.Metric, d.Label, v) }
		return DiffRatio(rows, DiffRatioRule{A: series(d.Numerator), B: series("K"), Z: series(d.Baseline), Factor: d.Factor})
	case c.Trend != nil:
		t := c.Trend
		num := s.series(us, t.Numerator, merge(t.Labels, t.NumeratorLabels))
		den := s.series(us, t.Denominator, merge(t.Labels, t.DenominatorLabels))
		return Trend(pairUp(num, den), TrendRule{A: results.SeriesLabel(t.Numerator, t.NumeratorLabels),
			B: results.SeriesLabel(t.Denominator, t.DenominatorLabels), Param: t.Sweep, Margin: t.Margin})
	}
	return Decision{Verdict: results.Inconclusive, Reason: fmt.Sprintf("claim %s has no rule this lab knows (kind %q); upgrade lab", c.ID, c.Kind)}
}

// rowsOf are the repeats with all of a, b and z, by key.
func rowsOf(a, b, z []Value) []DiffRow {
	bs, zs := map[Key]float64{}, map[Key]float64{}
	for _, v := range b {
		bs[v.Key] = v.X
	}
	for _, v := range z {
		zs[v.Key] = v.X
	}
	var out []DiffRow
	for _, v := range a {
		bv, ok1 := bs[v.Key]
		zv, ok2 := zs[v.Key]
		if ok1 && ok2 {
			out = append(out, DiffRow{Key: v.Key, A: v.X, B: bv, Z: zv})
		}
	}
	return out
}

// decideEquivalence is an equivalence, paired within runs or between two
// profiles, of one pair of series or of each numerator and denominator
// value of a label.
func (s *spec) decideEquivalence(st *stratum) Decision {
	e := s.c.Equivalence
	type sides struct {
		name     string
		num, den map[string]string
	}
	var all []sides
	if e.Label == "" {
		all = []sides{{"", merge(e.Labels, e.NumeratorLabels), merge(e.Labels, e.DenominatorLabels)}}
	}
	for _, n := range e.Numerators {
		for _, d := range e.Denominators {
			if e.Label != "" {
				all = append(all, sides{fmt.Sprintf("%s=%s / %s=%s", e.Label, n, e.Label, d),
					merge(e.Labels, e.NumeratorLabels, map[string]string{e.Label: n}), merge(e.Labels, e.DenominatorLabels, map[string]string{e.Label: d})})
			}
		}
	}
	rule := EquivalenceRule{Num: results.SeriesLabel(e.Numerator, e.NumeratorLabels), Den: results.SeriesLabel(e.Denominator, e.DenominatorLabels),
		Margin: e.Margin, Lower: e.Sides == contract.SidesLower}
	named := func(name string, vs []Value) []Value {
		if name == "" {
			return vs
		}
		return s.withPoint(name, vs)
	}
	if s.across {
		rule.Num += " on " + e.Profile
		rule.Den += " on " + e.Baseline
		var num, den []Value
		for _, x := range all {
			num = append(num, named(x.name, s.series(st.other, e.Numerator, x.num))...)
			den = append(den, named(x.name, s.series(st.base, e.Denominator, x.den))...)
		}
		return EquivalenceUnpaired(num, den, rule)
	}
	var pairs []Pair
	for _, x := range all {
		pairs = append(pairs, pairUp(named(x.name, s.series(st.units, e.Numerator, x.num)), named(x.name, s.series(st.units, e.Denominator, x.den)))...)
	}
	return Equivalence(pairs, rule)
}

// decideRange is a range: a share of two metrics, a value against
// bounds, or an absolute time (never under the host clock; under icount
// against a calibration).
func (s *spec) decideRange(st *stratum) Decision {
	r := s.c.Range
	b := Bounds{Min: r.Min, Max: r.Max}
	if r.ShareWith != "" {
		of := s.series(st.units, r.Metric, r.Labels)
		rest := map[Key]float64{}
		for _, v := range s.series(st.units, r.ShareWith, r.Labels) {
			rest[v.Key] = v.X
		}
		var parts []Part
		for _, v := range of {
			if x, ok := rest[v.Key]; ok {
				parts = append(parts, Part{Key: v.Key, Of: v.X, Rest: x})
			}
		}
		return Share(parts, RangeRule{Metric: fmt.Sprintf("%s / (%s + %s)", r.Metric, r.Metric, r.ShareWith), Bounds: b})
	}
	ss := s.samples(st.units, r.Metric, r.Labels, false)
	// The bounds' unit; a claim that gives none is in the samples'.
	unit := r.Unit
	if unit == "" && len(ss) > 0 {
		unit = ss[0].unit
	}
	var vals []Value
	for _, x := range ss {
		v, ok := results.ConvertUnit(x.X, x.unit, unit)
		if !ok {
			return Decision{Verdict: results.Inconclusive, Reason: fmt.Sprintf("the claim's bounds are in %s, the samples of %s in %s: not convertible", unit, r.Metric, x.unit)}
		}
		vals = append(vals, Value{Key: x.Key, X: v})
	}
	if !results.IsTimeUnit(unit) {
		linear := r.Min != nil && *r.Min <= 0 || r.Max != nil && *r.Max <= 0
		return Range(vals, RangeRule{Metric: r.Metric, Bounds: b, Linear: linear})
	}
	shift, icount := icountShift(st.clock)
	if !icount {
		what := "TCG's speed"
		if st.accel == "kvm" {
			what = "this host's CPU speed"
		}
		d := Decision{Verdict: results.NotComparable, Need: 1,
			Reason: fmt.Sprintf("under the %s clock an absolute time is %s, not the machine's: never comparable (decided only under icount against a calibration)", results.OrUnknown(st.clock), what)}
		if len(vals) > 0 {
			med := stats.Median(xs(vals))
			d.Reason = fmt.Sprintf("median %s %s %s; %s", r.Metric, results.FormatValue(med), unit, d.Reason)
			d.Numbers = []results.Number{{Name: "median " + r.Metric, Value: med, Unit: unit}}
		}
		return d
	}
	cal, source := s.calibration(st.profile)
	if cal == nil {
		return Decision{Verdict: results.NotComparable, Need: 1,
			Reason: fmt.Sprintf("profile %s has no calibration (instructions per ns of its machine), so an absolute time under %s is not comparable", st.profile, st.clock)}
	}
	d := Calibrated(vals, shift, AbsoluteRule{Metric: r.Metric, Unit: unit, Bounds: b}, *cal, source)
	if why, ok := s.oneWay(); ok && d.Verdict == results.NotComparable {
		d.Reason += "; it " + why
	}
	return d
}

// calibration is the speed of the machine a claim's absolute times on
// profile p are compared with: the claim's own, else the profile's,
// else (a variant) its base's; and whose it is.
func (s *spec) calibration(p string) (*contract.Calibration, string) {
	if s.c.Calibration != nil {
		return s.c.Calibration, "the claim's"
	}
	info := s.profiles[p]
	if info.Calibration != nil {
		return info.Calibration, p + "'s"
	}
	if b := info.VariantOf; b != "" && s.profiles[b].Calibration != nil {
		return s.profiles[b].Calibration, b + "'s (the machine of its variant " + p + ")"
	}
	return nil, ""
}

// signalWords are what a crash reason may say instead of a signal's name.
var signalWords = map[string]string{
	"SIGSEGV": "segmentation fault", "SIGBUS": "bus error", "SIGABRT": "abort", "SIGFPE": "floating point",
	"SIGKILL": "killed", "SIGILL": "illegal instruction",
}

var signalRE = regexp.MustCompile(`\bSIG[A-Z0-9]+\b`)

// signalOf is the signal a crash's reason and stderr name: a SIGxxx
// name, or the words a libc prints for one; "unnamed" if neither.
func signalOf(o string) string {
	if m := signalRE.FindString(strings.ToUpper(o)); m != "" {
		return m
	}
	low := strings.ToLower(o)
	for _, sig := range slices.Sorted(maps.Keys(signalWords)) {
		if strings.Contains(low, signalWords[sig]) {
			return sig
		}
	}
	return "unnamed"
}

// MetricCrashed is the sample a crashing experiment records a repeat:
// 1 when it crashed (label signal names the signal), 0 when it ran to
// the end.
const MetricCrashed = "crashed"

// repeatOutcomes are unit u's outcomes a repeat, from its crashed
// samples; none when it has none.
func (s *spec) repeatOutcomes(u *unit) []Outcome {
	var out []Outcome
	for _, smp := range u.run.Samples {
		if smp.Metric != MetricCrashed || !results.HasLabels(smp.Labels, u.labels) {
			continue
		}
		o := Outcome{Run: fmt.Sprintf("%s repeat %d", u.key, smp.Repeat), Point: u.params[s.c.Crash.Param]}
		if smp.Value != 0 {
			o.Signal = cmp.Or(smp.Labels["signal"], "unnamed")
		}
		out = append(out, o)
	}
	return out
}

// decideCrash is a crash claim: each unit's outcome at its value of the
// claim's parameter.
func (s *spec) decideCrash(us []*unit) Decision {
	k := s.c.Crash
	var outs []Outcome
	for _, u := range us {
		status, reason, tail := u.run.Outcome.Status, u.run.Outcome.Reason, u.run.Outcome.StderrTail
		if u.run.Sweep != nil {
			for _, p := range u.run.Sweep.Points {
				if maps.Equal(p.Labels, u.labels) {
					status, reason, tail = p.Status, p.Reason, p.StderrTail
				}
			}
		}
		// A run that says how each repeat ended (the sample crashed, 1
		// with its signal as a label, or 0) is an outcome a repeat, so a
		// point that crashes in some repeats and not others is flaky.
		if rs := s.repeatOutcomes(u); len(rs) > 0 {
			outs = append(outs, rs...)
			continue
		}
		o := Outcome{Run: u.key, Point: u.params[k.Param]}
		if status == contract.StatusExpectedCrash {
			o.Signal = signalOf(reason + " " + tail)
		}
		outs = append(outs, o)
	}
	rule := CrashRule{Param: k.Param, Signal: k.Signal, From: k.From, Never: k.Never}
	if sw := s.sweep(); sw.Key == k.Param {
		rule.Required = sw.Required
	}
	return Crash(outs, rule)
}

// stratum is the evidence of one profile (or for a kind across profiles,
// one pair of profiles), clock and accelerator.
type stratum struct {
	profile, clock, accel, build string
	// units are every unit of the stratum; base and other, an across
	// kind's two sides.
	units, base, other []*unit
	// profiles are the profiles the units ran on, sorted.
	profiles []string
}

// strata splits units into strata, sorted by profile, clock and
// accelerator. For a kind across profiles a stratum is a clock and an
// accelerator with the two profiles' units (each profile's variants,
// with Scope.Variants, in a stratum of their own).
func (s *spec) strata(units []*unit) []*stratum {
	by := map[[4]string]*stratum{}
	var keys [][4]string
	for _, u := range units {
		k := [4]string{u.profile, u.clock, u.accel, u.build}
		variant := false
		if s.across {
			_, variant = s.side(u.profile)
			k[0] = fmt.Sprint(variant)
		}
		st := by[k]
		if st == nil {
			st = &stratum{profile: u.profile, clock: u.clock, accel: u.accel, build: u.build}
			by[k] = st
			keys = append(keys, k)
		}
		st.units = append(st.units, u)
		if !slices.Contains(st.profiles, u.profile) {
			st.profiles = append(st.profiles, u.profile)
			slices.Sort(st.profiles)
		}
		if s.across {
			if side, _ := s.side(u.profile); side == s.base {
				st.base = append(st.base, u)
			} else {
				st.other = append(st.other, u)
			}
		}
	}
	var out []*stratum
	for _, k := range keys {
		st := by[k]
		if s.across {
			st.profile = sideNames(st.base, s.base) + " vs " + sideNames(st.other, s.other)
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b *stratum) int {
		return cmp.Or(cmp.Compare(a.profile, b.profile), cmp.Compare(a.clock, b.clock), cmp.Compare(a.accel, b.accel), cmp.Compare(a.build, b.build))
	})
	return out
}

// sideNames names the profiles of one side of an across stratum: its
// units' profiles, or the rule's profile when it has none.
func sideNames(us []*unit, rule string) string {
	var names []string
	for _, u := range us {
		if !slices.Contains(names, u.profile) {
			names = append(names, u.profile)
		}
	}
	if len(names) == 0 {
		return rule
	}
	slices.Sort(names)
	return strings.Join(names, "+")
}

// runs are the ids of the runs of units, sorted, once each.
func runIDs(us []*unit) []string {
	var ids []string
	for _, u := range us {
		ids = append(ids, u.run.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// kernel is the kernel the units ran, "" if they differ.
func kernelOf(us []*unit) string {
	var ks []string
	for _, u := range us {
		ks = append(ks, u.kernel)
	}
	slices.Sort(ks)
	if ks = slices.Compact(ks); len(ks) == 1 {
		return ks[0]
	}
	return ""
}
