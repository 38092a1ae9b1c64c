package claims

import (
	"fmt"
	"math"
	"slices"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/stats"
)

// Absolute times under icount (docs/proposals/verdicts.md §4). Under
// icount:N a guest time of T ns is I = T / 2^N instructions, whatever
// they cost on a real machine; a calibration says how many instructions
// per ns the machine a profile stands for plausibly ran (an interval,
// [k_lo, k_hi]), so the real time our instruction count predicts is the
// interval [I_lo / k_hi, I_hi / k_lo]. A published figure is decided
// only against the whole of that interval.

// Interval is a closed interval of numbers.
type Interval struct {
	Lo, Hi float64
}

func (iv Interval) String() string {
	lo, hi := "-inf", "+inf"
	if !math.IsInf(iv.Lo, 0) {
		lo = results.FormatValue(iv.Lo)
	}
	if !math.IsInf(iv.Hi, 0) {
		hi = results.FormatValue(iv.Hi)
	}
	return "[" + lo + ", " + hi + "]"
}

// Instructions is the number of guest instructions a time of ns
// nanoseconds stands for under icount:shift.
func Instructions(ns float64, shift int) float64 {
	return ns / math.Exp2(float64(shift))
}

// Predicted is the real time in ns that instr instructions (an interval:
// the least and the most of the samples) take on a machine running
// [cal.InstrPerNsLo, cal.InstrPerNsHi] instructions per ns: the fewest
// instructions at the fastest speed to the most at the slowest.
func Predicted(instr Interval, cal contract.Calibration) Interval {
	return Interval{Lo: instr.Lo / cal.InstrPerNsHi, Hi: instr.Hi / cal.InstrPerNsLo}
}

// CompareCalibrated decides a published band against the predicted
// interval (both in one unit): not reproduced when the band lies wholly
// outside the interval, reproduced when the interval lies wholly inside
// the band, else not comparable. how says which, with the direction.
func CompareCalibrated(band, predicted Interval, unit string) (verdict, how string) {
	u := ""
	if unit != "" {
		u = " " + unit
	}
	switch {
	case band.Hi < predicted.Lo:
		return results.NotReproduced, fmt.Sprintf("the published %s%s is faster than the whole predicted %s%s", band, u, predicted, u)
	case band.Lo > predicted.Hi:
		return results.NotReproduced, fmt.Sprintf("the published %s%s is slower than the whole predicted %s%s", band, u, predicted, u)
	case band.Lo <= predicted.Lo && predicted.Hi <= band.Hi:
		return results.Reproduced, fmt.Sprintf("the predicted %s%s lies wholly inside the published %s%s", predicted, u, band, u)
	}
	return results.NotComparable, fmt.Sprintf("the published %s%s overlaps the predicted %s%s", band, u, predicted, u)
}

// AbsoluteRule is a range on an absolute time, in Unit.
type AbsoluteRule struct {
	Metric, Unit string
	Bounds
}

// Calibrated decides an absolute time measured under icount:shift
// (values in the rule's unit) against a calibration; source says whose
// calibration it is ("celeron-2.4's", "the claim's"). The instruction
// interval is the least and the most of the samples (under icount the
// repeats differ by a few parts in ten thousand, so this is the median
// to the precision that matters, and never narrower than the evidence).
func Calibrated(values []Value, shift int, r AbsoluteRule, cal contract.Calibration, source string) Decision {
	// A time is above 0: a value that is not has no instruction count
	// and decides nothing (a stored file can hold one).
	var dropped []Value
	values = slices.DeleteFunc(slices.Clone(values), func(v Value) bool {
		if v.X > 0 {
			return false
		}
		dropped = append(dropped, v)
		return true
	})
	if len(dropped) > 0 && len(values) == 0 {
		d := dropped[0]
		return Decision{Verdict: results.Inconclusive, Need: 1, Reason: fmt.Sprintf("%d %s of %s left out, a time not above 0 (first: run %s repeat %d: %s %s); no sample decides it",
			len(dropped), plural(len(dropped), "sample", "samples"), r.Metric, d.Run, d.Repeat, results.FormatValue(d.X), r.Unit)}
	}
	if len(values) == 0 {
		return noEvidence("samples of "+r.Metric, 1, "run it under --clock icount:0")
	}
	toNs, ok := results.ConvertUnit(1, r.Unit, "ns")
	if !ok {
		return Decision{Verdict: results.Inconclusive, Reason: fmt.Sprintf("%s is in %s, not a time unit", r.Metric, r.Unit)}
	}
	x := xs(values)
	med, lo, hi := stats.Median(x), slices.Min(x), slices.Max(x)
	instr := Interval{Lo: Instructions(lo*toNs, shift), Hi: Instructions(hi*toNs, shift)}
	pred := Predicted(instr, cal)
	pred = Interval{Lo: pred.Lo / toNs, Hi: pred.Hi / toNs}
	band := Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}
	if r.Min != nil {
		band.Lo = *r.Min
	}
	if r.Max != nil {
		band.Hi = *r.Max
	}
	verdict, how := CompareCalibrated(band, pred, r.Unit)
	reason := fmt.Sprintf("median %s %s %s under icount:%d (%d samples, %s..%s) = %s..%s instructions; at %s..%s instructions per ns (%s calibration: %s) that predicts %s %s on the real machine: %s",
		r.Metric, results.FormatValue(med), r.Unit, shift, len(x), results.FormatValue(lo), results.FormatValue(hi),
		results.FormatValue(instr.Lo), results.FormatValue(instr.Hi), results.FormatValue(cal.InstrPerNsLo), results.FormatValue(cal.InstrPerNsHi),
		source, cal.Basis, pred, r.Unit, how)
	if verdict == results.NotComparable {
		reason += ", so the calibration cannot decide it"
	}
	if len(dropped) > 0 {
		reason += fmt.Sprintf("; %d %s left out, a time not above 0", len(dropped), plural(len(dropped), "sample", "samples"))
	}
	return Decision{Verdict: verdict, Reason: reason, Need: 1, Numbers: []results.Number{
		{Name: "median " + r.Metric, Value: med, Unit: r.Unit},
		{Name: "instructions, least", Value: instr.Lo}, {Name: "instructions, most", Value: instr.Hi},
		{Name: "instructions per ns, low", Value: cal.InstrPerNsLo}, {Name: "instructions per ns, high", Value: cal.InstrPerNsHi},
		{Name: "predicted real time, low", Value: pred.Lo, Unit: r.Unit}, {Name: "predicted real time, high", Value: pred.Hi, Unit: r.Unit},
	}}
}

// oneWay says why an absolute-time claim can never be reproduced here:
// the predicted interval is at least the calibration's spread wide
// (InstrPerNsHi / InstrPerNsLo), so when that is wider than the band
// (Max / Min) no count of instructions predicts an interval inside it.
// Only a time whose whole predicted interval misses the band decides,
// and it refutes.
func (s *spec) oneWay() (string, bool) {
	r := s.c.Range
	if r == nil || r.Min == nil || r.Max == nil || *r.Min <= 0 || !results.IsTimeUnit(r.Unit) || s.c.Scope == nil || len(s.c.Scope.Profiles) == 0 {
		return "", false
	}
	cal, source := s.calibration(s.c.Scope.Profiles[0])
	if cal == nil || cal.InstrPerNsLo <= 0 {
		return "", false
	}
	spread, band := cal.InstrPerNsHi/cal.InstrPerNsLo, *r.Max / *r.Min
	if spread <= band {
		return "", false
	}
	return fmt.Sprintf("can never be reproduced here: the published [%s, %s] %s is %.3gx wide and %s calibration (%s..%s instructions per ns) %.3gx, "+
		"so no instruction count predicts a time inside it; a time whose whole predicted interval misses it would refute it",
		results.FormatValue(*r.Min), results.FormatValue(*r.Max), r.Unit, band, source,
		results.FormatValue(cal.InstrPerNsLo), results.FormatValue(cal.InstrPerNsHi), spread), true
}
