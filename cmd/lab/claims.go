package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"lab/engine"
	rclaims "lab/results/claims"
	"lab/results/render"
)

func claimsCommand(e *env) *cli.Command {
	resultsFlag := &cli.StringFlag{Name: "results", Usage: "result store `DIR` (default: $LAB_RESULTS_DIR, else $XDG_DATA_HOME/lab/results, else ~/.local/share/lab/results)"}
	return &cli.Command{
		Name:  "claims",
		Usage: "the published claims the installed plugins decide, with their latest verdicts",
		Description: "Every claim every installed plugin declares (SEEDS.md numbers lab's E1.1..E5.2),\n" +
			"with the latest verdict a stored run gave it and that run, or `not run`. A\n" +
			"verdict is reproduced, not reproduced, inconclusive (too few samples or too\n" +
			"much noise: the rule is stated), or not comparable (an absolute time under\n" +
			"the host clock); runs that did not decide a claim are left out.\n\n" +
			"Examples:\n   lab claims\n   lab claims show E1.6\n   lab claims --json",
		Flags: []cli.Flag{jsonFlag, resultsFlag},
		Action: func(c *cli.Context) error {
			sts, err := e.claimStatuses(c.String("results"))
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
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CLAIM\tVERDICT\tPLUGIN/EXPERIMENT\tDECIDED BY\tSTATEMENT")
			for _, s := range sts {
				by := "-"
				switch runs := s.Judged.Runs; len(runs) {
				case 0:
				case 1:
					by = runs[0]
				default:
					by = fmt.Sprintf("%s and %d more", runs[0], len(runs)-1)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s/%s\t%s\t%s\n", s.Claim.ID, s.Verdict, s.Claim.Plugin, s.Claim.Bench, by, s.Claim.Statement)
			}
			return tw.Flush()
		},
		Subcommands: []*cli.Command{{
			Name:        "show",
			Usage:       "one claim: statement, source, how it is decided, every run that decided it",
			ArgsUsage:   "ID",
			Description: "Example:\n   lab claims show E1.7",
			Flags:       []cli.Flag{jsonFlag, resultsFlag},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return fmt.Errorf("lab claims show needs one claim ID (see `lab claims`)")
				}
				sts, err := e.claimStatuses(c.String("results"))
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

// claimStatuses are the installed plugins' claims with their verdicts
// in the result store dir (the default one if ""): engine.ClaimStatuses.
func (e *env) claimStatuses(dir string) ([]rclaims.ClaimStatus, error) {
	if dir == "" {
		var err error
		if dir, err = e.roots.resultsDir(); err != nil {
			return nil, err
		}
	}
	sts, warnings := engine.ClaimStatuses(e.roots.plugins, e.roots.profiles, dir, false)
	for _, err := range warnings {
		fmt.Fprintf(e.stderr, "warning: %v\n", err)
	}
	return sts, nil
}
