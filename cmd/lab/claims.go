package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"lab/engine"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/render"
)

func claimsCommand(e *env) *cli.Command {
	resultsFlag := &cli.StringFlag{Name: "results", Usage: "result store `DIR` (default: $LAB_RESULTS_DIR, else $XDG_DATA_HOME/lab/results, else ~/.local/share/lab/results)"}
	allFlag := &cli.BoolFlag{Name: "all", Usage: "judge with every stored run in scope, not only the latest run of each cell (profile, kernel, clock, parameters, point)"}
	return &cli.Command{
		Name:  "claims",
		Usage: "the published claims the installed plugins decide, each judged from every stored run in its scope",
		Description: "Every claim every installed plugin declares (SEEDS.md numbers lab's E1.1..E5.2; a\n" +
			"compound claim's parts add a letter, E1.2a), with one verdict judged now, with\n" +
			"the current rules, from every stored run in the claim's scope: the machine,\n" +
			"parameters, sweep points and clocks it was made under. Runs outside it decide\n" +
			"nothing (`show` lists them and why). Each stratum (profile, clock,\n" +
			"accelerator) is decided apart and never pooled; the same stored runs give the\n" +
			"same verdicts whatever their order or file names.\n\n" +
			"Verdicts: reproduced, not reproduced, inconclusive (too few repeats or too\n" +
			"much noise; the reason says what would decide it), not comparable (an\n" +
			"absolute time no clock or calibration here can decide), untestable here (a\n" +
			"property of the original platform), clock-dependent / kernel-dependent\n" +
			"(strata decided both ways), not run (no run in scope). docs/claims.md has the\n" +
			"rules, the word conventions and the calibrations.\n\n" +
			"Examples:\n   lab claims\n   lab claims show E1.6\n   lab claims show E2.1      # every part of a compound claim\n   lab claims --json",
		Flags: []cli.Flag{jsonFlag, resultsFlag, allFlag},
		Action: func(c *cli.Context) error {
			sts, err := e.claimStatuses(c.String("results"), c.Bool("all"))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if sts == nil {
					sts = []rclaims.ClaimStatus{}
				}
				return printJSON(e.stdout, sts)
			}
			if len(sts) == 0 {
				fmt.Fprintf(e.stdout, "no claims: no installed plugin declares one (searched %s)\n", strings.Join(e.roots.plugins.Dirs(), ", "))
				return nil
			}
			return writeClaimsTable(e.stdout, sts)
		},
		Subcommands: []*cli.Command{{
			Name:      "show",
			Usage:     "one claim: statement, source, scope, rule, verdict per stratum, and the stored runs out of its scope",
			ArgsUsage: "ID",
			Description: "ID is a claim (E1.7) or a compound claim, which shows each of its parts\n" +
				"(E1.2: E1.2a and E1.2b).\n\n" +
				"Examples:\n   lab claims show E1.7\n   lab claims show E1.2 --json",
			Flags: []cli.Flag{jsonFlag, resultsFlag, allFlag},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return fmt.Errorf("lab claims show needs one claim ID (see `lab claims`)")
				}
				sts, err := e.claimStatuses(c.String("results"), c.Bool("all"))
				if err != nil {
					return err
				}
				found, err := rclaims.Find(sts, c.Args().First())
				if err != nil {
					return err
				}
				if c.Bool("json") {
					if len(found) == 1 {
						return printJSON(e.stdout, found[0])
					}
					return printJSON(e.stdout, found)
				}
				for i, s := range found {
					if i > 0 {
						fmt.Fprintln(e.stdout)
					}
					render.WriteClaim(e.stdout, s)
				}
				return nil
			},
		}},
	}
}

// verdictCell is a claim's verdict in the table, "by construction"
// marked.
func verdictCell(s rclaims.ClaimStatus) string {
	if s.Judged.ByConstruction != "" && s.Verdict == results.Reproduced {
		return s.Verdict + " (by construction)"
	}
	return s.Verdict
}

// evidenceCell says what a verdict rests on: "3 runs: icount:0 reproduced,
// host inconclusive", "-" when no run is in scope.
func evidenceCell(v results.Verdict) string {
	if len(v.Strata) == 0 {
		return "-"
	}
	var strata []string
	for _, st := range v.Strata {
		strata = append(strata, st.Profile+" "+st.Clock+" "+st.Verdict)
	}
	runs := "runs"
	if len(v.Runs) == 1 {
		runs = "run"
	}
	return fmt.Sprintf("%d %s: %s", len(v.Runs), runs, strings.Join(strata, "; "))
}

// claimStatuses are the installed plugins' claims with their verdicts
// in the result store dir (the default one if ""): engine.ClaimStatuses.
func (e *env) claimStatuses(dir string, all bool) ([]rclaims.ClaimStatus, error) {
	if dir == "" {
		var err error
		if dir, err = e.roots.resultsDir(); err != nil {
			return nil, err
		}
	}
	sts, warnings := engine.ClaimStatuses(e.roots.plugins, e.roots.profiles, dir, all)
	for _, err := range warnings {
		fmt.Fprintf(e.stderr, "warning: %v\n", err)
	}
	return sts, nil
}

// writeClaimsTable is lab claims's table: a claim a line, then the
// counts.
func writeClaimsTable(w io.Writer, sts []rclaims.ClaimStatus) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLAIM\tVERDICT\tPLUGIN/EXPERIMENT\tEVIDENCE\tSTATEMENT")
	for _, s := range sts {
		fmt.Fprintf(tw, "%s\t%s\t%s/%s\t%s\t%s\n", s.Claim.ID, verdictCell(s), s.Claim.Plugin, s.Claim.Bench, evidenceCell(s.Judged), s.Claim.Statement)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d claims: %s\n", len(sts), rclaims.Counts(sts))
	return err
}
