package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"lab/engine"
	"lab/results"
	rclaims "lab/results/claims"
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
			"Examples:\n   lab report\n   lab report --out /tmp/r --profile celeron-2.4 --since 24h\n" +
			"   chromium \"$(lab report)\"",
		Flags: append([]cli.Flag{storeFlag,
			&cli.StringFlag{Name: "out", Value: "lab-report", Usage: "write index.html into `DIR` (created if needed)"},
			&cli.BoolFlag{Name: "all-runs", Usage: "use every run the filters pass, not only the latest of each"},
		}, filterFlags...),
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
			in, warnings, skipped := engine.Report(engine.ReportRequest{Store: dir, Filter: f, AllRuns: c.Bool("all-runs"),
				Plugins: e.roots.plugins, Generated: time.Now(), Version: versionString(buildVersion()), ProfileDir: e.roots.profiles})
			for _, err := range warnings {
				fmt.Fprintf(e.stderr, "warning: %v\n", err)
			}
			warnSkipped(e.stderr, skipped)
			path, err := writeReportPage(in, c.String("out"))
			if err != nil {
				return err
			}
			used := render.ChooseRuns(in.Runs, in.Claims, in.AllRuns)
			fmt.Fprintf(e.stderr, "report: %d claim(s) (%s), %d of %d stored run(s) used\n", len(in.Claims), rclaims.Counts(in.Claims), len(used), len(in.Runs))
			fmt.Fprintln(e.stdout, path)
			return nil
		},
	}
}

// writeReportPage writes the report page in into dir/index.html and
// returns its absolute path.
func writeReportPage(in render.ReportInput, dir string) (string, error) {
	var page bytes.Buffer
	if err := render.WriteReport(&page, in); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("report directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, "index.html")
	if err := results.WriteAtomic(path, page.Bytes()); err != nil {
		return "", fmt.Errorf("write report %s: %w", path, err)
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return path, nil
}
