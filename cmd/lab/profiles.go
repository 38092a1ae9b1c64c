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

// profileRow is one line of `lab profiles`.
type profileRow struct {
	Name     string `json:"name"`
	Arch     string `json:"arch"`
	CPU      string `json:"cpu"`
	Online   int    `json:"cpus_online"`
	Present  int    `json:"cpus_present"`
	MemoryMB int    `json:"memory_mb"`
	Kernel   string `json:"kernel"`
	StackKB  int    `json:"stack_kb"`
	// Console is the console kind: serial, vga or fb (virtual terminals
	// on an emulated screen with the last two).
	Console     string   `json:"console"`
	Experiments []string `json:"experiments"`
	Source      string   `json:"source"`
	Summary     string   `json:"summary"`
}

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
			rows := []profileRow{}
			for _, p := range cat.Profiles() {
				stack := p.Guest.StackKB
				if stack == 0 {
					stack = 8192
				}
				rows = append(rows, profileRow{Name: p.Name, Arch: p.Arch, CPU: cpuIdentity(p.CPU),
					Online: p.Topology.OnlineCPUs(), Present: p.Topology.Present(), MemoryMB: p.MemoryMB,
					Kernel: p.Kernel, StackKB: stack, Console: p.ConsoleKind(), Experiments: p.Experiments, Source: cat.Source(p.Name), Summary: p.Summary})
			}
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
				cs := c.String("clock")
				if cs == "" {
					cs = p.Clock
				}
				clock, err := vm.ParseClock(cs)
				if err != nil {
					return err
				}
				kernel, initrd := "KERNEL", "INITRD"
				if k, err := e.roots.cache.LoadKernel(p.Kernel); err == nil {
					sha, _ := k.BootImage(p, false)
					kernel = e.roots.cache.BlobPath(sha)
				}
				argv, err := vm.Args(vm.Options{Profile: p, Kernel: kernel, Initrd: initrd, StateDir: e.roots.vm.Dir(p.Name), Accel: c.String("accel"), Clock: clock})
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
				fmt.Fprintf(e.stdout, "%s\n# QEMU command line (%s, clock %s):\n%s\n", b, c.String("accel"), clock, shellQuote(argv))
				return nil
			},
		}},
	}
}

func cpuIdentity(c images.CPU) string {
	id := c.ModelID
	if id == "" {
		id = c.Model
	}
	id = strings.Join(strings.Fields(id), " ")
	if c.Family != 0 {
		id += fmt.Sprintf(" (family %d model %d)", c.Family, c.ModelNumber)
	}
	return id
}

// shellQuote renders argv so it can be pasted into a shell.
func shellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=.,/:+", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
