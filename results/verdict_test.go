package results

import (
	"slices"
	"strings"
	"testing"

	"lab/plugins/contract"
)

// TestDependent: the headline of strata decided both ways names the axes
// they differ in, and every such verdict is in VerdictOrder.
func TestDependent(t *testing.T) {
	for _, tt := range []struct {
		axes []string
		want string
	}{
		{[]string{AxisClock}, ClockDependent},
		{[]string{AxisKernel}, KernelDependent},
		{[]string{AxisKernel, AxisClock}, ClockKernelDependent},
		{[]string{AxisConsole}, ConsoleDependent},
		{[]string{AxisConsole, AxisClock, AxisKernel}, "clock-, console- and kernel-dependent"},
		{[]string{AxisConsole, AxisConsole}, "console-dependent"},
	} {
		got := Dependent(tt.axes...)
		if got != tt.want || !IsDependent(got) || !slices.Contains(VerdictOrder, got) {
			t.Errorf("Dependent(%v) = %q (dependent %v, in VerdictOrder %v), want %q", tt.axes, got, IsDependent(got), slices.Contains(VerdictOrder, got), tt.want)
		}
	}
	for _, v := range []string{Reproduced, NotReproduced, Inconclusive, NotComparable, Untestable, NotRun} {
		if IsDependent(v) {
			t.Errorf("IsDependent(%q)", v)
		}
	}
}

// TestMeasuredParamsDefaultBuild: a run of the default build is the cell
// (and benchmark name) it was before builds existed, so its history and
// benchstat comparisons go on; another build is a cell of its own.
func TestMeasuredParamsDefaultBuild(t *testing.T) {
	got := MeasuredParams(map[string]string{"n": "200", "repeat": "4", contract.ParamBuild: contract.DefaultBuild})
	if len(got) != 1 || got["n"] != "200" {
		t.Errorf("MeasuredParams with the default build = %v, want only n", got)
	}
	got = MeasuredParams(map[string]string{"n": "200", contract.ParamBuild: "dynamic-O0"})
	if len(got) != 2 || got[contract.ParamBuild] != "dynamic-O0" {
		t.Errorf("MeasuredParams with build dynamic-O0 = %v, want it kept", got)
	}
}

// TestVerdictMeanings: every verdict has its letter, which LetterKey
// explains, and its class; decided is anything but inconclusive and not
// run, judged anything but not run.
func TestVerdictMeanings(t *testing.T) {
	type meaning struct {
		letter         string
		class          Class
		decided, judge bool
	}
	want := map[string]meaning{
		Reproduced:    {"R", ClassPassed, true, true},
		NotReproduced: {"N", ClassFailed, true, true},
		Inconclusive:  {"I", ClassUnsure, false, true},
		NotComparable: {"C", ClassNotComparable, true, true},
		Untestable:    {"U", ClassNotComparable, true, true},
		NotRun:        {"-", ClassNone, false, false},
		"":            {"-", ClassNone, false, false},
		"a newer one": {"?", ClassUnknown, true, true},
	}
	for _, v := range VerdictOrder {
		if IsDependent(v) {
			want[v] = meaning{"D", ClassSplit, true, true}
		}
	}
	if len(want) != len(VerdictOrder)+2 {
		t.Fatalf("VerdictOrder has %d verdicts, the table here %d", len(VerdictOrder), len(want)-2)
	}
	for v, w := range want {
		if got := Letter(v); got != w.letter {
			t.Errorf("Letter(%q) = %q, want %q", v, got, w.letter)
		}
		if got := ClassOf(v); got != w.class {
			t.Errorf("ClassOf(%q) = %q, want %q", v, got, w.class)
		}
		if got := Decided(v); got != w.decided {
			t.Errorf("Decided(%q) = %v, want %v", v, got, w.decided)
		}
		if got := (Verdict{Verdict: v}).Judged(); got != w.judge {
			t.Errorf("Judged(%q) = %v, want %v", v, got, w.judge)
		}
		if w.letter == "?" {
			continue
		}
		name := v
		if IsDependent(v) {
			name = "clock-, console- or kernel-dependent"
		} else if v == "" {
			name = NotRun
		}
		if !strings.Contains(LetterKey, w.letter+" "+name) {
			t.Errorf("LetterKey %q lacks %q", LetterKey, w.letter+" "+name)
		}
	}
}
