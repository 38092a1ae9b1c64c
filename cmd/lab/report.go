package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"lab/engine"
	rclaims "lab/results/claims"
	"lab/results/history"
	"lab/results/render"
)

func reportCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "one self-contained HTML page: every claim's verdict, our figures beside the published ones, plots, provenance",
		Description: "Writes DIR/index.html (--out, default ./lab-report) and prints its path. The page\n" +
			"needs nothing but itself to be viewed (the stylesheet and the SVG plots are\n" +
			"inline). Per write-up (E1..E5) and plugin experiment: every claim of the\n" +
			"installed plugins with its verdict, judged now from every stored run in its\n" +
			"scope, each stratum (profile, clock, accelerator) apart, with the numbers that\n" +
			"decided it (not run where no run here is in scope, with a command that would;\n" +
			"untestable here and not comparable counted apart), and for each run used\n" +
			"its verdicts, its plot (a sweep against its swept key; a chart its plugin\n" +
			"declares), our medians and the published figures beside them; then the full\n" +
			"provenance of each run used: command, profile, QEMU argv and version,\n" +
			"accelerator, clock, kernel, guest, plugin version, parameters, harness.\n\n" +
			"The runs used are the latest of each plugin, experiment, profile, clock and\n" +
			"parameters (repeats aside), plus every run that gave a verdict shown;\n" +
			"--all-runs uses every run the filters pass. --plugin and --experiment also\n" +
			"narrow the claims shown. A result file that does not load is named on stderr\n" +
			"and skipped.\n\n" +
			"--history adds a History section: the nights given read as lab history reads\n" +
			"them (each a result store or a lab matrix output directory, the flag once a\n" +
			"night; or once, a directory of nights or one store whose runs span nights),\n" +
			"with a plot of each cell and metric that changed, its change points marked\n" +
			"(--alpha, --min-change: docs/history.md), and each claim's verdict night by\n" +
			"night.\n\n" +
			"Examples:\n   lab report\n   lab report --out /tmp/r --profile celeron-2.4 --since 24h\n" +
			"   lab report --history nights/ --out report\n" +
			"   chromium \"$(lab report)\"",
		Flags: append(append([]cli.Flag{storeFlag,
			&cli.StringFlag{Name: "out", Value: "lab-report", Usage: "write index.html into `DIR` (created if needed)"},
			&cli.BoolFlag{Name: "all-runs", Usage: "use every run the filters pass, not only the latest of each"},
			&cli.StringSliceFlag{Name: "history", Usage: "add a History section over the nights `NIGHT`, as lab history reads them; repeatable, one a night, or once a directory of nights"},
		}, changeFlags("with --history: ")...), filterFlags...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("lab report takes no arguments (got %q); pick runs with --profile, --plugin, --experiment, --outcome, --since", c.Args().First())
			}
			dir, err := e.storeDir(c)
			if err != nil {
				return err
			}
			f, err := filterOf(c)
			if err != nil {
				return err
			}
			h, hwarnings, err := e.reportHistory(c)
			if err != nil {
				return err
			}
			in, warnings, skipped := engine.Report(engine.ReportRequest{Store: dir, Filter: f, AllRuns: c.Bool("all-runs"),
				Plugins: e.roots.plugins, Generated: time.Now(), Version: versionString(buildVersion()), ProfileDir: e.roots.profiles})
			in.History = h
			said := map[string]bool{}
			for _, err := range append(warnings, hwarnings...) {
				// The history judges the claims of the same plugins
				// with the same profiles: a warning once.
				if !said[err.Error()] {
					said[err.Error()] = true
					fmt.Fprintf(e.stderr, "warning: %v\n", err)
				}
			}
			warnSkipped(e.stderr, skipped)
			path, err := engine.WriteReportPage(in, c.String("out"))
			if err != nil {
				return err
			}
			used := render.ChooseRuns(in.Runs, in.Claims, in.AllRuns)
			fmt.Fprintf(e.stderr, "report: %d claim(s) (%s), %d of %d stored run(s) used\n", len(in.Claims), rclaims.Counts(in.Claims), len(used), len(in.Runs))
			if h != nil {
				fmt.Fprintf(e.stderr, "report: history of %d night(s), %d of %d series with a change point\n", len(h.Nights), len(h.Changed()), len(h.Series))
			}
			fmt.Fprintln(e.stdout, path)
			return nil
		},
	}
}

// reportHistory is the history lab report --history asks for (nil
// without the flag) and the warnings of the plugins and profiles that
// judge its claims. The nights' skipped result files are named on
// stderr; a night that does not read is an error, and no page is
// written.
func (e *env) reportHistory(c *cli.Context) (*history.History, []error, error) {
	nights := c.StringSlice("history")
	if len(nights) == 0 {
		for _, name := range []string{"alpha", "min-change"} {
			if c.IsSet(name) {
				return nil, nil, fmt.Errorf("--%s sets the change points of --history: give the nights with --history (lab report --history nights/)", name)
			}
		}
		return nil, nil, nil
	}
	o, err := historyOptions(c)
	if err != nil {
		return nil, nil, err
	}
	h, warnings, skipped, err := engine.History(engine.HistoryRequest{Nights: nights, Options: o,
		Plugins: e.roots.plugins, ProfileDir: e.roots.profiles})
	warnSkipped(e.stderr, skipped)
	if err != nil {
		for _, w := range warnings {
			fmt.Fprintf(e.stderr, "warning: %v\n", w)
		}
		return nil, nil, fmt.Errorf("--history: %w", err)
	}
	return h, warnings, nil
}
