package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"lab/plugins"
	"lab/results"
	"lab/results/render"
)

// newSweep is the sweep record of plan with no point run yet.
func newSweep(plan *Plan) *results.Sweep {
	sw := &results.Sweep{Axes: plan.Axes}
	for _, pt := range plan.Points {
		sw.Points = append(sw.Points, results.SweepPoint{Labels: pt.Labels, Status: results.PointNotRun})
	}
	return sw
}

// sweep runs the points of the plan one after the other over one plugin
// session (the plugin serves any number of Run calls), filling res: the
// samples of every point labelled with it, the sweep record, the outcome.
// A point whose workload fails or crashes as expected is recorded and the
// sweep goes on; a Run call that breaks (Ctrl-C, the timeout, the plugin
// or the guest dying) keeps what that point measured and ends the sweep
// there. It returns how the sweep broke, or nil.
func (s *session) sweep(res *results.Result) *Failure {
	plan := s.plan
	sw := newSweep(plan)
	res.Sweep = sw
	var failed, crashed []string
	var broke *Failure
	broken := -1
	for i, pt := range plan.Points {
		sp := &sw.Points[i]
		name := results.FormatLabels(pt.Labels)
		s.opts.emit(PointStarted{Index: i, N: len(plan.Points), Offset: i * plan.Repeat, Labels: name})
		start := time.Now()
		c := s.call(pt.Params, pt.Labels, func(p plugins.Progress) {
			sp.Repeats = p.Done
			s.opts.emit(Progress{Done: p.Done, Total: p.Total, Message: p.Message})
		})
		sp.Seconds = time.Since(start).Seconds()
		res.Samples = append(res.Samples, c.samples...)
		if c.env != nil {
			res.Guest = mergeEnv(res.Guest, *c.env)
		}
		if c.broke != nil {
			o := c.broke.outcome
			sp.Status, sp.Reason, sp.StderrTail = o.Status, o.Reason, o.StderrTail
			if s.ctx.Err() != nil {
				sp.Status = results.StatusInterrupted
				sp.Reason = fmt.Sprintf("interrupted after %d of %d repeats", sp.Repeats, plan.Repeat)
			}
			res.Outcome.StderrTail = o.StderrTail
			broken, broke = i, c.broke.failure
			break
		}
		o := c.outcome
		sp.Status, sp.Reason = o.Status, o.Reason
		if o.Status != results.StatusOK {
			sp.StderrTail = o.StderrTail
		}
		switch o.Status {
		case results.StatusOK:
			sp.Repeats = plan.Repeat
		case results.StatusFailed:
			failed = append(failed, name+": "+o.Reason)
			res.Outcome.StderrTail = o.StderrTail
		case results.StatusExpectedCrash:
			crashed = append(crashed, name+": "+o.Reason)
		}
	}
	s.opts.emit(Ended{OK: broken < 0})
	by := ""
	if s.ctx.Err() != nil {
		by = InterruptedBy(s.ctx)
	}
	res.Outcome.Status, res.Outcome.Reason = SweepOutcome(sw, broken, failed, crashed, by)
	return broke
}

// SweepOutcome is the outcome of a whole sweep: interrupted (by what
// InterruptedBy names; "": not), failed (the point broken at, or points
// that failed), an expected crash at some points, or ok.
func SweepOutcome(sw *results.Sweep, broken int, failed, crashed []string, interruptedBy string) (status, reason string) {
	n := len(sw.Points)
	switch {
	case interruptedBy != "":
		return results.StatusInterrupted, fmt.Sprintf("interrupted (%s) after %d of %d sweep points; the finished points are kept", interruptedBy, sw.Done(), n)
	case broken >= 0:
		p := sw.Points[broken]
		reason = fmt.Sprintf("sweep point %d of %d (%s): %s", broken+1, n, results.FormatLabels(p.Labels), p.Reason)
		if left := n - broken - 1; left > 0 {
			reason += fmt.Sprintf("; the %d point(s) after it were not run", left)
		}
		if len(failed) > 0 {
			reason += "; earlier points failed too: " + strings.Join(failed, "; ")
		}
		return results.StatusFailed, reason
	case len(failed) > 0:
		return results.StatusFailed, fmt.Sprintf("%d of %d sweep points failed: %s", len(failed), n, strings.Join(failed, "; "))
	case len(crashed) > 0:
		return results.StatusExpectedCrash, fmt.Sprintf("%d of %d sweep points ended in the expected crash: %s", len(crashed), n, strings.Join(crashed, "; "))
	}
	return results.StatusOK, ""
}

// plotOptions are what the plot of plan's sweep over runs shows.
func plotOptions(plan *Plan, runs []*results.Result) render.PlotOptions {
	x := render.PlotX(runs[0].Sweep)
	o := render.PlotOptions{X: x, Claims: plan.Claims}
	if p := findParam(plan.Exp, x); p != nil && p.Help != "" {
		o.XLabel = x + " (" + p.Help + ")"
	}
	if len(plan.Exp.Metrics) > 0 {
		o.Metrics = render.PlotMetrics(plan.Exp.Metrics[0].Name, x, plan.Claims)
	}
	var profiles []string
	for _, r := range runs {
		profiles = append(profiles, results.ProfileName(r.Machine))
	}
	o.Title = fmt.Sprintf("%s/%s on %s: %s against %s", plan.Desc.Name, plan.Exp.Name, strings.Join(profiles, ", "),
		strings.Join(o.Metrics, ", "), x)
	return o
}

// WritePlot writes the SVG plot of the sweep of runs to out (beside
// their result documents) and returns its path ("" if none) and the line
// saying so ("plot: PATH", "no plot: why", "warning: plot PATH: error";
// "" for runs that are not a sweep). Nothing to plot (no point finished)
// is said, not an error: the result is what matters.
func WritePlot(plan *Plan, runs []*results.Result, out string) (path, msg string) {
	if len(runs) == 0 || runs[0].Sweep == nil {
		return "", ""
	}
	if err := savePlot(out, runs, plotOptions(plan, runs)); err != nil {
		if errors.Is(err, render.ErrNothingToPlot) {
			return "", fmt.Sprintf("no plot: %v", err)
		}
		return "", fmt.Sprintf("warning: plot %s: %v", out, err)
	}
	return out, "plot: " + out
}

// savePlot writes the plot whole or not at all.
func savePlot(path string, runs []*results.Result, o render.PlotOptions) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".plot-*.svg")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := render.WriteSweepPlot(f, runs, o); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
