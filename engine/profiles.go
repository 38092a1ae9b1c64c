package engine

import (
	"context"
	"path/filepath"
	"strings"

	"lab/results"
	"lab/results/compare"
)

// Profiles are the runs of a plan on several profiles.
type Profiles struct {
	// Runs are those that started, in the plans' profile order.
	Runs []*Run
	// Comparison compares their results (nil if none started).
	Comparison *compare.Profiles
	// Left are the profiles not run: ctx was cancelled before their turn.
	Left []string
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

// executeProfiles runs plan on each of its profiles in turn, each on a
// throwaway VM powered off before the next boots, calling each with every
// profile's run as Execute returns it (run nil if it did not start), then
// compares them (and with a sweep plots them together). A run that fails
// does not stop the others; ctx's cancellation (Ctrl-C) does.
func executeProfiles(ctx context.Context, plan *Plan, opts Options, each func(profile string, run *Run, err error)) *Profiles {
	out := &Profiles{}
	for i := range plan.Profiles {
		p := &plan.Profiles[i]
		opts.emit(ProfileStarted{Index: i, N: len(plan.Profiles), Profile: p.Name})
		run, err := onThrowaway(ctx, plan, *p, plan.Clocks[i], opts)
		if run != nil {
			out.Runs = append(out.Runs, run)
		}
		if each != nil {
			each(p.Name, run, err)
		}
		if ctx.Err() != nil {
			for _, q := range plan.Profiles[i+1:] {
				out.Left = append(out.Left, q.Name)
			}
			break
		}
	}
	if len(out.Runs) > 0 {
		rs := out.Results()
		out.Comparison = compare.CompareProfiles(rs)
		if first := out.Runs[0].Path; len(rs) > 1 && rs[0].Sweep != nil && first != "" {
			out.Plot, out.PlotMsg = WritePlot(plan, rs, strings.TrimSuffix(first, filepath.Ext(first))+".profiles.svg")
		}
	}
	return out
}
