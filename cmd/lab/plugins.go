package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"lab/plugins/host"
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
			return host.WriteList(e.stdout, descs)
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
				host.WriteDescription(e.stdout, d)
				return nil
			},
		}},
	}
}
