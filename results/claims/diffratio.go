package claims

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"lab/results"
	"lab/results/stats"
)

// DiffRow is one repeat of a ratio of differences: A, B and the baseline
// Z measured in the same run and repeat; Point names the B it is (the
// design K of E5.1).
type DiffRow struct {
	Key
	A, B, Z float64
}

// DiffRatioRule is "(A - Z) at least Factor times (B - Z)".
type DiffRatioRule struct {
	A, B, Z string
	Factor  float64
}

// DiffRatio decides a ratio of differences (§1.8), linearly per repeat:
// the denominator D = B - Z must be significantly above 0 (else
// inconclusive, never a negative factor), then e = (A - Z) - Factor*D is
// tested against 0 both ways. A refutation needs both, so its p-value is
// the larger of the two (an intersection-union test); refutations are
// under Holm over the points.
func DiffRatio(rows []DiffRow, r DiffRatioRule) Decision {
	points, groups := byPoint(rows, func(d DiffRow) Key { return d.Key })
	need := stats.MinSignedRankN(stats.Alpha, max(len(points), 1))
	den := fmt.Sprintf("%s - %s", r.B, r.Z)
	if len(points) == 0 {
		return noEvidence("repeats of "+den, need, fmt.Sprintf("run with --repeat %d or more", need))
	}
	var tests []Test
	var nums []results.Number
	var ratios, flat, negative []string
	for _, p := range points {
		var ds, es, nums2 []float64
		for _, row := range groups[p] {
			ds = append(ds, row.B-row.Z)
			es = append(es, (row.A-row.Z)-r.Factor*(row.B-row.Z))
			nums2 = append(nums2, row.A-row.Z)
		}
		pre := srTest(den+" above 0"+at(p), false, ds, 0, true)
		neg := srTest(den+" below 0"+at(p), false, ds, 0, false)
		what := fmt.Sprintf("(%s - %s) - %s x (%s)", r.A, r.Z, results.FormatValue(r.Factor), den)
		conf := srTest(what+" above 0"+at(p), false, es, 0, true)
		ref := srTest(what+" below 0"+at(p), true, es, 0, false)
		ref.P = math.Max(ref.P, pre.P)
		ref.N = min(ref.N, pre.N)
		tests = append(tests, pre, conf, ref)
		medD := stats.Median(ds)
		nums = append(nums, results.Number{Name: "median " + den + at(p), Value: medD},
			results.Number{Name: "p " + den + " below 0" + at(p), Value: neg.P},
			results.Number{Name: "repeats" + at(p), Value: float64(len(ds))})
		switch {
		case pre.P < stats.Alpha:
			ratio := stats.Median(nums2) / medD
			ratios = append(ratios, results.FormatValue(ratio)+at(p))
			nums = append(nums, results.Number{Name: "ratio of medians" + at(p), Value: ratio, Unit: "x"})
		case neg.P < stats.Alpha:
			negative = append(negative, fmt.Sprintf("median %s%s (%s..%s), p = %s", results.FormatValue(medD), at(p),
				results.FormatValue(slices.Min(ds)), results.FormatValue(slices.Max(ds)), formatP(neg.P)))
		default:
			flat = append(flat, fmt.Sprintf("median %s%s (%s..%s), p = %s", results.FormatValue(medD), at(p),
				results.FormatValue(slices.Min(ds)), results.FormatValue(slices.Max(ds)), formatP(pre.P)))
		}
	}
	base := fmt.Sprintf("(%s - %s) / (%s) claimed at least %s", r.A, r.Z, den, results.FormatValue(r.Factor))
	if len(ratios) > 0 {
		base += ", ratio of medians " + strings.Join(ratios, ", ")
	}
	d := settle(base, tests, nums, stats.MinSignedRankN(stats.Alpha, refuting(tests)), repeatsShort("repeats"))
	if d.Verdict == results.Inconclusive && !d.Short && len(flat)+len(negative) > 0 {
		var why []string
		if len(negative) > 0 {
			why = append(why, fmt.Sprintf("%s at most 0: %s costs no more than %s, no factor (%s)", den, r.B, r.Z, strings.Join(negative, "; ")))
		}
		if len(flat) > 0 {
			why = append(why, fmt.Sprintf("the denominator %s is within its noise (%s)", den, strings.Join(flat, "; ")))
		}
		d.Reason = base + ": " + strings.Join(why, "; ")
	}
	return d
}
