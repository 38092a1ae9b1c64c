package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"lab/plugins"
	"lab/plugins/host"
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
			"installed plugins with its latest verdict and the numbers that decided it (not\n" +
			"run where no run here did, with a command that would), and for each run used\n" +
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
			in := render.ReportInput{Generated: time.Now(), Version: versionString(buildVersion()), Store: dir, Filter: f,
				AllRuns: c.Bool("all-runs"), SearchPath: e.roots.plugins.Dirs()}
			all := e.reportExperiments()
			in.Experiments = narrow(all, f)
			// The sections: the write-ups every installed plugin declares.
			if in.WriteUps, err = render.WriteUpsOf(all); err != nil {
				fmt.Fprintf(e.stderr, "warning: %v\n", err)
			}
			var claims []results.Claim
			for _, x := range in.Experiments {
				claims = append(claims, x.Claims...)
			}
			sortClaims(claims)
			runs, errs := results.Select(dir, f)
			warnSkipped(e.stderr, errs)
			for _, err := range errs {
				in.Skipped = append(in.Skipped, err.Error())
			}
			in.Runs = runs
			in.Claims = rclaims.ClaimStatuses(claims, runs)

			var page bytes.Buffer
			if err := render.WriteReport(&page, in); err != nil {
				return err
			}
			out := c.String("out")
			if err := os.MkdirAll(out, 0o755); err != nil {
				return fmt.Errorf("report directory %s: %w", out, err)
			}
			path := filepath.Join(out, "index.html")
			if err := writeFileAtomic(path, page.Bytes()); err != nil {
				return fmt.Errorf("write report %s: %w", path, err)
			}
			if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			used := render.ChooseRuns(runs, in.Claims, in.AllRuns)
			fmt.Fprintf(e.stderr, "report: %d claim(s) (%s), %d of %d stored run(s) used\n", len(in.Claims), statusCounts(in.Claims), len(used), len(runs))
			fmt.Fprintln(e.stdout, path)
			return nil
		},
	}
}

// reportExperiments is every installed plugin's experiments with their
// metrics, published figures, claims and views. A plugin whose
// description does not read is a warning.
func (e *env) reportExperiments() []render.ReportExperiment {
	var out []render.ReportExperiment
	for _, name := range e.roots.plugins.List() {
		d, err := e.roots.plugins.Describe(name)
		if err != nil {
			fmt.Fprintf(e.stderr, "warning: %v\n", err)
			continue
		}
		for i := range d.Experiments {
			out = append(out, reportExperiment(d, &d.Experiments[i]))
		}
	}
	return out
}

// narrow is the experiments of exps that f's plugin and experiment pick.
func narrow(exps []render.ReportExperiment, f results.Filter) []render.ReportExperiment {
	var out []render.ReportExperiment
	for _, x := range exps {
		if (f.Plugin == "" || x.Plugin == f.Plugin) && (f.Experiment == "" || x.Name == f.Experiment) {
			out = append(out, x)
		}
	}
	return out
}

func reportExperiment(d *plugins.Description, x *plugins.Experiment) render.ReportExperiment {
	re := render.ReportExperiment{Plugin: d.Name, PluginVersion: d.Version, Name: x.Name, Summary: x.Summary,
		References: host.References(x), Claims: host.Claims(d.Name, x), Views: host.Views(x), ParamHelp: map[string]string{}}
	for _, m := range x.Metrics {
		re.Metrics = append(re.Metrics, m.Name)
	}
	for _, p := range x.Params {
		re.ParamHelp[p.Name] = p.Help
	}
	return re
}

// statusCounts is "2 reproduced, 5 not run".
func statusCounts(sts []rclaims.ClaimStatus) string {
	n := map[string]int{}
	for _, s := range sts {
		n[s.Verdict]++
	}
	var parts []string
	for _, v := range []string{results.Reproduced, results.NotReproduced, results.Inconclusive, results.NotComparable, results.NotRun} {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// writeFileAtomic replaces path with data, whole or not at all.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".report-*.html")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
