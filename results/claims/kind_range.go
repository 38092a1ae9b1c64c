package claims

import (
	"fmt"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/stats"
)

func init() { register(func(r *contract.RangeClaim) kind { return rangeKind{r: r} }) }

// rangeKind: a value against bounds, a share of two metrics, or an
// absolute time, decided only under icount against a calibration (Range,
// Share, kinds.go; Calibrated, calibrate.go).
type rangeKind struct {
	within
	r *contract.RangeClaim
}

func (k rangeKind) text() string {
	r := k.r
	what := r.Metric
	if r.ShareWith != "" {
		what = fmt.Sprintf("%s / (%s + %s) of each repeat", r.Metric, r.Metric, r.ShareWith)
	}
	unit := ""
	if r.Unit != "" && r.ShareWith == "" {
		unit = " " + r.Unit
	}
	how := "one-sample signed-rank against each bound; " + testWords
	if r.ShareWith == "" && results.IsTimeUnit(r.Unit) {
		how = "an absolute time: never decided under the host clock; under icount:N the instructions (time / 2^N ns) at the machine's calibrated instructions per ns give a predicted interval, decided only when the published band lies outside it (not reproduced) or holds it whole (reproduced)"
	}
	return fmt.Sprintf("%s %s%s%s (%s)", what, bounds(r.Min, r.Max), unit, seriesNote(r.Labels), how)
}

// minRepeats: a signed-rank test a bound and point.
func (k rangeKind) minRepeats(s *spec) int {
	n := 0
	if k.r.Min != nil {
		n++
	}
	if k.r.Max != nil {
		n++
	}
	return signedN(max(n, 1) * s.npoints())
}

// decide: a share of two metrics, a value against bounds, or an
// absolute time (never under the host clock; under icount against a
// calibration).
func (k rangeKind) decide(s *spec, st *stratum) Decision {
	r := k.r
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
