package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"lab/images"
	"lab/vm"
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
				Name:  "prune",
				Usage: "delete booted snapshots and initramfs images no VM is using",
				Description: "Both are rebuilt on demand: the next boot of a configuration is cold and\n" +
					"saves a new snapshot. Kernels and busybox stay.\n\n" +
					"Example:\n   lab image prune",
				Action: func(c *cli.Context) error {
					n, bytes, err := pruneCache()
					if err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "removed %d files, %.1f MB\n", n, float64(bytes)/1e6)
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

// pruneCache removes snapshots and initramfs images that no VM up uses.
func pruneCache() (files int, bytes int64, err error) {
	inUse := map[string]bool{}
	entries, err := vm.List()
	if err != nil {
		return 0, 0, err
	}
	for _, en := range entries {
		if en.State != nil && !en.Stale {
			inUse[en.State.Initrd] = true
			inUse[en.State.Snapshot] = true
			inUse[en.State.Snapshot+".console"] = true
		}
	}
	for _, dir := range []string{"snapshots", "initramfs"} {
		des, err := os.ReadDir(filepath.Join(images.CacheDir(), dir))
		if err != nil && !os.IsNotExist(err) {
			return files, bytes, err
		}
		for _, de := range des {
			p := filepath.Join(images.CacheDir(), dir, de.Name())
			if de.IsDir() || inUse[p] || strings.Contains(de.Name(), ".tmp") {
				continue
			}
			if fi, err := de.Info(); err == nil {
				bytes += fi.Size()
			}
			if err := os.Remove(p); err != nil {
				return files, bytes, err
			}
			files++
		}
	}
	return files, bytes, nil
}
