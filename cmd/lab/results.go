package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"lab/results"
	"lab/results/render"
)

// storeFlag is the result store a command reads.
var storeFlag = &cli.StringFlag{Name: "results", Usage: "result store `DIR` (default: $LAB_RESULTS_DIR, else $XDG_DATA_HOME/lab/results, else ~/.local/share/lab/results)"}

var formatFlag = &cli.StringFlag{Name: "format", Value: "table", Usage: "output `FORMAT`: " + strings.Join(render.Formats, ", ")}

// filterFlags select stored runs.
var filterFlags = []cli.Flag{
	&cli.StringFlag{Name: "profile", Usage: "only runs on `PROFILE`"},
	&cli.StringFlag{Name: "plugin", Usage: "only runs of `PLUGIN`"},
	&cli.StringFlag{Name: "experiment", Aliases: []string{"e"}, Usage: "only runs of `EXPERIMENT`"},
	&cli.StringFlag{Name: "outcome", Usage: "only runs that ended `STATUS`: " + strings.Join(results.Outcomes, ", ")},
	&cli.StringFlag{Name: "since", Usage: "only runs started since `WHEN`: a duration back from now (24h), a day (2026-12-01) or an RFC 3339 time"},
}

func (e *env) storeDir(c *cli.Context) (string, error) {
	if d := c.String("results"); d != "" {
		return d, nil
	}
	return e.roots.resultsDir()
}

func filterOf(c *cli.Context) (results.Filter, error) {
	f := results.Filter{Profile: c.String("profile"), Plugin: c.String("plugin"), Experiment: c.String("experiment"), Outcome: c.String("outcome")}
	if f.Outcome != "" {
		if _, err := results.ParseFilter("outcome="+f.Outcome, time.Now()); err != nil {
			return f, fmt.Errorf("--outcome %s: want one of %s", f.Outcome, strings.Join(results.Outcomes, ", "))
		}
	}
	if s := c.String("since"); s != "" {
		t, err := results.ParseSince(s, time.Now())
		if err != nil {
			return f, fmt.Errorf("--%w", err)
		}
		f.Since = t
	}
	return f, nil
}

// warnSkipped reports the result files that did not load: by name, and
// what to do; they never stop the command.
func warnSkipped(w io.Writer, errs []error) {
	for _, err := range errs {
		fmt.Fprintf(w, "warning: skipped %v (a corrupt or truncated result file: move it out of the store, or delete it)\n", err)
	}
}

func resultsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "results",
		Usage: "list, show and export stored runs",
		Description: "Lists the runs in the result store, newest first, with their outcome and\n" +
			"what their claims' verdicts were; the flags pick runs. --format exports the\n" +
			"runs picked: json (the stored documents), csv (one row per sample), junit\n" +
			"(a suite per run: the run and each claim a test case, a claim not reproduced\n" +
			"a failure), markdown or gobench (Go's benchmark format, one line per sample\n" +
			"named after its cell and labels, times in ns/op: what benchstat and\n" +
			"github-action-benchmark's go tool read). A result file that does not load is\n" +
			"reported by name and skipped.\n\n" +
			"Examples:\n   lab results\n   lab results --plugin forkbench --since 24h\n" +
			"   lab results --profile celeron-2.4 --format csv > runs.csv\n" +
			"   lab results --format gobench > new.txt && benchstat old.txt new.txt\n" +
			"   lab results show latest\n   lab results show 20261201T1340 --format junit",
		Flags: append([]cli.Flag{storeFlag, formatFlag, jsonFlag}, filterFlags...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("lab results takes no arguments (got %q); to see one run: lab results show ID", c.Args().First())
			}
			dir, err := e.storeDir(c)
			if err != nil {
				return err
			}
			f, err := filterOf(c)
			if err != nil {
				return err
			}
			runs, errs := results.Select(dir, f)
			warnSkipped(e.stderr, errs)
			format := c.String("format")
			if c.Bool("json") {
				format = "json"
			}
			if format == "json" {
				// A list is an array, of one run or none too.
				if runs == nil {
					runs = []*results.Result{}
				}
				return printJSON(e.stdout, runs)
			}
			if format != "table" {
				return render.Export(e.stdout, format, runs)
			}
			if len(runs) == 0 {
				what := "no runs"
				if !f.Empty() {
					what += " match " + f.String()
				}
				fmt.Fprintf(e.stdout, "%s in %s; `lab run PLUGIN` makes one\n", what, dir)
				return nil
			}
			return render.WriteRuns(e.stdout, runs)
		},
		Subcommands: []*cli.Command{mergeCommand(e), {
			Name:        "show",
			Usage:       "one stored run: its summary, verdicts, published figures and provenance",
			ArgsUsage:   "ID",
			Description: "ID is a run's ID, a unique prefix of one, latest, or a result file's path.\n\nExamples:\n   lab results show latest\n   lab results show latest --format markdown\n   lab results show latest --format gobench > new.txt",
			Flags:       []cli.Flag{storeFlag, formatFlag, jsonFlag},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return fmt.Errorf("lab results show needs one run ID (see `lab results`), or latest")
				}
				dir, err := e.storeDir(c)
				if err != nil {
					return err
				}
				r, skipped, err := results.LoadRef(dir, c.Args().First())
				warnSkipped(e.stderr, skipped)
				if err != nil {
					return err
				}
				format := c.String("format")
				if c.Bool("json") {
					format = "json"
				}
				return render.Export(e.stdout, format, []*results.Result{r})
			},
		}},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
