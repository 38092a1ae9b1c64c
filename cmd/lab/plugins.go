package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"lab/plugins"
)

func pluginsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "plugins",
		Usage: "list benchmark plugins, their experiments, parameters and metrics",
		Description: "Plugins are found, in order, among the built-ins installed with lab, in\n" +
			e.roots.plugins.User + ", and in each directory of $LAB_PLUGIN_PATH. What a plugin\n" +
			"can run is read from the description recorded beside its builds when it was\n" +
			"built (NAME/ARCH/description.json); no plugin code runs on the host.\n\n" +
			"Examples:\n   lab plugins\n   lab plugins show forkbench --json",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			descs, errs := e.roots.plugins.DescribeAll()
			for _, err := range errs {
				fmt.Fprintf(e.stderr, "warning: %v\n", err)
			}
			if c.Bool("json") {
				return printJSON(e.stdout, descs)
			}
			if len(descs) == 0 {
				fmt.Fprintf(e.stdout, "no plugins found (searched %s); run `make build`\n", strings.Join(e.roots.plugins.Dirs(), ", "))
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PLUGIN\tEXPERIMENT\tPARAMETERS\tMETRICS")
			for _, d := range descs {
				for i, x := range d.Experiments {
					name := ""
					if i == 0 {
						name = d.Name + " " + d.Version
					}
					var ps, ms []string
					for _, p := range x.Params {
						ps = append(ps, fmt.Sprintf("%s=%s", p.Name, p.Default))
					}
					for _, m := range x.Metrics {
						ms = append(ms, fmt.Sprintf("%s (%s)", m.Name, m.Unit))
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, x.Name, strings.Join(ps, " "), strings.Join(ms, ", "))
				}
			}
			return tw.Flush()
		},
		Subcommands: []*cli.Command{{
			Name:        "show",
			Usage:       "describe one plugin in full",
			ArgsUsage:   "NAME",
			Description: "Example:\n   lab plugins show forkbench",
			Flags:       []cli.Flag{jsonFlag},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return fmt.Errorf("lab plugins show needs one NAME (see `lab plugins`)")
				}
				d, err := e.roots.plugins.Describe(c.Args().First())
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(e.stdout, d)
				}
				writeDescription(e.stdout, d)
				return nil
			},
		}},
	}
}

func writeDescription(w io.Writer, d *plugins.Description) {
	fmt.Fprintf(w, "%s %s: %s\n", d.Name, d.Version, d.Summary)
	for i, x := range d.Experiments {
		def := ""
		if i == 0 {
			def = " (default)"
		}
		fmt.Fprintf(w, "\nexperiment %s%s: %s\n", x.Name, def, x.Summary)
		fmt.Fprintln(w, "  parameters (-p NAME=VALUE):")
		for _, p := range x.Params {
			fmt.Fprintf(w, "    %s\n", p.String())
		}
		fmt.Fprintln(w, "  metrics:")
		for _, m := range x.Metrics {
			fmt.Fprintf(w, "    %-24s %-4s %s\n", m.Name, m.Unit, m.Help)
		}
		if len(x.References) > 0 {
			fmt.Fprintln(w, "  published figures it is compared with:")
			for _, r := range x.References {
				fmt.Fprintf(w, "    %-24s %10g %-3s %s (%s)\n", r.Metric, r.Value, r.Unit, r.Machine, r.Source)
			}
		}
		if len(x.Claims) > 0 {
			fmt.Fprintln(w, "  claims it decides (see `lab claims show ID`):")
			for _, c := range x.Claims {
				fmt.Fprintf(w, "    %-6s %-9s %s\n", c.ID, c.Kind(), c.Statement)
			}
		}
	}
}
