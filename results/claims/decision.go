package claims

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"lab/results"
	"lab/results/stats"
)

// The evidence a rule kind (kinds.go) decides on is a set: every value is
// keyed by the run, the sweep point and the repeat it came from, and the
// kinds sort it by that key before testing, so the order the evidence
// arrives in never changes a decision (docs/proposals/verdicts.md §0).

// Key identifies one unit of evidence.
type Key struct {
	// Run is the id of the run the value comes from.
	Run string
	// Point is the sweep point ("500"), or the series a rule tests at
	// several places (a design of netbench); "" for a run without one.
	Point string
	// Repeat is the repeat within the run.
	Repeat int
}

// Pair is one repeat of a paired kind: both series measured in the same
// run, at the same point, in the same repeat.
type Pair struct {
	Key
	Num, Den float64
}

// Value is one repeat of a one-sample or unpaired kind.
type Value struct {
	Key
	X float64
}

// Test is one one-sided test of a rule: a bound at a point, an edge of a
// crossover band, a pair of an order.
type Test struct {
	// Name says what the test asserts when it rejects, in the words of
	// the reason ("ratio above 10 at 500").
	Name string
	// Refutes says the test belongs to the refutation family (decided
	// under Holm); otherwise it confirms (decided at alpha, every one
	// needed: an intersection-union test).
	Refutes bool
	// N is the number of values the test used: non-zero differences
	// for a signed-rank test, the smaller side for a rank-sum test.
	N int
	P float64
	// Rejected: this test's null hypothesis is rejected (for a
	// refuting test, under Holm over the family).
	Rejected bool
}

// Decision is what a rule kind concluded from a set of evidence.
type Decision struct {
	// Verdict is results.Reproduced, results.NotReproduced or
	// results.Inconclusive.
	Verdict string
	// Reason says why in one line, with the deciding numbers, and what
	// would decide it when inconclusive.
	Reason string
	// Numbers are the deciding numbers: medians, ratios, n.
	Numbers []results.Number
	// Tests are every one-sided test the rule ran, in a fixed order.
	Tests []Test
	// Need is the smallest number of repeats a point (a side, for the
	// unpaired kinds; runs a point, for a crash) with which the
	// refutation family can reject at all.
	Need int
	// Short says the verdict is inconclusive because a test had fewer
	// repeats than Need.
	Short bool
}

// Bounds are a claim's bounds on a ratio or a value; nil is no bound.
type Bounds struct {
	Min, Max *float64
}

// String is the bounds as the reason states them: "at least 10", "in
// [1.5, 2.5]".
func (b Bounds) String() string {
	switch {
	case b.Min != nil && b.Max != nil:
		return fmt.Sprintf("in [%s, %s]", results.FormatValue(*b.Min), results.FormatValue(*b.Max))
	case b.Min != nil:
		return "at least " + results.FormatValue(*b.Min)
	case b.Max != nil:
		return "at most " + results.FormatValue(*b.Max)
	}
	return "unbounded"
}

// srTest runs the one-sided signed-rank test of d against c, greater
// (the median of d above c) or not.
func srTest(name string, refutes bool, d []float64, c float64, greater bool) Test {
	shifted := make([]float64, len(d))
	for i, v := range d {
		shifted[i] = v - c
	}
	t := Test{Name: name, Refutes: refutes, P: 1}
	r, err := stats.SignedRank(shifted)
	if err != nil {
		return t // a non-finite value decides nothing
	}
	t.N, t.P = r.N, r.PLess
	if greater {
		t.P = r.PGreater
	}
	return t
}

// rsTest runs the one-sided Mann-Whitney test of x against y, greater (x
// above y) or not.
func rsTest(name string, refutes bool, x, y []float64, greater bool) Test {
	t := Test{Name: name, Refutes: refutes, N: min(len(x), len(y)), P: 1}
	r, err := stats.MannWhitneyU(x, y)
	if err != nil {
		return t
	}
	t.P = r.PLess
	if greater {
		t.P = r.PGreater
	}
	return t
}

// minRankSumN is the smallest n a side with which a one-sided
// Mann-Whitney test can reject at alpha/k: its smallest p-value is
// 1/C(2n, n), and it must be below alpha/k (3 and 3 give exactly 0.05).
func minRankSumN(alpha float64, k int) int {
	n := 1
	for 1/binom(2*n, n) >= alpha/float64(max(k, 1)) {
		n++
	}
	return n
}

// refuting counts the tests of the refutation family.
func refuting(tests []Test) int {
	k := 0
	for _, t := range tests {
		if t.Refutes {
			k++
		}
	}
	return k
}

// shortage says how the rule's evidence falls short of need, in the
// reason's words; "" when it does not.
type shortage func(tests []Test, need int) string

// repeatsShort is the shortage of the kinds whose tests count repeats of
// one run (a point, a side).
func repeatsShort(unit string) shortage {
	return func(tests []Test, need int) string {
		for _, t := range tests {
			if t.N < need {
				return fmt.Sprintf("too few %s for %s: %d; %d one-sided tests that can refute need %d (run with --repeat %d or more)",
					unit, t.Name, t.N, refuting(tests), need, need)
			}
		}
		return ""
	}
}

// repeatsNeeded names the number a rule's decision carries: the repeats
// it needs (RepeatsNeeded reads it back).
const repeatsNeeded = "repeats needed"

// RepeatsNeeded is the most repeats v's rule says it needs, from its
// headline's numbers and each stratum's; 0 if none says.
func RepeatsNeeded(v results.Verdict) int {
	need := 0
	nums := slices.Clone(v.Numbers)
	for _, st := range v.Strata {
		nums = append(nums, st.Numbers...)
	}
	for _, n := range nums {
		if n.Name == repeatsNeeded {
			need = max(need, int(n.Value))
		}
	}
	return need
}

// settle decides a rule from its tests, as §0 of the design: not
// reproduced when Holm's correction over the refuting tests rejects one;
// else reproduced when every confirming test rejects at alpha and none is
// short of repeats; else inconclusive, saying what is short or within
// the noise. base opens the reason with the numbers.
func settle(base string, tests []Test, nums []results.Number, need int, short shortage) Decision {
	// Confirming tests first, each family in the order the kind built it
	// (points sorted), so the decision does not depend on the evidence's.
	slices.SortStableFunc(tests, func(a, b Test) int {
		switch {
		case a.Refutes == b.Refutes:
			return 0
		case a.Refutes:
			return 1
		}
		return -1
	})
	var ps []float64
	var idx []int
	for i, t := range tests {
		if t.Refutes {
			ps = append(ps, t.P)
			idx = append(idx, i)
		}
	}
	// §0 rejects when p < alpha (at Holm's steps, p < alpha/(k-i));
	// stats.Holm rejects at p <= its alpha, so it gets the float just
	// below: an exact p of 1/20 (3 and 3 samples) does not reject at
	// 0.05, as the minimum n of §0 assumes.
	reject, err := stats.Holm(ps, math.Nextafter(stats.Alpha, 0))
	if err != nil {
		reject = make([]bool, len(ps)) // p-values are in [0, 1] by construction
	}
	for j, i := range idx {
		tests[i].Rejected = reject[j]
	}
	for i := range tests {
		if !tests[i].Refutes {
			tests[i].Rejected = tests[i].P < stats.Alpha
		}
	}
	for _, t := range tests {
		nums = append(nums, results.Number{Name: "p " + t.Name, Value: t.P})
	}
	d := Decision{Numbers: append(nums, results.Number{Name: repeatsNeeded, Value: float64(need)}), Tests: tests, Need: need}
	if r, ok := strongest(tests, true); ok {
		d.Verdict, d.Reason = results.NotReproduced, fmt.Sprintf("%s: %s, p = %s%s", base, r.Name, formatP(r.P), holmNote(len(ps)))
		return d
	}
	if s := short(tests, need); s != "" {
		d.Verdict, d.Reason, d.Short = results.Inconclusive, base+": "+s, true
		return d
	}
	var open, held []string
	for _, t := range tests {
		switch {
		case t.Refutes:
		case t.Rejected:
			held = append(held, fmt.Sprintf("%s, p = %s", t.Name, formatP(t.P)))
		default:
			open = append(open, fmt.Sprintf("%s, p = %s", t.Name, formatP(t.P)))
		}
	}
	if len(open) == 0 && len(held) > 0 {
		d.Verdict, d.Reason = results.Reproduced, base+": "+strings.Join(held, "; ")
		return d
	}
	d.Verdict = results.Inconclusive
	d.Reason = fmt.Sprintf("%s: within the noise: not %s >= %g", base, strings.Join(open, "; not "), stats.Alpha)
	return d
}

// strongest is the rejected test of the family (refuting or not) with the
// smallest p-value, ties broken by name.
func strongest(tests []Test, refutes bool) (Test, bool) {
	var best Test
	found := false
	for _, t := range tests {
		if t.Refutes == refutes && t.Rejected && (!found || t.P < best.P || t.P == best.P && t.Name < best.Name) {
			best, found = t, true
		}
	}
	return best, found
}

func holmNote(k int) string {
	if k < 2 {
		return ""
	}
	return fmt.Sprintf(" (Holm over %d tests)", k)
}

// comparePoints orders sweep points as numbers where both are, else as
// strings: a total order, so sorting by it is the same whatever order the
// points came in.
func comparePoints(a, b string) int {
	fa, ea := strconv.ParseFloat(a, 64)
	fb, eb := strconv.ParseFloat(b, 64)
	switch {
	case ea == nil && eb == nil:
		if c := cmp.Compare(fa, fb); c != 0 {
			return c
		}
	case ea == nil:
		return -1
	case eb == nil:
		return 1
	}
	return strings.Compare(a, b)
}

func compareKeys(a, b Key) int {
	return cmp.Or(comparePoints(a.Point, b.Point), strings.Compare(a.Run, b.Run), cmp.Compare(a.Repeat, b.Repeat))
}

// byPoint groups evidence by point, each group sorted by key, the points
// in comparePoints order.
func byPoint[E any](ev []E, key func(E) Key) ([]string, map[string][]E) {
	groups := map[string][]E{}
	for _, e := range ev {
		groups[key(e).Point] = append(groups[key(e).Point], e)
	}
	var points []string
	for p, g := range groups {
		points = append(points, p)
		slices.SortFunc(g, func(a, b E) int { return compareKeys(key(a), key(b)) })
	}
	slices.SortFunc(points, comparePoints)
	return points, groups
}

// logRatios are ln(num/den) of each pair; a pair with a value that is not
// positive has no log ratio and is left out.
func logRatios(pairs []Pair) []float64 {
	var out []float64
	for _, p := range pairs {
		if p.Num > 0 && p.Den > 0 {
			out = append(out, math.Log(p.Num)-math.Log(p.Den))
		}
	}
	return out
}

// logs are ln x of each positive value.
func logs(vs []Value) []float64 {
	var out []float64
	for _, v := range vs {
		if v.X > 0 {
			out = append(out, math.Log(v.X))
		}
	}
	return out
}

func xs(vs []Value) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = v.X
	}
	return out
}

// at names a point in a test's name: "" for none.
func at(point string) string {
	if point == "" {
		return ""
	}
	return " at " + point
}

// expMedian is the median of log values back on the ratio scale.
func expMedian(ls []float64) float64 {
	if len(ls) == 0 {
		return math.NaN()
	}
	return math.Exp(stats.Median(ls))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// formatP is a p-value as reasons give it: three decimals, or two
// significant digits in e-notation below 0.001.
func formatP(p float64) string {
	if p < 0.001 {
		return strconv.FormatFloat(p, 'e', 1, 64)
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// binom is n choose k, as a float64.
func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}
