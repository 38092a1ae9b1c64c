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

// profileEnd is how a profile's run ended: the error printing it
// returned, or why it did not start.
type profileEnd struct {
	profile string
	err     error
}

// profilesEnd ends a run on several profiles (printed each as it ended):
// what failed, what was not run, and their comparison.
func (e *env) profilesEnd(ctx context.Context, ran *engine.Outcome, f runFlags, ended []profileEnd) error {
	var (
		msgs []string
		code = 0
		last string
	)
	for _, pe := range ended {
		last = pe.profile
		if pe.err == nil {
			continue
		}
		var ec *exitCode
		switch {
		case errors.As(pe.err, &ec):
			msgs = append(msgs, fmt.Sprintf("profile %s: %s", pe.profile, ec.msg))
			code = max(code, ec.code)
		default:
			msgs = append(msgs, fmt.Sprintf("profile %s: %v", pe.profile, pe.err))
			code = max(code, exitRunFailed)
		}
	}
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
