package plugins

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"

	"lab/plugins/contract"
)

// A workload's builds. `lab plugin build` compiles every workload of a
// plugin once as DefaultBuild (static, -O2: the guests' initramfs held no
// shared libc before, and a static program maps the least), and once for
// each other choice of an experiment's ParamBuild parameter, so that a
// program can run as its source built it: E1's `gcc -o fork fork.c` is
// dynamic-O0 (dynamically linked, gcc's default -O0), E2's g++ rows
// dynamic-O0, dynamic-O1 (-O) and dynamic-O3. A dynamic build needs the
// guest's shared libc (`lab image fetch` caches Debian's, the initramfs
// holds it).
const (
	ParamBuild   = contract.ParamBuild
	DefaultBuild = contract.DefaultBuild
)

// BuildFlags are the C compiler's flags for build id, -pthread and the
// include path aside: "static-O2", or "dynamic-O0" to "dynamic-O3".
func BuildFlags(id string) ([]string, error) {
	link, opt, ok := strings.Cut(id, "-")
	if ok && (link == "static" || link == "dynamic") && len(opt) == 2 && opt[0] == 'O' && opt[1] >= '0' && opt[1] <= '3' {
		flags := []string{"-" + opt}
		if link == "static" {
			flags = append([]string{"-static"}, flags...)
		}
		return flags, nil
	}
	return nil, fmt.Errorf("workload build %q: want static-O0..3 or dynamic-O0..3", id)
}

// WorkloadFile is the file name of workload name's build: name itself
// for DefaultBuild (and ""), name@build for another.
func WorkloadFile(name, build string) string {
	if build == "" || build == DefaultBuild {
		return name
	}
	return name + "@" + build
}

// Builds are the builds of d's workloads `lab plugin build` makes besides
// DefaultBuild: every choice of an experiment's ParamBuild parameter,
// once each, in order.
func (d *Description) Builds() []string {
	var out []string
	for _, e := range d.Experiments {
		for _, p := range e.Params {
			if p.Name != ParamBuild {
				continue
			}
			for _, c := range p.Choices {
				if c != DefaultBuild && !slices.Contains(out, c) {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// checkBuildParam refuses a ParamBuild parameter lab cannot build: its
// default is DefaultBuild and every choice a build BuildFlags knows.
func checkBuildParam(p Param) error {
	if p.Default != DefaultBuild || len(p.Choices) == 0 {
		return fmt.Errorf("parameter %s: default %q, choices %v; a build parameter defaults to %s and lists its builds", ParamBuild, p.Default, p.Choices, DefaultBuild)
	}
	for _, c := range p.Choices {
		if _, err := BuildFlags(c); err != nil {
			return fmt.Errorf("parameter %s: %w", ParamBuild, err)
		}
	}
	return nil
}

// loaders are the dynamic loader a dynamic build's PT_INTERP names, by
// GOARCH.
var loaders = map[string]string{"386": "/lib/ld-linux.so.2", "amd64": "/lib64/ld-linux-x86-64.so.2"}

// CheckBuildRuns says why build cannot run here: a dynamic build in a
// guest without the shared libc. Run in the guest, before the workload.
func CheckBuildRuns(build string) error {
	if !strings.HasPrefix(build, "dynamic-") {
		return nil
	}
	loader := loaders[runtime.GOARCH]
	if _, err := os.Stat(loader); err != nil {
		return fmt.Errorf("build %s is dynamically linked, and this guest has no shared libc (%s: %v): run `lab image fetch`, which caches Debian's libc6 for the initramfs, then boot the VM again (`lab down`, `lab up`)", build, loader, err)
	}
	return nil
}
