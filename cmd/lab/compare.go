package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"lab/results/compare"
	"lab/results/matrix"
)

func compareCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "whether two runs (or two sets of runs) differ, or only by noise",
		ArgsUsage: "A B",
		Description: "Sets B against A, metric by metric (and label set): each side's median with\n" +
			"its 95% confidence interval, and the change, tested the way Go's benchstat\n" +
			"does it (golang.org/x/perf/benchmath): a two-sided Mann-Whitney U test at\n" +
			"alpha 0.05; the change is ~ when the test finds none. A side with fewer than\n" +
			"4 samples cannot show a change and is warned about; a confidence interval\n" +
			"needs 6. Each of A and B is a run (an ID, a unique prefix, latest, a path) or\n" +
			"a filter picking a set of runs whose samples are pooled: comma-separated\n" +
			"key=value with keys profile, plugin, experiment, outcome, since. When A and\n" +
			"B are directories (result stores, or lab matrix output directories) they are\n" +
			"compared cell by cell: each run of B against the newest run of A with the\n" +
			"same plugin, experiment, profile, clock and parameters.\n\n" +
			"Runs on different accelerators, clocks or profiles, of other experiments or\n" +
			"with other parameters (the repeat count aside) are refused, naming the\n" +
			"difference, unless --force. With --fail-on-regression PCT the command exits 1\n" +
			"when a change is significant, the worse way (up for times and sizes, down for\n" +
			"rates: a unit per second) and larger than PCT percent. For more than two\n" +
			"nights, `lab history` reads them as a series and finds their change points.\n\n" +
			"Examples:\n   lab compare 20261130T0200 latest\n" +
			"   lab compare experiment=forktime,since=48h,outcome=ok latest --fail-on-regression 5\n" +
			"   lab compare last-night/results nightly/results --fail-on-regression 5\n" +
			"   lab compare A B --json",
		Flags: []cli.Flag{storeFlag, jsonFlag,
			&cli.BoolFlag{Name: "force", Usage: "compare runs made with different accelerators, clocks, profiles, experiments or parameters"},
			&cli.Float64Flag{Name: "fail-on-regression", Value: -1, Usage: "exit 1 if a significant change is worse by more than `PCT` percent"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return fmt.Errorf("lab compare needs two sides, A and B: run IDs (see `lab results`), latest, or filters such as profile=celeron-2.4,since=24h")
			}
			dir, err := e.storeDir(c)
			if err != nil {
				return err
			}
			force, pct, asJSON := c.Bool("force"), c.Float64("fail-on-regression"), c.Bool("json")
			if matrix.IsStore(c.Args().Get(0)) || matrix.IsStore(c.Args().Get(1)) {
				return e.compareStores(c.Args().Get(0), c.Args().Get(1), force, pct, asJSON)
			}
			var sides [2]compare.Side
			for i := range sides {
				s, skipped, err := compare.SideOf(dir, c.Args().Get(i), time.Now())
				warnSkipped(e.stderr, skipped)
				if err != nil {
					return err
				}
				sides[i] = s
			}
			rep, err := compare.Sides(sides[0], sides[1], force, pct)
			if err != nil {
				return err
			}
			if asJSON {
				if err := printJSON(e.stdout, rep); err != nil {
					return err
				}
			} else if err := compare.WriteChanges(e.stdout, sides[0], sides[1], rep.Changes); err != nil {
				return err
			}
			if len(rep.Regressions) > 0 {
				names := compare.Summaries(rep.Regressions)
				return &exitCode{code: 1, msg: fmt.Sprintf("%d regression(s) beyond %g%%: %s", len(names), pct, strings.Join(names, ", "))}
			}
			return nil
		},
	}
}

// compareStores compares two stores cell by cell (matrix.CompareStores).
func (e *env) compareStores(aDir, bDir string, force bool, pct float64, asJSON bool) error {
	cmp, skipped, err := matrix.CompareStores(aDir, bDir, force, pct)
	warnSkipped(e.stderr, skipped)
	if cmp != nil && !asJSON {
		if err := matrix.WriteStoreCells(e.stdout, cmp.Cells); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	if asJSON {
		if err := printJSON(e.stdout, cmp.Cells); err != nil {
			return err
		}
	}
	for _, k := range cmp.Only {
		fmt.Fprintf(e.stderr, "note: cell %s is only in %s\n", k, bDir)
	}
	if len(cmp.Regressions) > 0 {
		return &exitCode{code: 1, msg: fmt.Sprintf("%d regression(s) beyond %g%%: %s", len(cmp.Regressions), pct, strings.Join(cmp.Regressions, "; "))}
	}
	return nil
}
