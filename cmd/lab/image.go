package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"lab/images"
)

func imageCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "image",
		Usage: "fetch, import and list guest kernels and busybox in the cache",
		Description: "Kernels come from Debian packages (downloaded, never installed) and are\n" +
			"kept in the content-addressed cache with the exact package version.\n\n" +
			"Examples:\n   lab image fetch\n   lab image list\n" +
			"   lab image import my-5.10 --arch i386 --kernel ./bzImage --modules ./lib/modules/5.10.0",
		Subcommands: []*cli.Command{
			{
				Name:      "fetch",
				Usage:     "download kernels (and busybox) from Debian packages into the cache",
				ArgsUsage: "[KERNEL-ID...]",
				Description: "Without arguments fetches every known kernel and busybox for each arch.\n" +
					"Idempotent: what is in the cache and verifies is not fetched again.\n\n" +
					"Example:\n   lab image fetch debian-6.1-686",
				Action: func(c *cli.Context) error {
					ids := c.Args().Slice()
					if len(ids) == 0 {
						ids = images.KernelIDs()
					}
					arches := map[string]bool{}
					for _, id := range ids {
						k, err := images.FetchKernel(c.Context, id, e.stderr)
						if err != nil {
							return err
						}
						arches[k.Arch] = true
						fmt.Fprintf(e.stdout, "kernel %s: %s %s (%s)\n", k.ID, k.Package, k.Version, k.Release)
					}
					for _, arch := range []string{"i386", "x86_64"} {
						if !arches[arch] {
							continue
						}
						bb, err := images.FetchBusybox(c.Context, arch, e.stderr)
						if err != nil {
							return err
						}
						fmt.Fprintf(e.stdout, "busybox %s: %s %s\n", arch, bb.Package, bb.Version)
					}
					return nil
				},
			},
			{
				Name:      "import",
				Usage:     "add your own kernel (and its modules dir) to the cache",
				ArgsUsage: "ID",
				Description: "Example:\n   lab image import my-5.10 --arch i386 --kernel ./bzImage --modules ./lib/modules/5.10.0\n" +
					"then name `kernel: my-5.10` in a profile file.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "arch", Required: true, Usage: "i386 or x86_64"},
					&cli.StringFlag{Name: "kernel", Required: true, Usage: "bzImage `FILE`"},
					&cli.StringFlag{Name: "modules", Usage: "modules `DIR` (lib/modules/RELEASE); not needed if virtio is built in"},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return fmt.Errorf("lab image import needs one ID")
					}
					k, err := images.ImportKernel(c.Args().First(), c.String("arch"), c.String("kernel"), c.String("modules"))
					if err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "kernel %s imported (%s, release %s)\n", k.ID, k.Arch, k.Release)
					return nil
				},
			},
			{
				Name:        "list",
				Usage:       "list the kernels in the cache",
				Description: "Example:\n   lab image list --json",
				Flags:       []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					var ks []*images.Kernel
					for _, id := range images.KernelIDs() {
						if k, err := images.LoadKernel(id); err == nil {
							ks = append(ks, k)
						}
					}
					if c.Bool("json") {
						return printJSON(e.stdout, ks)
					}
					tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tARCH\tRELEASE\tPACKAGE\tSHA256")
					for _, k := range ks {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s %s\t%.12s\n", k.ID, k.Arch, k.Release, k.Package, k.Version, k.Vmlinuz)
					}
					return tw.Flush()
				},
			},
		},
	}
}
