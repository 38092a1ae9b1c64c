// Package claims decides the claims of a write-up from stored runs
// (docs/proposals/verdicts.md): which runs are in a claim's scope
// (scope.go), the evidence they hold (evidence.go), each rule kind a
// type (kind_*.go, registered in registry.go) over its tests as pure
// functions of the evidence (kinds.go, unpaired.go, crossover.go,
// crash.go, diffratio.go), the calibration of absolute times (calibrate.go) and
// the verdict a claim gets from the strata of its evidence (judge.go).
package claims

import (
	"fmt"
	"strconv"
	"strings"

	"lab/plugins/contract"
	"lab/results"
)

// testWords says how every rule tests, for RuleText.
const testWords = "one-sided exact tests at alpha 0.05, every confirming test needed, refutations under Holm; each profile, clock and accelerator decided apart"

// RuleText says in words how the claim is decided: its rule and the test.
func RuleText(c *results.Claim) string {
	return kindOf(c).text()
}

// bounds is "in [lo, hi]", "at least lo", "at most hi".
func bounds(lo, hi *float64) string {
	return Bounds{Min: lo, Max: hi}.String()
}

func seriesNote(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	return " at " + results.FormatLabels(labels)
}

// ClockNote says what absolute times mean under a run's clock and
// accelerator, and whether they can be compared with a real machine's:
// under icount:N the guest's time is deterministic (one instruction =
// 2^N ns); under the host clock they are the speed of TCG's emulation
// (or, under KVM, of this host's CPU).
func ClockNote(m results.MachineRecord) (string, bool) {
	if shift, ok := icountShift(m.Clock); ok {
		return fmt.Sprintf("guest time deterministic, one instruction = 2^%d ns (clock %s)", shift, m.Clock), true
	}
	if m.Accelerator == "kvm" {
		return "under KVM with the host clock absolute times are this host's CPU speed, not the original machine's", false
	}
	return "under " + results.OrUnknown(m.Accelerator) + " with the " + results.OrUnknown(m.Clock) +
		" clock absolute times are emulation speed; run with --clock icount:N to decide it", false
}

// icountShift is N of a clock "icount:N"; "icount" alone is shift 0.
func icountShift(clock string) (int, bool) {
	if clock == contract.ClockIcount {
		return 0, true
	}
	shift, ok := strings.CutPrefix(clock, contract.ClockIcount+":")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(shift)
	return n, err == nil && n >= 0
}

// clockKind is the kind of a run's clock a scope names: host or icount,
// "" for neither (not recorded).
func clockKind(clock string) string {
	if _, ok := icountShift(clock); ok {
		return contract.ClockIcount
	}
	if clock == contract.ClockHost {
		return contract.ClockHost
	}
	return ""
}
