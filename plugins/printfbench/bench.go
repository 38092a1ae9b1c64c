package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"lab/plugins"
)

// Targets are where experiment targets prints, in the order it prints to
// them; "all" is these. pty_undrained (a pty nobody reads, which blocks)
// is run only when asked for by name.
var Targets = []string{"vt_shown", "vt_hidden", "serial", "pty", "pipe", "null", "file"}

// Sinks are where experiment logging records its events, in the order it
// records them; "all" is these.
var Sinks = []string{"vt_shown", "serial", "file", "counter", "socket"}

// system is what the plugin asks the guest about its screen; tests
// replace it.
type system interface {
	// Cmdline is the kernel command line (/proc/cmdline).
	Cmdline() string
	// VTConsoles are the names of the console drivers bound to the VTs
	// (/sys/class/vtconsole/vtcon*/name with bind 1).
	VTConsoles() []string
}

// bench is the printfbench Benchmark; desc is its description.json.
type bench struct {
	desc *plugins.Description
	sys  system
}

// Run runs the experiment's workload once per repeat; plugins.Repeat owns
// the loop, progress and outcome.
func (b bench) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	return plugins.Repeat(ctx, b.desc, req, progress, func(ctx context.Context, t *plugins.Trial) ([]plugins.Sample, error) {
		switch t.Experiment.Name {
		case "targets":
			return b.targets(ctx, t)
		case "logging":
			return b.logging(ctx, t)
		}
		return nil, fmt.Errorf("printfbench has no workload for experiment %s", t.Experiment.Name)
	})
}

// screen is what the guest's VTs are drawn on.
type screen struct {
	profile, console string
	// shown: the VTs are drawn on an emulated screen (the profile's
	// console vga or fb), so the one on screen costs drawing.
	shown   bool
	drivers []string
}

func (b bench) screen() screen {
	s := screen{drivers: b.sys.VTConsoles()}
	for _, f := range strings.Fields(b.sys.Cmdline()) {
		if v, ok := strings.CutPrefix(f, "lab.profile="); ok {
			s.profile = v
		}
		if v, ok := strings.CutPrefix(f, "lab.console="); ok {
			s.console = v
		}
	}
	switch s.console {
	case "vga", "fb":
		s.shown = true
	case "serial":
		// Measured in celeron-2.4: with no display device vgacon still
		// binds, as "*CGA" (its guess when the BIOS reports no EGA/VGA),
		// and draws into memory no device is behind; nothing is shown.
		s.shown = false
	default:
		// A kernel command line without lab.console: a bound driver other
		// than the dummy console or vgacon's guess.
		for _, d := range s.drivers {
			if !strings.Contains(d, "dummy") && !strings.Contains(d, "*") {
				s.shown = true
			}
		}
	}
	return s
}

// noVTs is the error for a VT target (param "target") or sink (param
// "sink") on a guest whose VTs show nothing.
func (s screen) noVTs(param, value string) error {
	who := "this guest"
	if s.profile != "" {
		who = "profile " + s.profile
	}
	console := s.console
	if console == "" {
		console = "unknown"
	}
	drivers := "none"
	if len(s.drivers) > 0 {
		drivers = strings.Join(s.drivers, ", ")
	}
	run, others := "`lab run printfbench --profile xeon5130-fb`", "leave out the VT targets (-p target=serial, pty, pipe, null or file)"
	if param == "sink" {
		run, others = "`lab run printfbench -e logging --profile xeon5130-fb`", "leave out the VT sink (-p sink=serial, file, counter or socket)"
	}
	return fmt.Errorf("%s %s needs virtual terminals on a screen, and %s has none (console %s; VT console drivers: %s): "+
		"boot a profile with console vga or fb, e.g. %s "+
		"(`lab profiles` shows each profile's console), or %s", param, value, who, console, drivers, run, others)
}

// isVT says whether a target or sink prints to a virtual terminal.
func isVT(target string) bool { return strings.HasPrefix(target, "vt_") }

// targetsFor is the targets a run prints to, and how many VT targets
// "all" leaves out because the guest shows none.
func targetsFor(param string, s screen) ([]string, int, error) {
	return vtsFor("target", param, Targets, s)
}

// sinksFor is the sinks a run records in, and how many VT sinks "all"
// leaves out because the guest shows none.
func sinksFor(param string, s screen) ([]string, int, error) {
	return vtsFor("sink", param, Sinks, s)
}

// vtsFor is value of parameter name, or every one of all for "all", less
// the VT ones on a guest whose VTs show nothing, and how many it left out;
// one VT value asked for by name on such a guest is an error.
func vtsFor(name, value string, all []string, s screen) ([]string, int, error) {
	if value != "all" {
		if isVT(value) && !s.shown {
			return nil, 0, s.noVTs(name, value)
		}
		return []string{value}, 0, nil
	}
	var out []string
	skipped := 0
	for _, v := range all {
		if isVT(v) && !s.shown {
			skipped++
			continue
		}
		out = append(out, v)
	}
	return out, skipped, nil
}

// seconds renders a duration parameter as whole seconds, at least 1.
func seconds(d string) (string, error) {
	v, err := time.ParseDuration(d)
	if err != nil {
		return "", fmt.Errorf("timeout %q: %w", d, err)
	}
	return strconv.Itoa(max(1, int(math.Ceil(v.Seconds())))), nil
}

// targets prints E3's lines to each target in turn; each target's samples
// carry the label target. With target=all on a guest without shown VTs
// the VT targets are skipped and targets_skipped says how many.
func (b bench) targets(ctx context.Context, t *plugins.Trial) ([]plugins.Sample, error) {
	p := t.Params
	list, skipped, err := targetsFor(p["target"], b.screen())
	if err != nil {
		return nil, err
	}
	timeout, err := seconds(p["timeout"])
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(tmpfsDir(), "printfbench-")
	if err != nil {
		return nil, fmt.Errorf("a directory for the file target: %w", err)
	}
	defer os.RemoveAll(dir)
	show := showArg()
	var out []plugins.Sample
	for _, target := range list {
		res, err := t.RunWorkload(ctx, plugins.WorkloadFile("targets", p[plugins.ParamBuild]), target, p["lines"], p["buffering"], timeout, dir, show)
		if err != nil {
			return out, fmt.Errorf("target %s: %w", target, err)
		}
		if got := res.Values["lines"].Text; got != p["lines"] {
			return out, fmt.Errorf("workload targets (target %s) printed %q lines, want %s", target, got, p["lines"])
		}
		if isVT(target) && show == "1" && res.Values["shown_vt"].Text != "1" {
			return out, fmt.Errorf("target %s: tty%s was on screen after the run, not tty1: something switched VTs while it ran", target, res.Values["shown_vt"].Text)
		}
		for _, m := range []string{"real_s", "user_s", "sys_s", "shown_vt"} {
			v, err := res.Float(m)
			if err != nil {
				return out, err
			}
			s := t.Sample(m, v)
			s.Labels = map[string]string{"target": target}
			out = append(out, s)
		}
	}
	if p["target"] == "all" {
		out = append(out, t.Sample("targets_skipped", float64(skipped)))
	}
	return out, nil
}

// showArg is the workloads' SHOW argument: 1, make tty1 the shown VT
// before printing to a VT; 0 in tests on a host, which must never switch
// the host's VTs.
func showArg() string {
	if os.Getenv("PRINTFBENCH_LEAVE_SCREEN") == "1" {
		return "0"
	}
	return "1"
}

// tmpfsDir is where the file target's file goes: the guest's root is a
// tmpfs (the initramfs), /tmp included.
func tmpfsDir() string { return os.TempDir() }

// logging records the events in each sink in turn (label sink). With
// sink=all on a guest without shown VTs the VT sink is skipped and
// sinks_skipped says so.
func (b bench) logging(ctx context.Context, t *plugins.Trial) ([]plugins.Sample, error) {
	p := t.Params
	sinks, skipped, err := sinksFor(p["sink"], b.screen())
	if err != nil {
		return nil, err
	}
	timeout, err := seconds(p["timeout"])
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(tmpfsDir(), "printfbench-")
	if err != nil {
		return nil, fmt.Errorf("a directory for the file sink: %w", err)
	}
	defer os.RemoveAll(dir)
	show := showArg()
	var out []plugins.Sample
	for _, sink := range sinks {
		res, err := t.RunWorkload(ctx, plugins.WorkloadFile("logging", p[plugins.ParamBuild]), sink, p["events"], timeout, filepath.Clean(dir), show)
		if err != nil {
			return out, fmt.Errorf("sink %s: %w", sink, err)
		}
		if got := res.Values["events"].Text; got != p["events"] {
			return out, fmt.Errorf("workload logging (sink %s) recorded %q events, want %s", sink, got, p["events"])
		}
		if isVT(sink) && show == "1" && res.Values["shown_vt"].Text != "1" {
			return out, fmt.Errorf("sink %s: tty%s was on screen after the run, not tty1: something switched VTs while it ran", sink, res.Values["shown_vt"].Text)
		}
		for _, m := range []string{"event_us", "real_s", "user_s", "sys_s"} {
			v, err := res.Float(m)
			if err != nil {
				return out, err
			}
			s := t.Sample(m, v)
			s.Labels = map[string]string{"sink": sink}
			out = append(out, s)
		}
	}
	if p["sink"] == "all" {
		out = append(out, t.Sample("sinks_skipped", float64(skipped)))
	}
	return out, nil
}

// guestSystem reads the guest's own /proc and /sys.
type guestSystem struct{}

func (guestSystem) Cmdline() string {
	b, _ := os.ReadFile("/proc/cmdline")
	return string(b)
}

func (guestSystem) VTConsoles() []string {
	dirs, _ := filepath.Glob("/sys/class/vtconsole/vtcon*")
	var out []string
	for _, d := range dirs {
		bind, _ := os.ReadFile(filepath.Join(d, "bind"))
		name, _ := os.ReadFile(filepath.Join(d, "name"))
		if strings.TrimSpace(string(bind)) == "1" {
			out = append(out, strings.TrimSpace(string(name)))
		}
	}
	return out
}
