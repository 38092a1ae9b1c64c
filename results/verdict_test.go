package results

import (
	"slices"
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
