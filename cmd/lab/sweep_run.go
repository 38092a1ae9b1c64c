package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	"lab/results/render"
	"lab/vm"
)

// newSweep is the sweep record of plan with no point run yet.
func newSweep(plan *runPlan) *results.Sweep {
	sw := &results.Sweep{Axes: plan.axes}
	for _, pt := range plan.points {
		sw.Points = append(sw.Points, results.SweepPoint{Labels: pt.labels, Status: results.PointNotRun})
	}
	return sw
}

// runSweep runs the points of plan one after the other over one plugin
// session (the plugin serves any number of Run calls), filling res: the
// samples of every point labelled with it, the sweep record, the outcome.
// A point whose workload fails or crashes as expected is recorded and the
// sweep goes on; a Run call that breaks (Ctrl-C, --timeout, the plugin
// or the guest dying) keeps what that point measured and ends the sweep
// there.
func (e *env) runSweep(ctx, runCtx context.Context, plan *runPlan, h *vm.Handle, sess *host.Session, res *results.Result, bar *progress) {
	f := plan.f
	sw := newSweep(plan)
	res.Sweep = sw
	var failed, crashed []string
	broken := -1
	for i, pt := range plan.points {
		sp := &sw.Points[i]
		name := results.FormatLabels(pt.labels)
		bar.startPoint(i, len(plan.points), i*f.repeat, name)
		start := time.Now()
		var partial []results.Sample
		resp, err := sess.Bench.Run(runCtx, &plugins.RunRequest{Experiment: plan.exp.Name, Params: pt.params, Repeat: f.repeat}, func(p plugins.Progress) {
			partial = append(partial, results.LabelPoint(host.Samples(p.Samples), pt.labels)...)
			sp.Repeats = p.Done
			bar.step(p)
		})
		sp.Seconds = time.Since(start).Seconds()
		if err != nil {
			if resp != nil && len(resp.Samples) >= len(partial) {
				partial = results.LabelPoint(host.Samples(resp.Samples), pt.labels)
				res.Guest = mergeEnv(res.Guest, host.Env(resp.Env))
			}
			res.Samples = append(res.Samples, partial...)
			o := runFailure(ctx, runCtx, h, sess, err, f.timeout)
			sp.Status, sp.Reason, sp.StderrTail = o.Status, o.Reason, o.StderrTail
			if ctx.Err() != nil {
				sp.Status = results.StatusInterrupted
				sp.Reason = fmt.Sprintf("interrupted after %d of %d repeats", sp.Repeats, f.repeat)
			}
			res.Outcome.StderrTail = o.StderrTail
			broken = i
			break
		}
		res.Samples = append(res.Samples, results.LabelPoint(host.Samples(resp.Samples), pt.labels)...)
		res.Guest = mergeEnv(res.Guest, host.Env(resp.Env))
		o := host.Outcome(resp.Outcome)
		sp.Status, sp.Reason = o.Status, o.Reason
		if o.Status != "ok" {
			sp.StderrTail = o.StderrTail
		}
		switch o.Status {
		case "ok":
			sp.Repeats = f.repeat
		case "failed":
			failed = append(failed, name+": "+o.Reason)
			res.Outcome.StderrTail = o.StderrTail
		case "expected-crash":
			crashed = append(crashed, name+": "+o.Reason)
		}
	}
	if broken >= 0 {
		bar.abort()
	} else {
		bar.done()
	}
	res.Outcome.Status, res.Outcome.Reason = sweepOutcome(sw, broken, failed, crashed, ctx.Err() != nil)
}

// sweepOutcome is the outcome of a whole sweep: interrupted, failed (a
// broken run, or points that failed), an expected crash at some points,
// or ok.
func sweepOutcome(sw *results.Sweep, broken int, failed, crashed []string, interrupted bool) (status, reason string) {
	n := len(sw.Points)
	switch {
	case interrupted:
		return results.StatusInterrupted, fmt.Sprintf("interrupted (Ctrl-C) after %d of %d sweep points; the finished points are kept", sw.Done(), n)
	case broken >= 0:
		p := sw.Points[broken]
		reason = fmt.Sprintf("sweep point %d of %d (%s): %s", broken+1, n, results.FormatLabels(p.Labels), p.Reason)
		if left := n - broken - 1; left > 0 {
			reason += fmt.Sprintf("; the %d point(s) after it were not run", left)
		}
		if len(failed) > 0 {
			reason += "; earlier points failed too: " + strings.Join(failed, "; ")
		}
		return "failed", reason
	case len(failed) > 0:
		return "failed", fmt.Sprintf("%d of %d sweep points failed: %s", len(failed), n, strings.Join(failed, "; "))
	case len(crashed) > 0:
		return "expected-crash", fmt.Sprintf("%d of %d sweep points ended in the expected crash: %s", len(crashed), n, strings.Join(crashed, "; "))
	}
	return "ok", ""
}

// sweepLine says how far a sweep got, for the summary.
func sweepLine(sw *results.Sweep) string {
	line := fmt.Sprintf("sweep %s: %d of %d points done", sw.String(), sw.Done(), len(sw.Points))
	var other []string
	for _, p := range sw.Points {
		if p.Status != "ok" {
			s := results.FormatLabels(p.Labels) + " " + p.Status
			if p.Status == results.StatusInterrupted || p.Status == "failed" {
				s += fmt.Sprintf(" (%d repeat(s) kept)", p.Repeats)
			}
			other = append(other, s)
		}
	}
	if len(other) > 0 {
		line += ": " + strings.Join(other, ", ")
	}
	return line
}

// plotOptions are what the plot of plan's sweep over runs shows.
func plotOptions(plan *runPlan, runs []*results.Result) render.PlotOptions {
	x := render.PlotX(runs[0].Sweep)
	o := render.PlotOptions{X: x, Claims: plan.claims}
	if p := findParam(plan.exp, x); p != nil && p.Help != "" {
		o.XLabel = x + " (" + p.Help + ")"
	}
	if len(plan.exp.Metrics) > 0 {
		o.Metrics = render.PlotMetrics(plan.exp.Metrics[0].Name, x, plan.claims)
	}
	var profiles []string
	for _, r := range runs {
		profiles = append(profiles, results.ProfileName(r.Machine))
	}
	o.Title = fmt.Sprintf("%s/%s on %s: %s against %s", plan.desc.Name, plan.exp.Name, strings.Join(profiles, ", "),
		strings.Join(o.Metrics, ", "), x)
	return o
}

// writePlot writes the SVG plot of the sweep of runs to out (beside
// their result documents) and prints where; a run that is not a sweep has
// none. Nothing to plot (no point finished) is said, not an error: the
// result is what matters.
func (e *env) writePlot(plan *runPlan, runs []*results.Result, out string) string {
	if len(runs) == 0 || runs[0].Sweep == nil {
		return ""
	}
	if err := savePlot(out, runs, plotOptions(plan, runs)); err != nil {
		if errors.Is(err, render.ErrNothingToPlot) {
			fmt.Fprintf(e.stderr, "no plot: %v\n", err)
		} else {
			fmt.Fprintf(e.stderr, "warning: plot %s: %v\n", out, err)
		}
		return ""
	}
	fmt.Fprintf(e.stderr, "plot: %s\n", out)
	return out
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
