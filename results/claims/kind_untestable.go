package claims

import (
	"fmt"
	"slices"
	"strings"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/stats"
)

func init() { register(func(r *contract.UntestableClaim) kind { return untestableKind{r: r} }) }

// untestableKind: a property of the original platform a guest cannot
// show. No run decides it; its verdict quotes what was measured instead.
type untestableKind struct {
	within
	r *contract.UntestableClaim
}

// unjudged is a kind no run decides: each stratum says what its runs
// measured instead, and the claim is planned no run.
type unjudged interface {
	kind
	// instead is what a stratum's runs measured instead, in brief.
	instead(s *spec, st *stratum) string
	// reason is the claim's reason from its strata (names: theirs).
	reason(ds []decided, names []string) string
	// unplanned says why no run is planned for the claim.
	unplanned(c *results.Claim) string
}

// Untestable says whether no run decides c (its kind is unjudged).
func Untestable(c *results.Claim) bool {
	_, ok := kindOf(c).(unjudged)
	return ok
}

func (k untestableKind) text() string {
	u := k.r
	s := "untestable here: " + u.Property
	if u.Instead != "" {
		s += "; measured instead: " + results.SeriesLabel(u.Instead, u.InsteadLabels)
	}
	return s
}

func (untestableKind) minRepeats(_ *spec) int { return 0 }

// decide is never asked (decideStratum asks instead); it says so.
func (k untestableKind) decide(_ *spec, _ *stratum) Decision {
	return Decision{Verdict: results.Untestable, Reason: k.text()}
}

func (k untestableKind) unplanned(c *results.Claim) string {
	return "untestable here: " + k.r.Property + "; its verdict quotes what the runs of " + c.Plugin + "/" + c.Bench + " measured instead"
}

// instead quotes the median of what an untestable claim measured
// instead, in a stratum: "thread_start_ms 0.059 ms (7 samples)", with
// the real time it predicts under icount where the profile has a
// calibration; "not measured" if the stratum has none of it.
func (k untestableKind) instead(s *spec, st *stratum) string {
	u := k.r
	if u.Instead == "" {
		return "nothing"
	}
	name := results.SeriesLabel(u.Instead, u.InsteadLabels)
	ss := s.samples(st.units, u.Instead, u.InsteadLabels, false)
	if len(ss) == 0 {
		return name + " not measured"
	}
	x := xs(values(ss))
	unit := ss[0].unit
	out := fmt.Sprintf("median %s %s%s (%d %s)", name, results.FormatValue(stats.Median(x)), withSpace(unit), len(x), plural(len(x), "sample", "samples"))
	if shift, ok := icountShift(st.clock); ok {
		toNs, isTime := results.ConvertUnit(1, unit, "ns")
		if cal, source := s.calibration(st.profile); cal != nil && isTime && results.IsTimeUnit(unit) {
			instr := Interval{Instructions(slices.Min(x)*toNs, shift), Instructions(slices.Max(x)*toNs, shift)}
			p := Predicted(instr, *cal)
			out += fmt.Sprintf(", predicting %s%s on the real machine at %s calibration", Interval{p.Lo / toNs, p.Hi / toNs}, withSpace(unit), source)
		}
	}
	return out
}

// reason: the property, and what was measured instead in each stratum.
func (k untestableKind) reason(ds []decided, names []string) string {
	u := k.r
	why := "untestable here: " + u.Property
	var parts []string
	for i, d := range ds {
		parts = append(parts, d.brief+" under "+names[i])
	}
	switch {
	case len(parts) > 0:
		why += "; measured instead: " + strings.Join(parts, "; ")
	case u.Instead != "":
		why += "; measured instead: " + results.SeriesLabel(u.Instead, u.InsteadLabels) + ", not measured (no run in scope)"
	}
	if u.InsteadNote != "" {
		why += "; " + u.InsteadNote
	}
	return why
}
