package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"lab/engine"
	"lab/results"
	rclaims "lab/results/claims"
)

func reproduceCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "reproduce",
		Usage:     "decide published claims from one command: plan the fewest runs, run them, repeat where still inconclusive, print the verdicts",
		ArgsUsage: "[ID | E1..E5 | all]...",
		Description: "Each claim knows the runs that decide it (its scope: profiles, experiment,\n" +
			"parameters, sweep points, clock, the repeats its rule needs). lab reproduce\n" +
			"merges the claims asked into the fewest runs (claims share runs), prints the\n" +
			"plan with an estimate, and runs it as matrices of throwaway VMs (icount cells\n" +
			"--parallel at a time, host-clock cells one at a time, as lab matrix does).\n" +
			"Then it judges the claims from its runs and repeats adaptively: another round,\n" +
			"with more repeats (what the rule says it needs, else twice as many, at most\n" +
			"32), of only the runs of the claims still inconclusive, until each is decided,\n" +
			"3 rounds were run or the budget is spent, and it says which claims the budget\n" +
			"stopped. It ends with the claims table and writes DIR/report/index.html.\n" +
			"A claim untestable here is listed, not run (its verdict quotes what the runs of\n" +
			"its experiment measured instead).\n\n" +
			"Everything is kept in --out DIR: results (DIR/results), each round's matrix\n" +
			"state and logs (DIR/rounds). Ctrl-C keeps what finished; the same command\n" +
			"resumes.\n\n" +
			"--dry-run prints the plan; with --matrix CLOCK (icount or host) it prints the\n" +
			"plan's cells under that clock as a matrix file instead (what\n" +
			"examples/ci/nightly.yaml and nightly-host.yaml are).\n\n" +
			"Examples:\n   lab reproduce E1.6 E1.7\n   lab reproduce E1 --out e1\n" +
			"   lab reproduce all --dry-run\n   lab reproduce all --budget 45m --out nightly\n" +
			"   lab reproduce all --variants --dry-run --matrix icount > examples/ci/nightly.yaml",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: "lab-reproduce", Usage: "output `DIR`: results, rounds, report"},
			&cli.DurationFlag{Name: "budget", Value: engine.DefaultBudget, Usage: "stop starting rounds, and stop the runs, after this long (`DURATION`, e.g. 45m)"},
			&cli.IntFlag{Name: "parallel", Usage: "icount cells (VMs) at once (default 2; host-clock cells always run one at a time)"},
			&cli.BoolFlag{Name: "variants", Usage: "also run the era-kernel variants of the claims' profiles (each its own stratum; builds their kernels the first time)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan, run nothing"},
			&cli.StringFlag{Name: "matrix", Usage: "with --dry-run: print the cells of `CLOCK` (icount or host) as a matrix file"},
			profileFileFlag,
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.String("matrix") != "" && !c.Bool("dry-run") {
				return errors.New("--matrix prints a matrix file and needs --dry-run")
			}
			ids := c.Args().Slice()
			if len(ids) == 0 {
				return errors.New("lab reproduce needs what to decide: claim ids (E1.6), experiments (E1) or all; `lab claims` lists them")
			}
			req := engine.ReproduceRequest{IDs: ids, Out: c.String("out"), Budget: c.Duration("budget"),
				Parallel: c.Int("parallel"), Variants: c.Bool("variants"), ProfileFiles: c.StringSlice("profile-file"),
				Command: e.args, Roots: e.roots.engine(), Version: versionString(buildVersion())}
			if !c.Bool("dry-run") {
				return e.reproduce(c.Context, req, c.Bool("json"))
			}
			plan, err := engine.PlanReproduce(req)
			if err != nil {
				return err
			}
			if m := c.String("matrix"); m != "" {
				return writePlanMatrix(e.stdout, plan, m)
			}
			if c.Bool("json") {
				return printJSON(e.stdout, planJSON(plan))
			}
			return writePlan(e.stdout, plan)
		},
	}
}

// writePlanMatrix prints the plan's cells under clock ("icount" or
// "host") as a matrix file, headed by how to make it again.
func writePlanMatrix(w io.Writer, plan *engine.ReproducePlan, clock string) error {
	switch clock {
	case "icount":
		clock = "icount:0"
	case "host":
	default:
		return fmt.Errorf("--matrix %s: want icount or host", clock)
	}
	name, file := "nightly", "nightly.yaml"
	if clock == "host" {
		name, file = "nightly-host", "nightly-host.yaml"
	}
	var ids []string
	for _, r := range plan.Runs {
		if r.Clock == clock {
			ids = append(ids, r.Claims...)
		}
	}
	header := fmt.Sprintf("Generated from the claims' scopes: do not edit; a test fails when it drifts.\n"+
		"  lab reproduce %s --variants --dry-run --matrix %s > examples/ci/%s\n"+
		"The runs that decide the claims under the %s clock, each cell's comment naming\n"+
		"its claims, the repeats what their rules need (lab reproduce adds more where a\n"+
		"claim stays inconclusive; a nightly matrix runs these).\n\n"+
		"  lab matrix examples/ci/%s --out %s\n"+
		"  lab matrix examples/ci/%s --shard 2/4 --out shard-2",
		strings.Join(plan.IDs, " "), strings.TrimSuffix(clock, ":0"), file, clock, file, name, file)
	_, err := w.Write(engine.MatrixYAML(name, clock, plan.Runs, nil, header))
	return err
}

type planOut struct {
	Claims    []string            `json:"claims"`
	Runs      []planRun           `json:"runs"`
	Unplanned []rclaims.Unplanned `json:"unplanned,omitempty"`
	Estimate  float64             `json:"estimate_seconds"`
	Kept      int                 `json:"kept"`
	Budget    float64             `json:"budget_seconds"`
}

// planRun is a run of the plan with its estimate, the table's ESTIMATE.
type planRun struct {
	rclaims.Run
	Estimate float64 `json:"estimate_seconds"`
}

func planJSON(p *engine.ReproducePlan) planOut {
	o := planOut{Runs: []planRun{}, Unplanned: p.Unplanned, Estimate: p.Estimate.Seconds(), Kept: p.Kept, Budget: p.Budget.Seconds()}
	for _, c := range p.Claims {
		o.Claims = append(o.Claims, c.ID)
	}
	for _, r := range p.Runs {
		o.Runs = append(o.Runs, planRun{Run: r, Estimate: p.Estimates.Run(r, 0).Seconds()})
	}
	return o
}

// writePlan is the plan as a table: a run a line with its clock,
// repeats, estimate and claims; the claims no run decides; the total.
func writePlan(w io.Writer, p *engine.ReproducePlan) error {
	fmt.Fprintf(w, "%d claims, %d runs:\n", len(p.Claims), len(p.Runs))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tPLUGIN/EXPERIMENT\tPARAMETERS\tCLOCK\tREPEAT\tESTIMATE\tCLAIMS")
	for _, r := range p.Runs {
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%d\t%s\t%s\n", r.Profile, r.Plugin, r.Experiment, runParams(r), r.Clock, r.Repeat,
			engine.FormatEstimate(p.Estimates.Run(r, 0)), strings.Join(r.Claims, " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, u := range p.Unplanned {
		fmt.Fprintf(w, "not run: %s: %s\n", u.Claim, u.Reason)
	}
	kept := ""
	if p.Kept > 0 {
		kept = fmt.Sprintf(", the %d runs %s already holds kept", p.Kept, p.Store())
	}
	fmt.Fprintf(w, "estimate: %s for the first round (icount cells %d at a time, host-clock cells alone%s); budget %s\n",
		engine.FormatEstimate(p.Estimate), p.Parallel, kept, p.Budget)
	if p.Estimate > p.Budget {
		fmt.Fprintf(w, "warning: the first round is estimated over the budget: it stops at %s (run again to resume, or give --budget)\n", p.Budget)
	}
	return nil
}

// runParams are a run's parameters and sweep: "m=10000", "count=5..5000
// (4 points)".
func runParams(r rclaims.Run) string {
	var kv []string
	for _, k := range results.SortedKeys(r.Params) {
		kv = append(kv, k+"="+r.Params[k])
	}
	if r.SweepKey != "" {
		kv = append(kv, r.SweepKey+"="+strings.Join(r.Points, ","))
	}
	if len(kv) == 0 {
		return "-"
	}
	s := strings.Join(kv, " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// reproduce plans and runs req, the plan and the rounds' progress on
// stderr, then prints the claims table (or the outcome as JSON) and
// where the report went.
func (e *env) reproduce(ctx context.Context, req engine.ReproduceRequest, asJSON bool) error {
	opts, err := e.engineOptions(e.stderr)
	if err != nil {
		return err
	}
	var planErr error
	opts.Observe = func(ev engine.Event) {
		if p, ok := ev.(engine.ReproducePlanned); ok {
			planErr = writePlan(e.stderr, p.Plan)
			return
		}
		fmt.Fprintln(e.stderr, ev.String())
	}
	out, err := engine.Reproduce(ctx, req, engine.MatrixOptions{Options: opts, CellObserver: observer})
	if err != nil {
		return err
	}
	if planErr != nil {
		return planErr
	}
	plan := out.Plan
	for _, err := range out.Warnings {
		fmt.Fprintf(e.stderr, "warning: %v\n", err)
	}
	warnSkipped(e.stderr, out.Skipped)
	if asJSON {
		if err := printJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		if err := writeClaimsTable(e.stdout, out.Statuses); err != nil {
			return err
		}
	}
	if out.ReportErr != nil {
		fmt.Fprintf(e.stderr, "warning: report: %v\n", out.ReportErr)
	} else {
		fmt.Fprintf(e.stderr, "report: %s\n", out.Report)
	}
	fmt.Fprintf(e.stderr, "results: %s (%d rounds, %s)\n", plan.Store(), len(out.Rounds), out.Elapsed.Round(time.Second))
	if len(out.Stopped) > 0 {
		fmt.Fprintf(e.stderr, "stopped by the budget (%s): %s", plan.Budget, strings.Join(out.Stopped, ", "))
		if out.NextRound > 0 {
			fmt.Fprintf(e.stderr, " (the next round needed %s)", engine.FormatEstimate(out.NextRound))
		}
		fmt.Fprintln(e.stderr, "; run the same command with a larger --budget to go on")
	}
	if len(out.Capped) > 0 {
		fmt.Fprintf(e.stderr, "still inconclusive after %d rounds or %d repeats: %s (`lab claims show ID --results %s` says why)\n",
			engine.MaxRounds, engine.MaxAdaptiveRepeats, strings.Join(out.Capped, ", "), plan.Store())
	}
	if ctx.Err() != nil && !out.Interrupted {
		out.Interrupted = true
	}
	if out.Interrupted && len(out.Stopped) == 0 {
		return &exitCode{code: 130, msg: "interrupted: what finished is kept in " + plan.Out + "; run the same command again to resume"}
	}
	return nil
}
