package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"lab/results"
	"lab/results/compare"
	"lab/results/matrix"
)

// compareReport is `lab compare --json`.
type compareReport struct {
	A           compareSide      `json:"a"`
	B           compareSide      `json:"b"`
	Changes     []compare.Change `json:"changes"`
	Regressions []compare.Change `json:"regressions,omitempty"`
}

type compareSide struct {
	Name string   `json:"name"`
	Runs []string `json:"runs"`
}

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
			"rates: a unit per second) and larger than PCT percent.\n\n" +
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
			if isDir(c.Args().Get(0)) || isDir(c.Args().Get(1)) {
				return e.compareStores(c.Args().Get(0), c.Args().Get(1), c.Bool("force"), c.Float64("fail-on-regression"), c.Bool("json"))
			}
			a, err := compareSideOf(e, dir, c.Args().Get(0))
			if err != nil {
				return err
			}
			b, err := compareSideOf(e, dir, c.Args().Get(1))
			if err != nil {
				return err
			}
			if !c.Bool("force") {
				if err := compare.CheckComparable(a, b); err != nil {
					return err
				}
			}
			changes := compare.CompareSides(a, b)
			if len(changes) == 0 {
				return fmt.Errorf("%s and %s have no samples to compare", a.Name, b.Name)
			}
			common := 0
			for _, ch := range changes {
				if ch.Only == "" {
					common++
				}
			}
			if common == 0 {
				return fmt.Errorf("%s and %s share no metric (are they runs of the same experiment?); nothing to compare", a.Name, b.Name)
			}
			pct := c.Float64("fail-on-regression")
			var regs []compare.Change
			if pct >= 0 {
				regs = compare.Regressions(changes, pct)
			}
			if c.Bool("json") {
				rep := compareReport{A: sideJSON(a), B: sideJSON(b), Changes: changes, Regressions: regs}
				if err := printJSON(e.stdout, rep); err != nil {
					return err
				}
			} else if err := compare.WriteChanges(e.stdout, a, b, changes); err != nil {
				return err
			}
			if len(regs) > 0 {
				var names []string
				for _, r := range regs {
					names = append(names, fmt.Sprintf("%s%s %+.1f%%", r.Metric, labelsSuffix(r.Labels), r.Percent))
				}
				return &exitCode{code: 1, msg: fmt.Sprintf("%d regression(s) beyond %g%%: %s", len(regs), pct, strings.Join(names, ", "))}
			}
			return nil
		},
	}
}

func labelsSuffix(l map[string]string) string {
	if len(l) == 0 {
		return ""
	}
	return " {" + results.FormatLabels(l) + "}"
}

func sideJSON(s compare.Side) compareSide {
	out := compareSide{Name: s.Name, Runs: []string{}}
	for _, r := range s.Runs {
		out.Runs = append(out.Runs, r.ID)
	}
	return out
}

// compareSideOf reads one side: a filter (it has '=' and is not a path)
// or one run.
func compareSideOf(e *env, dir, arg string) (compare.Side, error) {
	if strings.Contains(arg, "=") && !strings.HasSuffix(arg, ".json") {
		f, err := results.ParseFilter(arg, time.Now())
		if err != nil {
			return compare.Side{}, err
		}
		runs, errs := results.Select(dir, f)
		warnSkipped(e.stderr, errs)
		if len(runs) == 0 {
			return compare.Side{}, fmt.Errorf("filter %s picks no run in %s; see `lab results`", arg, dir)
		}
		return compare.Side{Name: arg, Runs: runs}, nil
	}
	path, err := e.resolveRun(dir, arg)
	if err != nil {
		return compare.Side{}, err
	}
	r, err := results.Load(path)
	if err != nil {
		return compare.Side{}, fmt.Errorf("%w (a corrupt or truncated result file)", err)
	}
	if r.Outcome.Status == "failed" && len(r.Samples) == 0 {
		return compare.Side{}, errors.New("run " + r.ID + " failed before measuring anything: " + r.Outcome.Reason)
	}
	return compare.Side{Name: r.ID, Runs: []*results.Result{r}}, nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// storeOf is a directory's runs: a result store, or a lab matrix output
// directory (its results/).
func storeOf(e *env, dir string) ([]*results.Result, error) {
	if !isDir(dir) {
		return nil, fmt.Errorf("%s is not a directory: compare two result stores, or two runs", dir)
	}
	if isDir(matrix.StoreDir(dir)) {
		dir = matrix.StoreDir(dir)
	}
	runs, errs := results.LoadAll(dir)
	warnSkipped(e.stderr, errs)
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s holds no runs", dir)
	}
	return runs, nil
}

// storeCell is one cell's comparison between two stores.
type storeCell struct {
	Cell    string           `json:"cell"`
	A       string           `json:"a"`
	B       string           `json:"b"`
	Changes []compare.Change `json:"changes"`
}

// compareStores compares two stores cell by cell: every newest run of B
// per cell against A's newest run of the same cell.
func (e *env) compareStores(aDir, bDir string, force bool, pct float64, asJSON bool) error {
	as, err := storeOf(e, aDir)
	if err != nil {
		return err
	}
	bs, err := storeOf(e, bDir)
	if err != nil {
		return err
	}
	newest := func(runs []*results.Result) (map[string]*results.Result, []string) {
		m := map[string]*results.Result{}
		var keys []string
		for _, r := range runs { // newest first
			k := matrix.CellKey(r)
			if _, ok := m[k]; !ok {
				m[k] = r
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		return m, keys
	}
	am, _ := newest(as)
	bm, bkeys := newest(bs)
	var cells []storeCell
	var regs []string
	var only []string
	for _, k := range bkeys {
		a, ok := am[k]
		if !ok {
			only = append(only, k)
			continue
		}
		sa := compare.Side{Name: a.ID, Runs: []*results.Result{a}}
		sb := compare.Side{Name: bm[k].ID, Runs: []*results.Result{bm[k]}}
		if !force {
			if err := compare.CheckComparable(sa, sb); err != nil {
				return fmt.Errorf("cell %s: %w", k, err)
			}
		}
		cs := storeCell{Cell: k, A: sa.Name, B: sb.Name, Changes: compare.CompareSides(sa, sb)}
		cells = append(cells, cs)
		if pct >= 0 {
			for _, r := range compare.Regressions(cs.Changes, pct) {
				regs = append(regs, fmt.Sprintf("%s: %s%s %+.1f%%", k, r.Metric, labelsSuffix(r.Labels), r.Percent))
			}
		}
		if !asJSON {
			fmt.Fprintf(e.stdout, "== %s\n", k)
			if err := compare.WriteChanges(e.stdout, sa, sb, cs.Changes); err != nil {
				return err
			}
			fmt.Fprintln(e.stdout)
		}
	}
	if len(cells) == 0 {
		return fmt.Errorf("%s and %s share no cell (the same plugin, experiment, profile, clock and parameters): nothing to compare", aDir, bDir)
	}
	if asJSON {
		if err := printJSON(e.stdout, cells); err != nil {
			return err
		}
	}
	for _, k := range only {
		fmt.Fprintf(e.stderr, "note: cell %s is only in %s\n", k, bDir)
	}
	if len(regs) > 0 {
		return &exitCode{code: 1, msg: fmt.Sprintf("%d regression(s) beyond %g%%: %s", len(regs), pct, strings.Join(regs, "; "))}
	}
	return nil
}
