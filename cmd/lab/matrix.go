package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"lab/engine"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/matrix"
)

func matrixCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "matrix",
		Usage:     "run every cell of a matrix file (profiles x plugins x experiments x parameters), VMs in parallel, resumable, shardable",
		ArgsUsage: "FILE",
		Description: "A matrix file (YAML) lists cells: each entry is the cross product of its\n" +
			"profiles, experiments and parameter values for one plugin, optionally with a\n" +
			"sweep inside each cell. Every cell is one `lab run PLUGIN --profile P ...` on\n" +
			"a throwaway VM restored from the profile's booted snapshot; --parallel of\n" +
			"them at once. Each cell is checked as lab run would before anything boots.\n\n" +
			"The output directory keeps the results (DIR/results), each cell's log\n" +
			"(DIR/logs), the state (DIR/matrix.json) and JUnit XML (DIR/junit.xml: a cell\n" +
			"is a test case; it fails when its run failed, or when a claim that the\n" +
			"--baseline store's run of the same cell reproduced is not reproduced now).\n" +
			"Run the same command again after an interruption and the finished cells are\n" +
			"kept. A cell whose VM died is retried once.\n\n" +
			"--shard i/n runs every n-th cell (sorted by cell ID) from the i-th: the n\n" +
			"shards partition the matrix, for n machines; `lab results merge` joins them.\n\n" +
			"  name: nightly\n  clock: icount:0\n  repeat: 4\n  cells:\n" +
			"    - plugin: forkbench\n      experiments: [forktime, create]\n      profiles: [celeron-2.4, p4-2.4]\n" +
			"      params: {n: 2000, m: 100000}   # a list makes one cell per value\n" +
			"    - plugin: threadbench\n      experiment: hello\n      profiles: [celeron-2.4]\n      sweep: {count: [5, 50, 500]}\n\n" +
			"Examples:\n   lab matrix examples/nightly.yaml --out nightly\n" +
			"   lab matrix examples/nightly.yaml --shard 2/4 --out shard-2 --baseline last-night/results\n" +
			"   lab matrix examples/nightly.yaml --dry-run",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: "lab-matrix", Usage: "output `DIR`: results, logs, state, junit.xml"},
			&cli.StringFlag{Name: "shard", Usage: "run only shard `I/N` of the matrix"},
			&cli.IntFlag{Name: "parallel", Usage: "cells (VMs) at once (default: the file's parallel, else 2 under an icount clock, 1 under the host clock, whose times two VMs side by side distort)"},
			&cli.StringFlag{Name: "baseline", Usage: "result store `DIR` of an earlier matrix run: a claim it reproduced that a cell does not now fails the cell"},
			&cli.StringFlag{Name: "junit", Usage: "also write the JUnit XML to `FILE`"},
			&cli.BoolFlag{Name: "dry-run", Usage: "check and list the cells, run nothing"},
			profileFileFlag,
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errors.New("lab matrix needs one matrix FILE (see lab matrix --help for its format)")
			}
			return e.runMatrix(c.Context, matrixFlags{file: c.Args().First(), out: c.String("out"), shard: c.String("shard"),
				parallel: c.Int("parallel"), baseline: c.String("baseline"), junit: c.String("junit"), dry: c.Bool("dry-run"),
				json: c.Bool("json"), profileFiles: c.StringSlice("profile-file")})
		},
	}
}

type matrixFlags struct {
	file, out, shard, baseline, junit string
	parallel                          int
	dry, json                         bool
	profileFiles                      []string
}

// runMatrix runs the matrix in this process (engine.MatrixPlan.Run), the
// cells' progress into their logs, then writes the JUnit XML and the
// summary.
func (e *env) runMatrix(ctx context.Context, f matrixFlags) error {
	data, err := os.ReadFile(f.file)
	if err != nil {
		return fmt.Errorf("matrix file: %w", err)
	}
	plan, err := engine.PlanMatrix(engine.MatrixRequest{File: f.file, Data: data, Out: f.out, Shard: f.shard, Parallel: f.parallel,
		ProfileFiles: f.profileFiles, Command: e.args, Roots: e.roots.engine()})
	if err != nil {
		return err
	}
	if len(plan.Cells) == 0 && plan.Shard.N > 1 {
		// Said, not an error: a CI job's shard count is fixed, its
		// matrix may shrink. The empty shard still writes its state, so
		// that merging the shards works.
		fmt.Fprintf(e.stderr, "shard %s has no cells: the matrix has %d, fewer than its %d shards; nothing to run here (at most %d shards give each some)\n",
			plan.Shard, len(plan.All), plan.Shard.N, len(plan.All))
	}
	if f.dry {
		return writeCells(e.stdout, plan.Cells, len(plan.All), plan.Shard, f.json)
	}
	opts, err := e.engineOptions(e.stderr)
	if err != nil {
		return err
	}
	opts.Observe = func(ev engine.Event) { fmt.Fprintln(e.stderr, ev.String()) }
	descs, _ := e.roots.plugins.DescribeAll() // a plugin that does not describe itself fails its cells, with why
	m, err := plan.Run(ctx, engine.MatrixOptions{Options: opts, CellObserver: observer, Cost: engine.EstimatesOf(descs...).Cell})
	if err != nil {
		return err
	}
	return e.finishMatrix(ctx, f, m)
}

// finishMatrix writes the JUnit XML and the summary; the exit status says
// whether every cell ran and held its claims.
// matrixClaims are the installed plugins' claims judged from a matrix's
// results (store), for junit.xml's claims suite: lab claims's statuses,
// never nil (an empty suite says no plugin declares one).
func (e *env) matrixClaims(store string) []rclaims.ClaimStatus {
	sts, _ := e.claimStatuses(store, false) // a non-empty dir: no error to meet
	if sts == nil {
		sts = []rclaims.ClaimStatus{}
	}
	return sts
}

func (e *env) finishMatrix(ctx context.Context, f matrixFlags, m *engine.Matrix) error {
	var baseline []*results.Result
	if f.baseline != "" {
		var errs []error
		baseline, errs = results.LoadAll(f.baseline)
		warnSkipped(e.stderr, errs)
		if len(baseline) == 0 {
			fmt.Fprintf(e.stderr, "warning: baseline %s holds no runs: no claim can have regressed against it\n", f.baseline)
		}
	}
	doc := matrix.JUnit(m.State, m.Runs, baseline, e.matrixClaims(results.StoreDir(f.out)))
	if err := matrix.WriteJUnit(doc, filepath.Join(f.out, "junit.xml"), f.junit); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	if f.json {
		if err := printJSON(e.stdout, m.State); err != nil {
			return err
		}
	} else {
		matrix.WriteState(e.stdout, m.State, m.Runs)
	}
	s := doc.Suites[0]
	fmt.Fprintf(e.stderr, "junit: %s (%d cells: %d failed, %d errors, %d not run)\n", filepath.Join(f.out, "junit.xml"), s.Tests, s.Failures, s.Errors, s.Skipped)
	if ctx.Err() != nil {
		return &exitCode{code: 130, msg: fmt.Sprintf("interrupted: %d of %d cells done; run the same command again to resume", s.Tests-s.Errors-s.Skipped, s.Tests)}
	}
	if s.Failures+s.Errors > 0 {
		return &exitCode{code: 1, msg: fmt.Sprintf("%d of %d cells failed (see %s and the logs in %s)", s.Failures+s.Errors, s.Tests, filepath.Join(f.out, "junit.xml"), filepath.Join(f.out, "logs"))}
	}
	return nil
}

// writeCells is --dry-run: the cells and the lab run each is.
func writeCells(w io.Writer, cells []matrix.Cell, all int, shard matrix.Shard, asJSON bool) error {
	if asJSON {
		if cells == nil {
			cells = []matrix.Cell{}
		}
		return printJSON(w, cells)
	}
	return matrix.WriteCells(w, cells, all, shard)
}

func mergeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "join the output directories of a matrix's shards into one",
		ArgsUsage: "SHARD_DIR...",
		Description: "Each SHARD_DIR is a `lab matrix --shard i/n --out SHARD_DIR` output. The shards\n" +
			"must be of one matrix file and together cover every cell exactly once; a cell\n" +
			"run by two shards, or by none, is an error naming it, and nothing is written.\n" +
			"The merged directory holds every result, the state and junit.xml.\n\n" +
			"Example:\n   lab results merge --out nightly shard-1 shard-2 shard-3 shard-4",
		Flags: []cli.Flag{&cli.StringFlag{Name: "out", Required: true, Usage: "merged output `DIR`"}, jsonFlag},
		Action: func(c *cli.Context) error {
			out := c.String("out")
			st, err := matrix.Merge(out, c.Args().Slice())
			if err != nil {
				return err
			}
			runs, err := matrix.LoadRuns(out, st)
			if err != nil {
				return err
			}
			if err := matrix.WriteJUnit(matrix.JUnit(st, runs, nil, e.matrixClaims(results.StoreDir(out))), filepath.Join(out, "junit.xml")); err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(e.stdout, st)
			}
			fmt.Fprintf(e.stdout, "merged %d shard(s): %d cells of matrix %s into %s\n", c.NArg(), len(st.Cells), orDash(st.Name), out)
			return nil
		},
	}
}
