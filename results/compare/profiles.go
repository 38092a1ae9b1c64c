package compare

import (
	"fmt"

	"lab/results"
	"lab/results/stats"
)

// Profiles puts the runs of one experiment on several profiles side by
// side (lab run --profile A --profile B ...): per series (metric and
// labels) the median on each profile and, against the first profile, the
// speed-up for times and the ratio for anything else.
type Profiles struct {
	// Baseline is the first profile; speed-ups are against it.
	Baseline string   `json:"baseline"`
	Profiles []string `json:"profiles"`
	// Runs are the result IDs, one per profile, in order.
	Runs []string     `json:"runs"`
	Rows []ProfileRow `json:"rows"`
	// Notes say what makes the comparison doubtful: runs under different
	// accelerators or clocks, runs that did not end ok.
	Notes []string `json:"notes,omitempty"`
}

// ProfileRow is one series across the profiles.
type ProfileRow struct {
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

// CompareProfiles compares runs (one per profile, the first the
// baseline), series by series in the order the runs have them.
func CompareProfiles(runs []*results.Result) *Profiles {
	c := &Profiles{}
	if len(runs) == 0 {
		return c
	}
	type key struct{ metric, unit, labels string }
	rows := map[key]*ProfileRow{}
	var order []key
	samples := map[key]map[string][]float64{}
	for _, r := range runs {
		p := results.ProfileName(r.Machine)
		c.Profiles = append(c.Profiles, p)
		c.Runs = append(c.Runs, r.ID)
		if r.Outcome.Status != results.StatusOK {
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
				row = &ProfileRow{Metric: s.Metric, Labels: s.Labels, Unit: s.Unit, Medians: map[string]float64{}, N: map[string]int{}}
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
			if results.IsTimeUnit(row.Unit) {
				if m != 0 {
					setF(&row.Speedup, p, b/m)
				}
			} else if b != 0 {
				setF(&row.Ratio, p, m/b)
			}
			x, y := samples[k][c.Baseline], samples[k][p]
			if len(x) >= MinCompareSamples && len(y) >= MinCompareSamples {
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
