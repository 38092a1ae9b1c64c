package results

import (
	"slices"
	"testing"
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
