package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"lab/plugins"
)

// archBuild says how to build for one guest arch.
type archBuild struct {
	arch, goarch, cc string
}

var archBuilds = []archBuild{
	{"i386", "386", "i686-linux-gnu-gcc"},
	{"x86_64", "amd64", "gcc"},
}

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
			Description: "DIR is a Go main package that calls plugins.Serve, optionally with C\n" +
				"workloads in DIR/workload/*.c. The Go program is built static for each guest\n" +
				"arch (GOARCH=386 GO386=softfloat for i386: the old CPU models have no SSE2),\n" +
				"each workload with the arch's C compiler (-static -O2 -pthread), into\n" +
				"OUT/NAME/ARCH/, where `lab run NAME` finds it. NAME is DIR's base name.\n\n" +
				"Example:\n   lab plugin build ./myplugin && lab run myplugin",
			Flags: []cli.Flag{&cli.StringFlag{Name: "out", Value: plugins.UserPluginDir(), Usage: "plugin directory to install into"}},
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return fmt.Errorf("lab plugin build needs one DIR")
				}
				out, err := buildPlugin(c.Context, c.Args().First(), c.String("out"), e)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "built %s\n", out)
				return nil
			},
		}},
	}
}

func buildPlugin(ctx context.Context, dir, outRoot string, e *env) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		if _, err2 := os.Stat(dir); err2 != nil {
			return "", fmt.Errorf("plugin directory %s: %w", dir, err2)
		}
	}
	name := filepath.Base(dir)
	srcs, _ := filepath.Glob(filepath.Join(dir, "workload", "*.c"))
	out := filepath.Join(outRoot, name)
	for _, b := range archBuilds {
		adir := filepath.Join(out, b.arch)
		if err := os.MkdirAll(filepath.Join(adir, "workload"), 0o755); err != nil {
			return "", err
		}
		gocmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(adir, name), ".")
		gocmd.Dir = dir
		gocmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+b.goarch, "GO386=softfloat")
		if msg, err := gocmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("building plugin %s for %s: %v\n%s", name, b.arch, err, strings.TrimSpace(string(msg)))
		}
		for _, src := range srcs {
			bin := filepath.Join(adir, "workload", strings.TrimSuffix(filepath.Base(src), ".c"))
			cc := exec.CommandContext(ctx, b.cc, "-static", "-O2", "-pthread", "-o", bin, src)
			if msg, err := cc.CombinedOutput(); err != nil {
				return "", fmt.Errorf("compiling workload %s for %s with %s: %v\n%s", filepath.Base(src), b.arch, b.cc, err, strings.TrimSpace(string(msg)))
			}
		}
		fmt.Fprintf(e.stderr, "built %s for %s (%d workload(s))\n", name, b.arch, len(srcs))
	}
	return out, nil
}
