package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"lab/engine"
	"lab/images"
	"lab/results"
)

// writeComparison prints c as a table.
func writeComparison(w io.Writer, c *engine.Comparison) error {
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
	Comparison *engine.Comparison `json:"comparison"`
	Plot       string             `json:"plot,omitempty"`
}

// runProfiles runs plan on each of its profiles in turn (see
// engine.ExecuteProfiles), printing each run as it ends, then their
// comparison. A run that fails does not stop the others; Ctrl-C does.
func (e *env) runProfiles(ctx context.Context, plan *engine.Plan, f runFlags, opts engine.Options) error {
	f.combined = true
	var (
		msgs []string
		code = 0
		last string
	)
	ran := engine.ExecuteProfiles(ctx, plan, opts, func(profile string, run *engine.Run, err error) {
		last = profile
		if run != nil {
			err = e.printRun(run, f)
		}
		if err != nil {
			var ec *exitCode
			switch {
			case errors.As(err, &ec):
				msgs = append(msgs, fmt.Sprintf("profile %s: %s", profile, ec.msg))
				code = max(code, ec.code)
			default:
				msgs = append(msgs, fmt.Sprintf("profile %s: %v", profile, err))
				code = max(code, exitRunFailed)
			}
		}
	})
	if ctx.Err() != nil {
		if i := slices.IndexFunc(plan.Profiles, func(p images.Profile) bool { return p.Name == last }); i >= 0 {
			if left := len(plan.Profiles) - i - 1; left > 0 {
				msgs = append(msgs, fmt.Sprintf("interrupted: the %d profile(s) after %s were not run", left, last))
			}
		}
		code = exitInterrupted
	}
	out := profilesOutput{Results: ran.Results(), Comparison: ran.Comparison, Plot: ran.Plot}
	for _, r := range ran.Runs {
		out.Paths = append(out.Paths, r.Path)
	}
	if ran.PlotMsg != "" {
		fmt.Fprintln(e.stderr, ran.PlotMsg)
	}
	if f.json {
		if err := printJSON(e.stdout, out); err != nil {
			return err
		}
	} else if out.Comparison != nil && len(out.Results) > 1 {
		if err := writeComparison(e.stdout, out.Comparison); err != nil {
			return err
		}
	}
	if code != 0 {
		return &exitCode{code: code, msg: strings.Join(msgs, "\n")}
	}
	return nil
}
