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
)

func init() { register(func(r *contract.CrashClaim) kind { return crashKind{r: r} }) }

// crashKind: a program crashes from a size on, or never; decided from
// how runs or their repeats ended (Crash, crash.go).
type crashKind struct {
	within
	r *contract.CrashClaim
}

func (k crashKind) text() string {
	if k.r.Never {
		return fmt.Sprintf("runs to the end at every %s in scope (every run at a point must agree, or the point is flaky)", k.r.Param)
	}
	return fmt.Sprintf("crashes with %s when %s >= %s and runs to the end below (every run at a point must agree, or the point is flaky)",
		k.r.Signal, k.r.Param, results.FormatValue(k.r.From))
}

func (crashKind) evidence() evidence     { return fromEndings }
func (k crashKind) pointKey() string     { return k.r.Param }
func (crashKind) minRepeats(_ *spec) int { return MinCrashRuns }

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
func (k crashKind) repeatOutcomes(u *unit) []Outcome {
	var out []Outcome
	for _, smp := range u.run.Samples {
		if smp.Metric != MetricCrashed || !results.HasLabels(smp.Labels, u.labels) {
			continue
		}
		o := Outcome{Run: fmt.Sprintf("%s repeat %d", u.key, smp.Repeat), Point: u.params[k.r.Param]}
		if smp.Value != 0 {
			o.Signal = cmp.Or(smp.Labels["signal"], "unnamed")
		}
		out = append(out, o)
	}
	return out
}

// decide: each unit's outcome at its value of the claim's parameter.
func (c crashKind) decide(s *spec, st *stratum) Decision {
	k, us := c.r, st.units
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
		if rs := c.repeatOutcomes(u); len(rs) > 0 {
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
