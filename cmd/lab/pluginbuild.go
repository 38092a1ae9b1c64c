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
	"lab/plugins/host"
	"lab/plugins/include"
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
	// go build runs in dir: a relative --out must not follow it there.
	if outRoot, err = filepath.Abs(outRoot); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		if _, err2 := os.Stat(dir); err2 != nil {
			return "", fmt.Errorf("plugin directory %s: %w", dir, err2)
		}
	}
	name := filepath.Base(dir)
	// The description is checked before anything is compiled: lab reads
	// it, not the plugin, to list the plugin and check a run's parameters.
	raw, err := os.ReadFile(filepath.Join(dir, plugins.DescriptionFile))
	if err != nil {
		return "", fmt.Errorf("plugin %s: %w; a plugin declares what it runs in %s (see README.md, \"Writing a plugin\")", name, err, plugins.DescriptionFile)
	}
	desc, err := plugins.ParseDescription(raw)
	if err != nil {
		return "", fmt.Errorf("plugin %s: %s: %w", name, filepath.Join(dir, plugins.DescriptionFile), err)
	}
	if desc.Name != name {
		return "", fmt.Errorf("plugin in directory %s calls itself %q in %s; the directory and the plugin name must match", dir, desc.Name, plugins.DescriptionFile)
	}
	srcs, _ := filepath.Glob(filepath.Join(dir, "workload", "*.c"))
	// Every workload gets lab.h (#include <lab.h>) from this lab, wherever
	// the plugin lives.
	inc, err := os.MkdirTemp("", "lab-include-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(inc)
	if err := include.Write(inc); err != nil {
		return "", err
	}
	out := filepath.Join(outRoot, name)
	for _, b := range archBuilds {
		adir := filepath.Join(out, b.arch)
		if err := os.MkdirAll(filepath.Join(adir, "workload"), 0o755); err != nil {
			return "", err
		}
		gocmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-tags", plugins.GuestBuildTags, "-o", filepath.Join(adir, name), ".")
		gocmd.Dir = dir
		gocmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+b.goarch, "GO386=softfloat")
		if msg, err := gocmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("building plugin %s for %s: %v\n%s", name, b.arch, err, strings.TrimSpace(string(msg)))
		}
		for _, src := range srcs {
			bin := filepath.Join(adir, "workload", strings.TrimSuffix(filepath.Base(src), ".c"))
			cc := exec.CommandContext(ctx, b.cc, "-static", "-O2", "-pthread", "-I", inc, "-o", bin, src)
			if msg, err := cc.CombinedOutput(); err != nil {
				return "", fmt.Errorf("compiling workload %s for %s with %s: %v\n%s", filepath.Base(src), b.arch, b.cc, err, strings.TrimSpace(string(msg)))
			}
		}
		if err := host.WriteRecord(adir, desc); err != nil {
			return "", err
		}
		fmt.Fprintf(e.stderr, "built %s for %s (%d workload(s))\n", name, b.arch, len(srcs))
	}
	return out, nil
}
