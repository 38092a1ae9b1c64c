package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"lab/results"
	"lab/results/claims"
	"lab/results/stats"
)

// Comparison puts the runs of one experiment on several profiles side by
// side (lab run --profile A --profile B ...): per series (metric and
// labels) the median on each profile and, against the first profile, the
// speed-up for times and the ratio for anything else.
type Comparison struct {
	// Baseline is the first profile; speed-ups are against it.
	Baseline string   `json:"baseline"`
	Profiles []string `json:"profiles"`
	// Runs are the result IDs, one per profile, in order.
	Runs []string        `json:"runs"`
	Rows []ComparisonRow `json:"rows"`
	// Notes say what makes the comparison doubtful: runs under different
	// accelerators or clocks, runs that did not end ok.
	Notes []string `json:"notes,omitempty"`
}

// ComparisonRow is one series across the profiles.
type ComparisonRow struct {
	Metric string            `json:"metric"`
	Labels map[string]string `json:"labels,omitempty"`
	Unit   string            `json:"unit"`
	// Medians and N are per profile; a profile without the series is
	// missing from them.
	Medians map[string]float64 `json:"medians"`
	N       map[string]int     `json:"n"`
	// Speedup, for a time: the baseline's median over this profile's
	// (above 1: faster than the baseline).
	Speedup map[string]float64 `json:"speedup,omitempty"`
	// Ratio, for anything else: this profile's median over the
	// baseline's.
	Ratio map[string]float64 `json:"ratio,omitempty"`
	// P is the two-sided Mann-Whitney U p-value that this profile's
	// samples and the baseline's differ, where both have 4 or more.
	P map[string]float64 `json:"p,omitempty"`
}

// isTimeUnit mirrors the time units results knows (its timeUnits).
// results' comparisons (Diff, CompareSides) report percentages, not this
// table's speed-ups and ratios, so this one stays here.
func isTimeUnit(u string) bool {
	switch u {
	case "s", "ms", "us", "µs", "μs", "ns":
		return true
	}
	return false
}

// CompareProfiles compares runs (one per profile, the first the
// baseline), series by series in the order the runs have them.
func CompareProfiles(runs []*results.Result) *Comparison {
	c := &Comparison{}
	if len(runs) == 0 {
		return c
	}
	type key struct{ metric, unit, labels string }
	rows := map[key]*ComparisonRow{}
	var order []key
	samples := map[key]map[string][]float64{}
	for _, r := range runs {
		p := results.ProfileName(r.Machine)
		c.Profiles = append(c.Profiles, p)
		c.Runs = append(c.Runs, r.ID)
		if r.Outcome.Status != "ok" {
			c.Notes = append(c.Notes, fmt.Sprintf("the run on %s ended %s: %s", p, r.Outcome.Status, r.Outcome.Reason))
		}
		sums := r.Summary
		if len(sums) == 0 {
			sums = stats.Summarize(r.Samples)
		}
		for _, s := range sums {
			k := key{s.Metric, s.Unit, results.FormatLabels(s.Labels)}
			row := rows[k]
			if row == nil {
				row = &ComparisonRow{Metric: s.Metric, Labels: s.Labels, Unit: s.Unit, Medians: map[string]float64{}, N: map[string]int{}}
				rows[k] = row
				order = append(order, k)
				samples[k] = map[string][]float64{}
			}
			row.Medians[p], row.N[p] = s.Median, s.N
		}
		for _, s := range r.Samples {
			k := key{s.Metric, s.Unit, results.FormatLabels(s.Labels)}
			if samples[k] != nil {
				samples[k][p] = append(samples[k][p], s.Value)
			}
		}
	}
	c.Baseline = c.Profiles[0]
	base, other := runs[0], runs[1:]
	for i, r := range other {
		p := c.Profiles[i+1]
		if r.Machine.Accelerator != base.Machine.Accelerator || r.Machine.Clock != base.Machine.Clock {
			c.Notes = append(c.Notes, fmt.Sprintf("%s ran under %s with clock %s, %s under %s with clock %s: their times measure different things",
				c.Baseline, base.Machine.Accelerator, base.Machine.Clock, p, r.Machine.Accelerator, r.Machine.Clock))
		}
	}
	for _, k := range order {
		row := rows[k]
		b, ok := row.Medians[c.Baseline]
		for _, p := range c.Profiles[1:] {
			m, has := row.Medians[p]
			if !ok || !has {
				continue
			}
			if isTimeUnit(row.Unit) {
				if m != 0 {
					setF(&row.Speedup, p, b/m)
				}
			} else if b != 0 {
				setF(&row.Ratio, p, m/b)
			}
			x, y := samples[k][c.Baseline], samples[k][p]
			if len(x) >= claims.MinRankSamples && len(y) >= claims.MinRankSamples {
				if t, err := stats.MannWhitneyU(x, y); err == nil {
					setF(&row.P, p, t.P)
				}
			}
		}
		c.Rows = append(c.Rows, *row)
	}
	return c
}

func setF(m *map[string]float64, k string, v float64) {
	if *m == nil {
		*m = map[string]float64{}
	}
	(*m)[k] = v
}

// Profiles are the runs of a plan on several profiles.
type Profiles struct {
	// Runs are those that started, in the plans' profile order.
	Runs []*Run
	// Comparison compares their results (nil if none started).
	Comparison *Comparison
	// Plot is the sweeps' plot together (path; "" if none), and PlotMsg
	// the line saying what became of it.
	Plot, PlotMsg string
}

// Results are the runs' result documents.
func (p *Profiles) Results() []*results.Result {
	var rs []*results.Result
	for _, r := range p.Runs {
		rs = append(rs, r.Result)
	}
	return rs
}

// ExecuteProfiles runs plan on each of its profiles in turn, each on a
// throwaway VM powered off before the next boots, calling each with every
// profile's run as Execute returns it (run nil if it did not start), then
// compares them (and with a sweep plots them together). A run that fails
// does not stop the others; ctx's cancellation (Ctrl-C) does.
func ExecuteProfiles(ctx context.Context, plan *Plan, opts Options, each func(profile string, run *Run, err error)) *Profiles {
	out := &Profiles{}
	for i := range plan.Profiles {
		p := &plan.Profiles[i]
		opts.emit(ProfileStarted{Index: i, N: len(plan.Profiles), Profile: p.Name})
		run, err := execute(ctx, plan, p, plan.Clocks[i], opts)
		if run != nil {
			out.Runs = append(out.Runs, run)
		}
		if each != nil {
			each(p.Name, run, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	if len(out.Runs) > 0 {
		rs := out.Results()
		out.Comparison = CompareProfiles(rs)
		if first := out.Runs[0].Path; len(rs) > 1 && rs[0].Sweep != nil && first != "" {
			out.Plot, out.PlotMsg = WritePlot(plan, rs, strings.TrimSuffix(first, filepath.Ext(first))+".profiles.svg")
		}
	}
	return out
}
