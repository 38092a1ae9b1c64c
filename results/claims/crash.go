package claims

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"lab/results"
)

// Outcome is how one run at one point of a crash claim's parameter
// ended. Runs that failed for another reason (the VM died, the plugin
// could not start) are not evidence and are left out by the caller.
type Outcome struct {
	Run, Point string
	// Signal is the signal the program crashed with ("SIGSEGV"); "" when
	// it ran to the end.
	Signal string
}

// CrashRule is "crashes with Signal when Param is at least From", or
// (Never) "runs to the end at every point". Required are the points that
// must have been run: the source's bracket of the threshold (the largest
// value it ran without a crash, and From), or Never's points.
type CrashRule struct {
	Param, Signal string
	From          float64
	Never         bool
	Required      []string
}

// MinCrashRuns is how many runs a point a crash claim needs to tell a
// steady point from a flaky one: one run always looks steady; 3 runs of
// a point that crashes one time in two look steady with chance 1/4.
const MinCrashRuns = 3

// Crash decides a crash threshold (§1.5). The runs at a point agree on an
// outcome, or the point is flaky. Not reproduced when an agreed outcome
// contradicts the claim (ran at or above From, crashed below it, crashed
// with another signal, crashed under Never); reproduced when every point
// agrees with it and every required point was run; else inconclusive.
func Crash(outcomes []Outcome, r CrashRule) Decision {
	byPt := map[string][]string{}
	for _, o := range outcomes {
		byPt[o.Point] = append(byPt[o.Point], strings.ToUpper(o.Signal))
	}
	points := slices.SortedFunc(maps.Keys(byPt), comparePoints)
	claimed := fmt.Sprintf("crashes with %s from %s=%s", r.Signal, r.Param, results.FormatValue(r.From))
	if r.Never {
		claimed = fmt.Sprintf("runs to the end at every %s", r.Param)
	}
	var seen, wrong, flaky []string
	var nums []results.Number
	for _, p := range points {
		x, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return Decision{Verdict: results.Inconclusive, Need: MinCrashRuns, Reason: fmt.Sprintf("point %s=%q is not a number", r.Param, p)}
		}
		sigs := byPt[p]
		crashed := len(slices.DeleteFunc(slices.Clone(sigs), func(s string) bool { return s == "" }))
		nums = append(nums, results.Number{Name: "runs at " + r.Param + "=" + p, Value: float64(len(sigs))},
			results.Number{Name: "crashed at " + r.Param + "=" + p, Value: float64(crashed)})
		pt := r.Param + "=" + p
		if distinct := slices.Compact(slices.Sorted(slices.Values(sigs))); len(distinct) > 1 {
			flaky = append(flaky, fmt.Sprintf("%s flaky: %d of %d crashed (%s)", pt, crashed, len(sigs), signals(distinct)))
			seen = append(seen, p+": flaky")
			continue
		}
		sig := sigs[0]
		if sig == "" {
			seen = append(seen, p+": ran")
		} else {
			seen = append(seen, p+": "+sig)
		}
		switch {
		case r.Never && sig != "":
			wrong = append(wrong, fmt.Sprintf("crashed with %s at %s", sig, pt))
		case r.Never:
		case x >= r.From && sig == "":
			wrong = append(wrong, fmt.Sprintf("ran to the end at %s >= %s", pt, results.FormatValue(r.From)))
		case x >= r.From && sig != strings.ToUpper(r.Signal):
			wrong = append(wrong, fmt.Sprintf("crashed with %s, not %s, at %s", sig, r.Signal, pt))
		case x < r.From && sig != "":
			wrong = append(wrong, fmt.Sprintf("crashed with %s at %s < %s", sig, pt, results.FormatValue(r.From)))
		}
	}
	base := fmt.Sprintf("%s (%s), claimed %s", r.Param, strings.Join(seen, ", "), claimed)
	if len(points) == 0 {
		base = fmt.Sprintf("no runs of %s, claimed %s", r.Param, claimed)
	}
	d := Decision{Numbers: nums, Need: MinCrashRuns}
	var missing, short []string
	for _, p := range slices.SortedFunc(slices.Values(r.Required), comparePoints) {
		if _, ok := byPt[p]; !ok {
			missing = append(missing, p)
		}
	}
	for _, p := range points {
		if n := len(byPt[p]); n < MinCrashRuns && !slices.ContainsFunc(flaky, func(f string) bool { return strings.HasPrefix(f, r.Param+"="+p+" ") }) {
			short = append(short, fmt.Sprintf("%s=%s (%s)", r.Param, p, plural(n, "1 run", fmt.Sprintf("%d runs", n))))
		}
	}
	switch {
	case len(short) > 0 && len(flaky) == 0:
		// Steady or flaky cannot be told from fewer runs, either way.
		d.Verdict, d.Reason = results.Inconclusive, fmt.Sprintf("%s: too few runs to tell a steady point from a flaky one at %s: %d a point needed (run with --repeat %d)",
			base, strings.Join(short, ", "), MinCrashRuns, MinCrashRuns)
	case len(wrong) > 0:
		d.Verdict, d.Reason = results.NotReproduced, base+": "+strings.Join(wrong, "; ")
	case len(flaky) > 0:
		d.Verdict, d.Reason = results.Inconclusive, base+": "+strings.Join(flaky, "; ")
	case len(points) == 0:
		d.Verdict, d.Reason = results.Inconclusive, fmt.Sprintf("%s (run with --sweep %s=%s)", base, r.Param, strings.Join(slices.SortedFunc(slices.Values(r.Required), comparePoints), ","))
	case len(missing) > 0:
		d.Verdict, d.Reason = results.Inconclusive, fmt.Sprintf("%s: no run at %s=%s, a required point (run with --sweep %s=%s; %d runs a point at least, to show a flaky one)",
			base, r.Param, strings.Join(missing, ","), r.Param, strings.Join(slices.SortedFunc(slices.Values(r.Required), comparePoints), ","), MinCrashRuns)
	default:
		d.Verdict, d.Reason = results.Reproduced, base
	}
	return d
}

// signals names the outcomes of a flaky point: "ran", "SIGSEGV".
func signals(distinct []string) string {
	out := make([]string, len(distinct))
	for i, s := range distinct {
		out[i] = s
		if s == "" {
			out[i] = "ran"
		}
	}
	return strings.Join(out, " and ")
}
