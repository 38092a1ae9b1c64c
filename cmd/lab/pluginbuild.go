package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"lab/plugins/host"
)

func pluginBuildCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "plugin",
		Usage:     "work on your own plugins",
		ArgsUsage: " ",
		Description: "See README.md, \"Writing a plugin\".\n\n" +
			"Example:\n   lab plugin build ./examples/syscallbench && lab run syscallbench",
		Subcommands: []*cli.Command{{
			Name:      "build",
			Usage:     "build a plugin directory for every guest arch",
			ArgsUsage: "DIR",
			Description: "DIR is a Go main package that serves its DIR/description.json (the\n" +
				"plugin's description in the canonical JSON form of lab.plugin.v1.Description,\n" +
				"embedded with go:embed and handed to plugins.Serve), optionally with C\n" +
				"workloads in DIR/workload/*.c. The description is validated first; the Go\n" +
				"program is built static for each guest arch (GOARCH=386 GO386=softfloat for\n" +
				"i386: the old CPU models have no SSE2), each workload with the arch's C\n" +
				"compiler (-static -O2 -pthread, with lab's <lab.h> on the include path:\n" +
				"prog, die, now, parse_long, tv_s, flush_results, finish), into\n" +
				"OUT/NAME/ARCH/, where `lab run NAME` finds it, and the description is\n" +
				"recorded beside each binary with its sha256 (OUT/NAME/ARCH/description.json).\n" +
				"NAME is DIR's base name.\n\n" +
				"Example:\n   lab plugin build ./myplugin && lab run myplugin",
			Flags: []cli.Flag{&cli.StringFlag{Name: "out", Value: e.roots.plugins.User, Usage: "plugin directory to install into"}},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return fmt.Errorf("lab plugin build needs one DIR")
				}
				out, err := host.Build(c.Context, c.Args().First(), c.String("out"), e.stderr)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "built %s\n", out)
				return nil
			},
		}},
	}
}
