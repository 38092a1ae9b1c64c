package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"lab/engine"
	"lab/vm"
)

type upFlags struct {
	profile string
	name    string
	accel   string
	clock   string
	memory  int
	files   []string
	cold    bool
	bzImage bool
	link    string
	json    bool
}

func upCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "up",
		Usage:     "boot a VM from a profile and wait until its agent answers",
		ArgsUsage: "PROFILE",
		Description: "Boots the profile's machine under a detached supervisor and returns when the\n" +
			"guest agent answers over the link, printing the boot time, the accelerator\n" +
			"and the clock really used. The VM runs until `lab down`.\n\n" +
			"Examples:\n" +
			"   lab up celeron-2.4\n" +
			"   lab up xeon5130-2core --name xeon --memory 1024\n" +
			"   lab up celeron-2.4 --clock icount:3   # deterministic guest time (TCG, 1 CPU)\n\n" +
			"The first boot of a configuration saves the machine's state when its agent\n" +
			"waits for the host; later boots restore it (~1-2 s instead of ~6 s under TCG).\n" +
			"--cold boots from scratch.\n\n" +
			"Kernels lab builds (`lab image build`) have a PVH entry: QEMU enters their\n" +
			"uncompressed vmlinux directly, with no real-mode setup and nothing to\n" +
			"decompress. --bzimage boots their compressed bzImage instead, to compare (an\n" +
			"fb console always does: its VESA mode is set by the real-mode setup).\n\n" +
			"--link chooses the device the host-guest link runs over, to compare them: port\n" +
			"(a named virtio-serial port, the default on 6.1), hvc (the virtio console's\n" +
			"single port, the default on 2.6.32, whose driver has no named ports) or uart\n" +
			"(the second 16550 UART). The default is the kernel's.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "VM name (default: the profile name)"},
			&cli.StringFlag{Name: "accel", Value: "auto", Usage: "accelerator: auto (prove KVM, else TCG), kvm or tcg"},
			&cli.StringFlag{Name: "clock", Usage: "guest clock: host, icount or icount:SHIFT (TCG, one online CPU); default: the profile's clock, else host"},
			&cli.IntFlag{Name: "memory", Usage: "override the profile's memory in `MB`"},
			&cli.BoolFlag{Name: "cold", Usage: "boot from scratch: do not restore (or save) the booted snapshot of this configuration"},
			&cli.BoolFlag{Name: "bzimage", Usage: "boot the kernel's compressed bzImage even where it has a PVH entry (lab-built kernels)"},
			&cli.StringFlag{Name: "link", Usage: "the link's device: port, hvc or uart (default: the kernel's)"},
			profileFileFlag, jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("lab up needs exactly one PROFILE (see `lab profiles`)")
			}
			f := upFlags{profile: c.Args().First(), name: c.String("name"), accel: c.String("accel"),
				clock: c.String("clock"), memory: c.Int("memory"), files: c.StringSlice("profile-file"), cold: c.Bool("cold"), bzImage: c.Bool("bzimage"), link: c.String("link"), json: c.Bool("json")}
			return e.up(c, f)
		},
	}
}

func (e *env) up(c *cli.Context, f upFlags) error {
	p, clock, err := engine.UpProfile(e.roots.engine(), f.profile, f.files, f.clock, f.memory)
	if err != nil {
		return err
	}
	if f.name == "" {
		f.name = p.Name
	}
	opts, err := e.engineOptions(e.stderr)
	if err != nil {
		return err
	}
	if !f.json {
		fmt.Fprintf(e.stderr, "booting %s (profile %s)...\n", f.name, p.Name)
	}
	st, _, err := engine.Up(c.Context, e.roots.engine(), vm.UpOptions{Name: f.name, Profile: p, Accel: f.accel, Clock: clock, MemoryMB: f.memory, Cold: f.cold, BzImage: f.bzImage, Link: f.link}, opts)
	if err != nil {
		return err
	}
	if f.json {
		return printJSON(e.stdout, st)
	}
	g := st.Guest
	fmt.Fprintf(e.stdout, "%s up in %.2fs (accelerator %s, clock %s, %s)\n", st.Name, st.BootSeconds, st.Accel, st.Clock, st.Boot)
	if g != nil {
		fmt.Fprintf(e.stdout, "guest: %s; %s; %d/%d CPUs online; %d MB; stack %s; kernel ready at %.2fs guest time\n",
			g.Uname, g.CPUModel, g.OnlineCPUs, g.PresentCPUs, g.MemTotalKB/1024, stackString(g.StackKB), g.UptimeAtInit)
	}
	return nil
}

func stackString(kb int64) string {
	if kb < 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%d KB", kb)
}
