package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"lab/engine"
	"lab/results"
	"lab/results/compare"
	"lab/results/render"
)

// profilesOutput is what `lab run --profile A --profile B --json` prints.
type profilesOutput struct {
	Results    []*results.Result `json:"results"`
	Paths      []string          `json:"paths"`
	Comparison *compare.Profiles `json:"comparison"`
	Plot       string            `json:"plot,omitempty"`
}

// runProfiles runs plan on each of its profiles in turn (see
// engine.ExecuteProfiles), printing each run as it ends, then their
// comparison. A run that fails does not stop the others; Ctrl-C does.
func (e *env) runProfiles(ctx context.Context, plan *engine.Plan, f runFlags, opts engine.Options, choice engine.RepeatChoice) error {
	f.combined = true
	var (
		msgs []string
		code = 0
		last string
	)
	ran := engine.ExecuteProfiles(ctx, plan, opts, func(profile string, run *engine.Run, err error) {
		last = profile
		if run != nil {
			err = e.printRun(run, f, summaryNotes(plan, choice, run.Result))
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
		if len(ran.Left) > 0 {
			msgs = append(msgs, fmt.Sprintf("interrupted: the %d profile(s) after %s were not run", len(ran.Left), last))
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
		if err := render.WriteProfiles(e.stdout, out.Comparison); err != nil {
			return err
		}
	}
	if code != 0 {
		return &exitCode{code: code, msg: strings.Join(msgs, "\n")}
	}
	return nil
}
