package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"

	"lab/images"
	"lab/vm"
)

func profilesCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "profiles",
		Usage: "list the machines lab can emulate",
		Description: "Built-in profiles, plus your own from the profiles directory\n" +
			"(" + e.roots.profiles + ") and --profile-file. CONSOLE is the guest's\n" +
			"console: serial (the serial port only), vga (VGA text VTs, tty1 shown) or fb\n" +
			"(VTs on a VESA framebuffer drawn by fbcon); printfbench's VT targets need vga or fb.\n\n" +
			"Examples:\n   lab profiles\n   lab profiles show xeon5130-fb",
		Flags: []cli.Flag{profileFileFlag, jsonFlag},
		Action: func(c *cli.Context) error {
			cat, err := images.LoadCatalog(e.roots.profiles, c.StringSlice("profile-file")...)
			if err != nil {
				return err
			}
			rows := cat.Summaries()
			if c.Bool("json") {
				return printJSON(e.stdout, rows)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tARCH\tCPU IDENTITY\tCPUS\tMEMORY\tKERNEL\tSTACK\tCONSOLE\tREPRODUCES")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d MB\t%s\t%d KB\t%s\t%s\n", r.Name, r.Arch, r.CPU, r.Online, r.Present, r.MemoryMB, r.Kernel, r.StackKB, r.Console, strings.Join(r.Experiments, ","))
			}
			return tw.Flush()
		},
		Subcommands: []*cli.Command{{
			Name:      "show",
			Usage:     "print a resolved profile and the exact QEMU command line",
			ArgsUsage: "NAME",
			Description: "Examples:\n   lab profiles show celeron-2.4\n" +
				"   lab profiles show xeon5130-1core --json --accel kvm",
			Flags: []cli.Flag{profileFileFlag, jsonFlag,
				&cli.StringFlag{Name: "accel", Value: "tcg", Usage: "accelerator to show the command line for (kvm or tcg)"},
				&cli.StringFlag{Name: "clock", Usage: "clock to show the command line for (default: the profile's)"}},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return fmt.Errorf("lab profiles show needs one NAME (see `lab profiles`)")
				}
				p, err := images.Lookup(e.roots.profiles, c.Args().First(), c.StringSlice("profile-file")...)
				if err != nil {
					return err
				}
				// What the profile names must exist: a command line
				// that cannot boot is not one to show.
				var problems []string
				if err := e.roots.cache.CheckKernelKnown(p.Kernel); err != nil {
					problems = append(problems, err.Error())
				}
				if err := vm.CheckCPUModel(e.roots.path, p.Arch, p.CPU.Model); err != nil {
					problems = append(problems, err.Error())
				}
				if len(problems) > 0 {
					return fmt.Errorf("profile %s cannot boot:\n  %s\nfix its profile file", p.Name, strings.Join(problems, "\n  "))
				}
				cs := c.String("clock")
				if cs == "" {
					cs = p.Clock
				}
				clock, err := vm.ParseClock(cs)
				if err != nil {
					return err
				}
				argv, err := e.roots.vm.CommandLine(e.roots.cache, p, c.String("accel"), clock)
				if err != nil {
					return err
				}
				if c.Bool("json") {
					return printJSON(e.stdout, map[string]any{"profile": p, "qemu_argv": argv})
				}
				b, err := yaml.Marshal(p)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s\n# QEMU command line (%s, clock %s):\n%s\n", b, c.String("accel"), clock, vm.ShellQuote(argv))
				return nil
			},
		}},
	}
}
