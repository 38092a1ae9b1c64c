package claims

import (
	"math"
	"strings"
	"testing"

	"lab/plugins/contract"
	"lab/results"
)

// The interval arithmetic of docs/proposals/verdicts.md §4, on its own
// examples.
func TestPredicted(t *testing.T) {
	t.Parallel()
	// E1.7: 0.217 ms under icount:0 is 217,000 instructions; at the
	// claim's 0.4-2.1 instructions per ns that is 0.103-0.54 ms.
	instr := Instructions(0.217e6, 0)
	if math.Abs(instr-217000) > 1e-6 {
		t.Errorf("Instructions(0.217 ms, 0) = %v, want 217000", instr)
	}
	if got := Instructions(0.217e6, 3); math.Abs(got-217000/8.0) > 1e-6 {
		t.Errorf("Instructions(0.217 ms, 3) = %v, want 217000/8", got)
	}
	p := Predicted(Interval{instr, instr}, contract.Calibration{InstrPerNsLo: 0.4, InstrPerNsHi: 2.1})
	if math.Abs(p.Lo-103333) > 1 || math.Abs(p.Hi-542500) > 1 {
		t.Errorf("predicted %v ns, want [103333, 542500]", p)
	}
	// The fewest instructions at the fastest speed, the most at the
	// slowest.
	p = Predicted(Interval{100, 200}, contract.Calibration{InstrPerNsLo: 0.5, InstrPerNsHi: 2})
	if p != (Interval{50, 400}) {
		t.Errorf("predicted %v, want [50, 400]", p)
	}
}

func TestCompareCalibrated(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name            string
		band, predicted Interval
		verdict, how    string
	}{
		// E1.7 at celeron-2.4's 0.5-1.2: 0.181-0.434 ms against 0.175-0.185.
		{"E1.7 overlaps", Interval{0.175, 0.185}, Interval{0.181, 0.434}, results.NotComparable, "overlaps the predicted"},
		// E2's P4 fork+wait: 162.9 µs at 0.65-1.56 is 104-251 µs; 307.3 is slower.
		{"slower than predicted", Interval{307.25, 307.35}, Interval{104, 251}, results.NotReproduced, "slower than the whole predicted"},
		{"faster than predicted", Interval{10, 20}, Interval{104, 251}, results.NotReproduced, "faster than the whole predicted"},
		{"inside the band", Interval{50, 300}, Interval{104, 251}, results.Reproduced, "lies wholly inside the published"},
		{"open band", Interval{math.Inf(-1), 300}, Interval{104, 251}, results.Reproduced, "[-inf, 300]"},
		{"touching is not outside", Interval{251, 300}, Interval{104, 251}, results.NotComparable, ""},
	} {
		v, how := CompareCalibrated(tt.band, tt.predicted, "µs")
		if v != tt.verdict || !strings.Contains(how, tt.how) {
			t.Errorf("%s: %s (%s), want %s (%q)", tt.name, v, how, tt.verdict, tt.how)
		}
	}
}

func TestCalibrated(t *testing.T) {
	t.Parallel()
	cel := contract.Calibration{InstrPerNsLo: 0.5, InstrPerNsHi: 1.2, Basis: "clock x kernel IPC"}
	vals := valuesAt("", []float64{0.2169, 0.2171, 0.217, 0.217, 0.2172, 0.2168})
	lo, hi := 0.175, 0.185
	d := Calibrated(vals, 0, AbsoluteRule{Metric: "process_ms", Unit: "ms", Bounds: Bounds{&lo, &hi}}, cel, "celeron-2.4's")
	checkDecision(t, "E1.7", d, want{results.NotComparable, []string{"216800..217200 instructions", "0.5..1.2 instructions per ns",
		"celeron-2.4's calibration: clock x kernel IPC", "predicts [0.181, 0.434] ms", "cannot decide"}, nil})
	lo, hi = 0.9, 1.1
	d = Calibrated(vals, 0, AbsoluteRule{Metric: "process_ms", Unit: "ms", Bounds: Bounds{&lo, &hi}}, cel, "celeron-2.4's")
	checkDecision(t, "slower", d, want{results.NotReproduced, []string{"slower than the whole predicted"}, nil})
	lo, hi = 0.1, 0.5
	d = Calibrated(vals, 0, AbsoluteRule{Metric: "process_ms", Unit: "ms", Bounds: Bounds{&lo, &hi}}, cel, "celeron-2.4's")
	checkDecision(t, "inside", d, want{results.Reproduced, []string{"lies wholly inside"}, nil})
	// Under icount:1 each instruction is 2 ns: half the instructions.
	d = Calibrated(vals, 1, AbsoluteRule{Metric: "process_ms", Unit: "ms", Bounds: Bounds{&lo, &hi}}, cel, "celeron-2.4's")
	checkDecision(t, "icount:1", d, want{results.NotComparable, []string{"108400..108600 instructions"}, nil})
	d = Calibrated(nil, 0, AbsoluteRule{Metric: "process_ms", Unit: "ms", Bounds: Bounds{&lo, &hi}}, cel, "celeron-2.4's")
	checkDecision(t, "none", d, want{results.Inconclusive, []string{"no samples of process_ms"}, nil})
	// Times not above 0 decide nothing (issue 31: a stored -1 ms made
	// "slower than the whole predicted" impossible to trust): left out,
	// and said.
	lo, hi = 0.9, 1.1
	neg := valuesAt("", []float64{-1, -1, -1, -1, -1, -1})
	d = Calibrated(neg, 0, AbsoluteRule{Metric: "process_ms", Unit: "ms", Bounds: Bounds{&lo, &hi}}, cel, "celeron-2.4's")
	checkDecision(t, "negative", d, want{results.Inconclusive, []string{"6 samples of process_ms left out, a time not above 0", "no sample decides it"}, nil})
	d = Calibrated(append(neg[:1], vals...), 0, AbsoluteRule{Metric: "process_ms", Unit: "ms", Bounds: Bounds{&lo, &hi}}, cel, "celeron-2.4's")
	checkDecision(t, "one negative", d, want{results.NotReproduced, []string{"slower than the whole predicted", "1 sample left out, a time not above 0", "(6 samples"}, nil})
}
