package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"lab/images"
)

func imageCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "image",
		Usage: "fetch, build, import, list and remove guest kernels (and busybox) in the cache",
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
					return e.roots.cache.Fetch(c.Context, c.Args().Slice(), e.stderr, func(k *images.Kernel) {
						fmt.Fprintf(e.stdout, "kernel %s: %s %s (%s)\n", k.ID, k.Package, k.Version, k.Release)
					}, func(arch string, bb *images.Busybox) {
						fmt.Fprintf(e.stdout, "busybox %s: %s %s\n", arch, bb.Package, bb.Version)
					})
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
					k, err := e.roots.cache.ImportKernel(c.Args().First(), c.String("arch"), c.String("kernel"), c.String("modules"))
					if err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "kernel %s imported (%s, release %s)\n", k.ID, k.Arch, k.Release)
					return nil
				},
			},
			{
				Name:      "build",
				Usage:     "build a kernel from Debian's kernel source, or an upstream release, with configuration fragments",
				ArgsUsage: "ID",
				Description: "Fetches the " + images.SourcePackage + " package (once, cached by its sha256), configures the\n" +
					"kernel from `make tinyconfig` plus the fragments in order (merge_config.sh, then\n" +
					"olddefconfig), checks that every option a fragment asks for took, builds bzImage\n" +
					"with the cross compiler (and keeps the stripped vmlinux when the configuration\n" +
					"has CONFIG_PVH, as base does: `lab up` boots that directly) and registers it\n" +
					"as kernel ID (`lab image rm ID` removes it). The build is keyed by the\n" +
					"source's sha256, the fragments and the toolchain version: the same inputs again\n" +
					"are a cache hit. A fragment is a file, or one lab ships: " + strings.Join(images.FragmentNames(), ", ") + ".\n" +
					"Without --config, ID must be one of the kernels lab knows how to build: " + strings.Join(images.RecipeIDs(), ", ") + ".\n\n" +
					"An upstream release (the linux-2.6.32-* kernels, or --upstream VERSION) is built\n" +
					"from its kernel.org tarball instead, plus lab's patches for it (images/patches/,\n" +
					"each naming the failure it fixes), configured from `make allnoconfig` with the\n" +
					"fragments as KCONFIG_ALLCONFIG. The tarball comes from --source FILE, else from\n" +
					"the directory $" + images.MirrorEnv + " names, else it is downloaded; whichever, it is\n" +
					"verified before use (a recorded sha256, else the release's git tree id) and kept\n" +
					"in the cache. Releases lab knows: " + strings.Join(upstreamVersions(), ", ") + ".\n\n" +
					"Examples:\n   lab image build era-2.4-i386\n" +
					"   lab image build my-era --arch i386 --config base --config era-2.4 --config ./extra.config\n" +
					"   lab image build linux-2.6.32-p4 --source ~/Downloads/linux-2.6.32.28.tar.xz",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "arch", Usage: "guest arch (i386)"},
					&cli.StringSliceFlag{Name: "config", Usage: "configuration `FRAGMENT` (file or shipped name), repeatable, merged in order"},
					&cli.IntFlag{Name: "jobs", Value: 2, Usage: "make -j`N`"},
					&cli.StringFlag{Name: "upstream", Usage: "build from upstream release `VERSION` (" + strings.Join(upstreamVersions(), ", ") + ") instead of Debian's source"},
					&cli.StringFlag{Name: "source", Usage: "the upstream release's tarball `FILE` (else $" + images.MirrorEnv + "'s directory, else downloaded)"},
					&cli.BoolFlag{Name: "profiles", Usage: "build every kernel the built-in profiles name that lab builds (what make setup-all does)"},
					jsonFlag,
				},
				Action: func(c *cli.Context) error {
					src := images.SourceOptions{File: c.String("source"), Mirror: e.roots.kernelMirror}
					if c.Bool("profiles") {
						if c.NArg() != 0 || len(c.StringSlice("config")) > 0 || c.String("upstream") != "" {
							return fmt.Errorf("lab image build --profiles takes no ID and no --config")
						}
						for _, id := range images.ProfileRecipes() {
							o, _ := images.BuildOptions{ID: id, Jobs: c.Int("jobs"), Log: e.stderr, Source: src}.WithRecipe()
							k, b, hit, err := e.roots.cache.BuildKernel(c.Context, o)
							if err != nil {
								return err
							}
							fmt.Fprintln(e.stdout, b.Summary(k, hit))
						}
						return nil
					}
					if c.NArg() != 1 {
						return fmt.Errorf("lab image build needs one ID (e.g. %s)", strings.Join(images.RecipeIDs(), ", "))
					}
					o, err := images.BuildOptions{ID: c.Args().First(), Arch: c.String("arch"), Fragments: c.StringSlice("config"), Upstream: c.String("upstream"), Jobs: c.Int("jobs"), Log: e.stderr, Source: src}.WithRecipe()
					if err != nil {
						return err
					}
					k, b, hit, err := e.roots.cache.BuildKernel(c.Context, o)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return printJSON(e.stdout, map[string]any{"kernel": k, "build": b, "cached": hit})
					}
					fmt.Fprintln(e.stdout, b.Summary(k, hit))
					return nil
				},
			},
			{
				Name:      "rm",
				Usage:     "remove kernels from the cache",
				ArgsUsage: "KERNEL-ID...",
				Description: "Removes each kernel's manifest, the record of the build that made it (a\n" +
					"kernel lab built) and the blobs no other kernel uses. A kernel a VM that is\n" +
					"up boots is refused: `lab down` it first. A kernel a built-in profile\n" +
					"names comes back with `lab image fetch` or `lab image build` (or `make\n" +
					"setup`); snapshots and initramfs images made with it go at the next\n" +
					"`lab image prune`.\n\n" +
					"Example:\n   lab image rm my-era",
				Action: func(c *cli.Context) error {
					if c.NArg() == 0 {
						return fmt.Errorf("lab image rm needs the KERNEL-ID(s) to remove (see `lab image list`)")
					}
					if err := e.roots.vm.CheckRemovable(c.Args().Slice()); err != nil {
						return err
					}
					for _, id := range c.Args().Slice() {
						freed, err := e.roots.cache.RemoveKernel(id)
						if err != nil {
							return err
						}
						fmt.Fprintf(e.stdout, "removed kernel %s (%.1f MB freed)\n", id, float64(freed)/1e6)
						if users := images.BuiltinBooting(id); len(users) > 0 {
							fmt.Fprintf(e.stderr, "note: built-in profile(s) %s boot %s; `make setup-all` (or lab image fetch/build %s) brings it back\n", strings.Join(users, ", "), id, id)
						}
					}
					return nil
				},
			},
			{
				Name:  "prune",
				Usage: "delete booted snapshots, initramfs images and kernel build trees no one is using",
				Description: "All are rebuilt on demand: the next boot of a configuration is cold and\n" +
					"saves a new snapshot; the next `lab image build` that is not a cache hit\n" +
					"unpacks the kernel source again (about 1.5 GB, kept only to save that\n" +
					"minute). A build under way keeps its tree. Kernels, their build records\n" +
					"and busybox stay.\n\n" +
					"Example:\n   lab image prune",
				Action: func(c *cli.Context) error {
					n, bytes, err := e.roots.vm.PruneCache(e.roots.cache)
					if err != nil {
						return err
					}
					bn, bbytes, busy, err := e.roots.cache.PruneBuilds()
					if err != nil {
						return fmt.Errorf("pruning kernel build trees: %w", err)
					}
					n, bytes = n+bn, bytes+bbytes
					if busy {
						fmt.Fprintln(e.stderr, "note: a kernel build is running, so its source tree was kept; prune again when it is done")
					}
					fmt.Fprintf(e.stdout, "removed %d files, %.1f MB\n", n, float64(bytes)/1e6)
					return nil
				},
			},
			{
				Name:  "list",
				Usage: "list the kernels in the cache",
				Description: "BOOTS says how a boot enters each: bzimage (the compressed image, the Linux\n" +
					"boot protocol) or pvh (the uncompressed vmlinux of a kernel lab built, entered\n" +
					"directly: no real-mode setup, nothing to decompress).\n\n" +
					"Example:\n   lab image list --json",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					ks := e.roots.cache.Kernels()
					if c.Bool("json") {
						return printJSON(e.stdout, ks)
					}
					tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tARCH\tRELEASE\tPACKAGE\tSHA256\tBOOTS\tCONFIG\tSTATUS")
					for _, k := range ks {
						_, entry := k.BootImage(images.Profile{}, false)
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s %s\t%.12s\t%s\t%s\t%s\n", k.ID, k.Arch, k.Release, k.Package, k.Version, k.Vmlinuz, entry, e.roots.cache.BuildString(k.Kernel), k.Status)
					}
					if err := tw.Flush(); err != nil {
						return err
					}
					for _, k := range ks {
						if k.Problem != "" {
							fmt.Fprintf(e.stderr, "%s: %s\n", k.Status, k.Problem)
						}
					}
					return nil
				},
			},
		},
	}
}

// upstreamVersions are the upstream releases lab builds kernels from.
func upstreamVersions() []string { return slices.Sorted(maps.Keys(images.Upstreams)) }
