package host

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"lab/plugins"
	"lab/plugins/include"
)

// ArchBuild says how to build a plugin for one guest arch: Go's GOARCH
// and the C compiler of its workloads.
type ArchBuild struct {
	Arch, GOARCH, CC string
}

// ArchBuilds are the guest arches `lab plugin build` builds for.
var ArchBuilds = []ArchBuild{
	{"i386", "386", "i686-linux-gnu-gcc"},
	{"x86_64", "amd64", "gcc"},
}

// buildsNote says which builds besides the default were made.
func buildsNote(builds []string) string {
	if len(builds) == 0 {
		return ""
	}
	return ", each also built " + strings.Join(builds, ", ")
}

// Build builds the plugin directory dir (a Go main package serving its
// description.json, C workloads in dir/workload/*.c) for every arch of
// ArchBuilds into outRoot/NAME/ARCH/, NAME being dir's base name, with
// the description recorded beside each build (WriteRecord). It says on
// log what it built and returns outRoot/NAME.
func Build(ctx context.Context, dir, outRoot string, log io.Writer) (string, error) {
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
	for _, b := range ArchBuilds {
		adir := filepath.Join(out, b.Arch)
		if err := os.MkdirAll(filepath.Join(adir, "workload"), 0o755); err != nil {
			return "", err
		}
		gocmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-tags", plugins.GuestBuildTags, "-o", filepath.Join(adir, name), ".")
		gocmd.Dir = dir
		gocmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+b.GOARCH, "GO386=softfloat")
		if msg, err := gocmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("building plugin %s for %s: %v\n%s", name, b.Arch, err, strings.TrimSpace(string(msg)))
		}
		for _, src := range srcs {
			name := strings.TrimSuffix(filepath.Base(src), ".c")
			for _, build := range append([]string{plugins.DefaultBuild}, desc.Builds()...) {
				flags, err := plugins.BuildFlags(build)
				if err != nil {
					return "", err
				}
				bin := filepath.Join(adir, "workload", plugins.WorkloadFile(name, build))
				args := append(flags, "-pthread", "-I", inc, "-o", bin, src)
				cc := exec.CommandContext(ctx, b.CC, args...)
				if msg, err := cc.CombinedOutput(); err != nil {
					return "", fmt.Errorf("compiling workload %s for %s (build %s) with %s: %v\n%s", filepath.Base(src), b.Arch, build, b.CC, err, strings.TrimSpace(string(msg)))
				}
			}
		}
		if err := WriteRecord(adir, desc); err != nil {
			return "", err
		}
		fmt.Fprintf(log, "built %s for %s (%d workload(s)%s)\n", name, b.Arch, len(srcs), buildsNote(desc.Builds()))
	}
	return out, nil
}
