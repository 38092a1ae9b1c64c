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
			"An entry with add_to: RUN (one profile, one experiment, a value per parameter\n" +
			"and repeat given) adds its repeats to that run of DIR/results, as `lab run\n" +
			"--add-to` does; lab reproduce's later rounds write such entries.\n\n" +
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

// runMatrix is lab matrix: one engine call (engine.RunMatrix, or
// engine.PlanMatrix for --dry-run), the cells' progress into their logs,
// then the summary; the exit status says whether every cell ran and held
// its claims.
func (e *env) runMatrix(ctx context.Context, f matrixFlags) error {
	data, err := os.ReadFile(f.file)
	if err != nil {
		return fmt.Errorf("matrix file: %w", err)
	}
	req := engine.MatrixRequest{File: f.file, Data: data, Out: f.out, Shard: f.shard, Parallel: f.parallel,
		ProfileFiles: f.profileFiles, Command: e.args, Roots: e.roots.engine()}
	if f.dry {
		plan, err := engine.PlanMatrix(req)
		if err != nil {
			return err
		}
		if line := plan.EmptyShard(); line != "" {
			fmt.Fprintln(e.stderr, line)
		}
		return writeCells(e.stdout, plan.Cells, len(plan.All), plan.Shard, f.json)
	}
	opts, err := e.engineOptions(e.stderr)
	if err != nil {
		return err
	}
	opts.Observe = e.warnOptions().Observe
	m, err := engine.RunMatrix(ctx, engine.MatrixCommand{MatrixRequest: req, Baseline: f.baseline, JUnit: f.junit},
		engine.MatrixOptions{Options: opts, CellObserver: observer})
	if m == nil || err != nil {
		return err
	}
	if f.json {
		if err := printJSON(e.stdout, m.State); err != nil {
			return err
		}
	} else {
		matrix.WriteState(e.stdout, m.State, m.Runs)
	}
	s := m.JUnit.Suites[0]
	fmt.Fprintf(e.stderr, "junit: %s (%d cells: %d failed, %d errors, %d not run)\n", m.JUnitPath, s.Tests, s.Failures, s.Errors, s.Skipped)
	if ctx.Err() != nil {
		return &exitCode{code: 130, msg: fmt.Sprintf("interrupted: %d of %d cells done; run the same command again to resume", s.Tests-s.Errors-s.Skipped, s.Tests)}
	}
	if s.Failures+s.Errors > 0 {
		return &exitCode{code: 1, msg: fmt.Sprintf("%d of %d cells failed (see %s and the logs in %s)", s.Failures+s.Errors, s.Tests, m.JUnitPath, filepath.Join(f.out, "logs"))}
	}
	return nil
}

// warnOptions print the engine's events a line each on stderr: for
// commands with no progress to draw.
func (e *env) warnOptions() engine.Options {
	return engine.Options{Observe: func(ev engine.Event) { fmt.Fprintln(e.stderr, ev.String()) }}
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
			if err := matrix.WriteJUnit(matrix.JUnit(st, runs, nil, engine.MatrixClaims(e.roots.engine(), results.StoreDir(out), e.warnOptions())), filepath.Join(out, "junit.xml")); err != nil {
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
