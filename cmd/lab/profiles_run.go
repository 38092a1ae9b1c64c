package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"lab/results"
	"lab/results/claims"
	"lab/results/stats"
)

// profileComparison puts the runs of one experiment on several profiles
// side by side (lab run --profile A --profile B ...): per series (metric
// and labels) the median on each profile and, against the first profile,
// the speed-up for times and the ratio for anything else.
type profileComparison struct {
	// Baseline is the first profile; speed-ups are against it.
	Baseline string   `json:"baseline"`
	Profiles []string `json:"profiles"`
	// Runs are the result IDs, one per profile, in order.
	Runs []string        `json:"runs"`
	Rows []comparisonRow `json:"rows"`
	// Notes say what makes the comparison doubtful: runs under different
	// accelerators or clocks, runs that did not end ok.
	Notes []string `json:"notes,omitempty"`
}

// comparisonRow is one series across the profiles.
type comparisonRow struct {
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

// isTimeUnit mirrors the time units results knows.
func isTimeUnit(u string) bool {
	switch u {
	case "s", "ms", "us", "µs", "μs", "ns":
		return true
	}
	return false
}

// compareProfiles compares runs (one per profile, the first the
// baseline), series by series in the order the runs have them.
func compareProfiles(runs []*results.Result) *profileComparison {
	c := &profileComparison{}
	if len(runs) == 0 {
		return c
	}
	type key struct{ metric, unit, labels string }
	rows := map[key]*comparisonRow{}
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
				row = &comparisonRow{Metric: s.Metric, Labels: s.Labels, Unit: s.Unit, Medians: map[string]float64{}, N: map[string]int{}}
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

// writeComparison prints c as a table.
func writeComparison(w io.Writer, c *profileComparison) error {
	fmt.Fprintf(w, "\ncomparison of %s (speed-up: median time on %s / median time on the other; above 1 = faster than %s; r: ratio other / %s for quantities that are not times; p: Mann-Whitney U that the two differ)\n",
		strings.Join(c.Profiles, ", "), c.Baseline, c.Baseline, c.Baseline)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	head := []string{"metric", "labels", "unit"}
	head = append(head, c.Profiles...)
	for _, p := range c.Profiles[1:] {
		head = append(head, "speed-up "+p, "p")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range c.Rows {
		cells := []string{r.Metric, labelOrDash(r.Labels), r.Unit}
		for _, p := range c.Profiles {
			if m, ok := r.Medians[p]; ok {
				cells = append(cells, results.FormatValue(m))
			} else {
				cells = append(cells, "-")
			}
		}
		for _, p := range c.Profiles[1:] {
			switch {
			case r.Speedup != nil && r.Speedup[p] != 0:
				cells = append(cells, results.FormatValue(r.Speedup[p])+"x")
			case r.Ratio != nil && r.Ratio[p] != 0:
				cells = append(cells, "r "+results.FormatValue(r.Ratio[p]))
			default:
				cells = append(cells, "-")
			}
			if pv, ok := r.P[p]; ok {
				cells = append(cells, fmt.Sprintf("%.3g", pv))
			} else {
				cells = append(cells, "-")
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range c.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	return nil
}

func labelOrDash(l map[string]string) string {
	if s := results.FormatLabels(l); s != "" {
		return s
	}
	return "-"
}

// profilesOutput is what `lab run --profile A --profile B --json` prints.
type profilesOutput struct {
	Results    []*results.Result  `json:"results"`
	Paths      []string           `json:"paths"`
	Comparison *profileComparison `json:"comparison"`
	Plot       string             `json:"plot,omitempty"`
}

// runProfiles runs plan on each of its profiles in turn, each on a
// throwaway VM powered off before the next boots, then prints their
// comparison (and with a sweep plots them together). A run that fails
// does not stop the others; Ctrl-C does.
func (e *env) runProfiles(ctx context.Context, plan *runPlan) error {
	f := plan.f
	f.combined = true
	var (
		runs  []*results.Result
		paths []string
		msgs  []string
		code  = 0
	)
	for i := range plan.profiles {
		p := &plan.profiles[i]
		fmt.Fprintf(e.stderr, "== profile %d of %d: %s\n", i+1, len(plan.profiles), p.Name)
		res, path, err := e.runOn(ctx, plan, p, plan.clocks[i], f)
		if res != nil {
			runs = append(runs, res)
			paths = append(paths, path)
		}
		if err != nil {
			var ec *exitCode
			switch {
			case errors.As(err, &ec):
				msgs = append(msgs, fmt.Sprintf("profile %s: %s", p.Name, ec.msg))
				code = max(code, ec.code)
			default:
				msgs = append(msgs, fmt.Sprintf("profile %s: %v", p.Name, err))
				code = max(code, exitRunFailed)
			}
		}
		if ctx.Err() != nil {
			if left := len(plan.profiles) - i - 1; left > 0 {
				msgs = append(msgs, fmt.Sprintf("interrupted: the %d profile(s) after %s were not run", left, p.Name))
			}
			code = exitInterrupted
			break
		}
	}
	out := profilesOutput{Results: runs, Paths: paths}
	if len(runs) > 0 {
		out.Comparison = compareProfiles(runs)
		if len(runs) > 1 && runs[0].Sweep != nil && paths[0] != "" {
			out.Plot = e.writePlot(plan, runs, strings.TrimSuffix(paths[0], filepath.Ext(paths[0]))+".profiles.svg")
		}
	}
	if f.json {
		if err := printJSON(e.stdout, out); err != nil {
			return err
		}
	} else if out.Comparison != nil && len(runs) > 1 {
		if err := writeComparison(e.stdout, out.Comparison); err != nil {
			return err
		}
	}
	if code != 0 {
		return &exitCode{code: code, msg: strings.Join(msgs, "\n")}
	}
	return nil
}
