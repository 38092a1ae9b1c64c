package claims

import (
	"lab/results"
)

// JudgeSweep is Judge for a swept run. A claim about the sweep itself (a
// crossover, or a rule naming a swept label) is decided on the whole run;
// any other claim is about one run, and is decided at each point that ran
// (AtPoint, against the stored runs seen at the same point), one verdict
// per point, its reason starting with the point ("at n=50: ..."). A claim
// no point decides gives one "not run" verdict.
func JudgeSweep(r *results.Result, claims []results.Claim, store []*results.Result) {
	if r.Sweep == nil {
		Judge(r, claims, store)
		return
	}
	r.Verdicts = nil
	swept := r.Sweep.Keys()
	for i := range claims {
		c := &claims[i]
		if c.Plugin != "" && c.Plugin != r.Plugin || c.Bench != "" && c.Bench != r.Experiment {
			continue
		}
		if aboutSweep(c, swept) {
			r.Verdicts = append(r.Verdicts, Decide(c, r, store))
			continue
		}
		var decided []results.Verdict
		var notRun *results.Verdict
		for _, p := range r.Sweep.Points {
			if p.Status == results.PointNotRun {
				continue
			}
			v := Decide(c, r.AtPoint(p.Labels), storeAt(store, p.Labels))
			v.Reason = "at " + results.FormatLabels(p.Labels) + ": " + v.Reason
			if v.Decided() {
				decided = append(decided, v)
			} else if notRun == nil {
				notRun = &v
			}
		}
		switch {
		case len(decided) > 0:
			r.Verdicts = append(r.Verdicts, decided...)
		case notRun != nil:
			r.Verdicts = append(r.Verdicts, *notRun)
		default:
			r.Verdicts = append(r.Verdicts, results.Verdict{Claim: c.ID, Kind: c.Kind, Statement: c.Statement, Verdict: results.NotRun,
				Rule: RuleText(c), Reason: "no point of the sweep ran"})
		}
	}
}

// aboutSweep says whether claim c is decided on a whole sweep over keys:
// a crossover, or a rule whose series labels name a swept key.
func aboutSweep(c *results.Claim, keys []string) bool {
	if c.Crossover != nil {
		return true
	}
	var labels []map[string]string
	switch {
	case c.Ratio != nil:
		labels = []map[string]string{c.Ratio.Labels, c.Ratio.NumeratorLabels, c.Ratio.DenominatorLabels}
	case c.Range != nil:
		labels = []map[string]string{c.Range.Labels}
	case c.Speedup != nil:
		labels = []map[string]string{c.Speedup.Labels}
	}
	for _, k := range keys {
		for _, l := range labels {
			if _, ok := l[k]; ok {
				return true
			}
		}
	}
	return false
}

// storeAt is the store as a claim about one point sees it: swept runs
// with that point as runs of it, other runs as they are.
func storeAt(store []*results.Result, labels map[string]string) []*results.Result {
	if store == nil {
		return nil
	}
	out := make([]*results.Result, 0, len(store))
	for _, o := range store {
		if o.Sweep == nil {
			out = append(out, o)
		} else if sub := o.AtPoint(labels); sub != nil {
			out = append(out, sub)
		}
	}
	return out
}
