package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/sys/unix"

	"lab/engine"
	"lab/results"
	"lab/results/render"
)

type runFlags struct {
	plugin     string
	vm         string
	profiles   []string
	files      []string
	experiment string
	params     []string
	sweeps     []string
	repeat     int
	timeout    time.Duration
	clock      string
	out        string
	json       bool
	all        bool
	// addTo: the stored run whose repeats this run adds to (--add-to).
	addTo string
	// combined: one of several profiles' runs (lab run --profile A
	// --profile B): with --json the documents are printed together at the
	// end, not one by one.
	combined bool
	// chooseRepeat: --repeat not given; the run makes what the claims
	// in scope on its profile need (engine.Request.ChooseRepeat).
	chooseRepeat bool
	// chooseExperiment: no --experiment, -p or --sweep; on a profile
	// whose machine another experiment's claims are about, the run is
	// that experiment (engine.Request.ChooseExperiment).
	chooseExperiment bool
}

// Exit codes of `lab run` (besides 0, and 130 for Ctrl-C).
const (
	// exitRunFailed: the run failed (the plugin crashed, timed out, the
	// guest died...); what it measured is saved all the same.
	exitRunFailed = 1
	// exitSaveFailed: the result could not be saved in the results
	// directory; the whole document went to a fallback file (its path is
	// printed) or, failing that, to stdout. As sysexits' EX_IOERR.
	exitSaveFailed = 74
	// exitInterrupted: Ctrl-C (SIGINT, SIGTERM, SIGHUP); a sweep saves the
	// points it finished first.
	exitInterrupted = 130
)

func runCommand(e *env) *cli.Command {
	sweeps := &sweepValues{}
	return &cli.Command{
		Name:      "run",
		Usage:     "run a benchmark plugin inside a VM and save the result",
		ArgsUsage: "PLUGIN",
		Description: "Pushes the plugin (built for the guest's arch) into the VM over the link,\n" +
			"runs one experiment there, and prints a summary: the verdict on each claim\n" +
			"the experiment declares (reproduced, not reproduced, inconclusive, not\n" +
			"comparable, not run) with the numbers that decided it, our metrics, and the\n" +
			"figures published for the machine the profile stands for (--all: every\n" +
			"machine's). The result document (provenance, samples, statistics,\n" +
			"comparisons, verdicts) is written atomically to --out and its path printed.\n" +
			"--out is checked (and created) before anything starts. If saving fails\n" +
			"anyway, the document is written to a fallback file in the temp or current\n" +
			"directory (its path printed) or, failing that, printed in full on stdout,\n" +
			"and lab run exits 74. A failed run exits 1 (what it measured is saved).\n\n" +
			"Without --experiment, -p and --sweep it runs the plugin's first experiment,\n" +
			"unless no claim of it is about the machine the profile stands for and another\n" +
			"experiment's are: then it runs that one, as its claims' runs do (it says so),\n" +
			"and the summary ends with those claims' verdicts, ours beside the published.\n" +
			"Without --repeat it makes as many repeats as the claims of the experiment in\n" +
			"scope on the profile need, within 5 minutes (it says so), else one; on a\n" +
			"profile whose machine other experiments' claims are about, the summary names\n" +
			"the command that decides them.\n\n" +
			"--sweep KEY=V1,V2,... runs the experiment once per value, point by point in\n" +
			"one VM and one plugin start; several --sweep give their cross product (the\n" +
			"first key varying slowest). Keys and values are checked against the\n" +
			"experiment's parameters before anything boots. One result document holds\n" +
			"every point, its samples labelled with the point (n=50); an SVG plot of the\n" +
			"main metric against the first numeric key is written beside it and its path\n" +
			"printed. Ctrl-C saves the points that finished (outcome interrupted, exit\n" +
			"130).\n\n" +
			"--profile P boots a throwaway VM and discards it afterwards; given several\n" +
			"times, runs on each profile in turn (one result each) and prints their\n" +
			"comparison: per metric the median on each and the speed-up over the first.\n\n" +
			"--add-to RUN --repeat N makes N more repeats of a stored run's cell (RUN: its\n" +
			"ID, a unique prefix or latest, in --out): the same plugin version, experiment,\n" +
			"parameters, profile, kernel and clock, checked before anything is measured;\n" +
			"without -e, -p and --sweep they are RUN's. The new result names RUN, and the\n" +
			"claims are judged on both runs' repeats together (`lab claims`).\n\n" +
			"lab run holds the VM's run lock for the whole run: `lab exec` and `lab cp`\n" +
			"wait for it (saying so) unless given --no-wait; those that go ahead are\n" +
			"listed in the result as interference, and the summary warns about them.\n\n" +
			"Examples:\n" +
			"   lab up celeron-2.4 && lab run forkbench\n" +
			"   lab run forkbench --experiment create -p m=20000 --repeat 5\n" +
			"   lab run forkbench -e forktime --sweep n=500,1000,2000 --repeat 4\n" +
			"   lab run forkbench --profile xeon5130-1core --profile xeon5130-2core --repeat 4\n" +
			"   lab run forkbench --profile xeon5130-1core --json > result.json\n" +
			"   lab run forkbench --profile celeron-2.4 --repeat 4 --add-to latest",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "vm", Usage: "VM to run in (default: the only VM up)"},
			&cli.StringSliceFlag{Name: "profile", Usage: "boot a throwaway VM from `PROFILE`, run, and discard it; repeatable: one run per profile, then their comparison"},
			&cli.StringFlag{Name: "clock", Usage: "with --profile: guest clock host, icount or icount:SHIFT (TCG, one online CPU); default: the profile's clock, else host"},
			profileFileFlag,
			&cli.StringFlag{Name: "experiment", Aliases: []string{"e"}, Usage: "experiment (default: the plugin's first, or the one whose claims the profile's machine stands for; see `lab plugins show PLUGIN`)"},
			&cli.StringSliceFlag{Name: "param", Aliases: []string{"p"}, Usage: "parameter `KEY=VALUE`; repeatable"},
			&cli.GenericFlag{Name: "sweep", Value: sweeps, Usage: "sweep a parameter, `KEY=V1,V2,...`: one run per value, all in one VM and one result; repeatable (the cross product)"},
			&cli.IntFlag{Name: "repeat", Value: 1, DefaultText: "what the experiment's claims in scope on the profile need, within 5 min; else 1",
				Usage: "run the workload `N` times (per sweep point; medians, min/max and CV over the repeats)"},
			&cli.DurationFlag{Name: "timeout", Value: time.Hour, Usage: "give up after this long, the whole sweep included (the plugin is killed, the VM stays usable)"},
			&cli.StringFlag{Name: "out", Usage: "directory for result files (default: $LAB_RESULTS_DIR, else $XDG_DATA_HOME/lab/results, else ~/.local/share/lab/results)"},
			&cli.BoolFlag{Name: "all", Usage: "the summary lists every published figure, those of other machines too"},
			&cli.StringFlag{Name: "add-to", Usage: "add --repeat more repeats to the stored run `RUN` (ID, prefix or latest, in --out): the same cell, judged together"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("lab run needs one PLUGIN (see `lab plugins`)")
			}
			f := runFlags{plugin: c.Args().First(), vm: c.String("vm"), profiles: c.StringSlice("profile"), files: c.StringSlice("profile-file"),
				experiment: c.String("experiment"), params: c.StringSlice("param"), sweeps: sweeps.flags, repeat: c.Int("repeat"),
				chooseRepeat: !c.IsSet("repeat"), chooseExperiment: !c.IsSet("experiment") && !c.IsSet("param") && len(sweeps.flags) == 0, timeout: c.Duration("timeout"), clock: c.String("clock"), out: c.String("out"), json: c.Bool("json"), all: c.Bool("all"), addTo: c.String("add-to")}
			return e.runPlugin(c.Context, f)
		},
	}
}

// request is the engine's request for the flags f.
func (e *env) request(f runFlags) (engine.Request, error) {
	params, err := engine.ParseParams(f.params)
	if err != nil {
		return engine.Request{}, err
	}
	axes, err := engine.ParseSweeps(f.sweeps)
	if err != nil {
		return engine.Request{}, err
	}
	out := f.out
	if out == "" {
		if out, err = e.roots.resultsDir(); err != nil {
			return engine.Request{}, err
		}
	}
	return engine.Request{Plugin: f.plugin, VM: f.vm, Profiles: f.profiles, ProfileFiles: f.files, Experiment: f.experiment,
		Params: params, Sweep: axes, Repeat: f.repeat, ChooseRepeat: f.chooseRepeat, ChooseExperiment: f.chooseExperiment, Timeout: f.timeout, Clock: f.clock, Out: out, Command: e.args, Roots: e.roots.engine(), AddTo: f.addTo}, nil
}

// engineOptions are what every run is given: where its events go (the
// progress display on w) and what the VMs it boots are supervised by.
func (e *env) engineOptions(w io.Writer) (engine.Options, error) {
	o := engine.Options{Observe: observer(w)}
	var err error
	if o.Exe, err = e.roots.supervisor(); err != nil {
		return o, err
	}
	if s := e.roots.peerMemory; s != "" {
		if o.PeerMemoryMB, err = strconv.Atoi(s); err != nil {
			return o, fmt.Errorf("$%s=%q: want a number of MB", peerMemoryEnv, s)
		}
	}
	return o, nil
}

// peerMemoryEnv, for tests, boots a run's peer guest with this much
// memory instead of the profile's: an impossible size makes its boot fail.
const peerMemoryEnv = "LAB_PEER_MEMORY_MB"

// runPlugin is lab run: one engine call (engine.Do), printing each run
// as it ends and, with several profiles, their comparison.
func (e *env) runPlugin(ctx context.Context, f runFlags) error {
	req, err := e.request(f)
	if err != nil {
		return err
	}
	opts, err := e.engineOptions(e.stderr)
	if err != nil {
		return err
	}
	f.combined = len(f.profiles) > 1
	var ended []profileEnd
	opts.Ran = func(profile string, run *engine.Run, err error) {
		if run != nil {
			err = e.printRun(run, f)
		}
		ended = append(ended, profileEnd{profile, err})
	}
	out, err := engine.Do(ctx, req, opts)
	switch {
	case out == nil:
		return err // the request did not plan
	case f.combined:
		return e.profilesEnd(ctx, out, f, ended)
	case len(ended) == 1:
		return ended[0].err
	}
	return err
}

// printRun prints a run the engine saved (or could not save), its
// summary with notes, and says how it ended: a failed run exits exitRunFailed, an interrupted one
// exitInterrupted; if it could not be saved in its directory, it went to
// a fallback file, else in full to stdout, and the exit code is
// exitSaveFailed.
func (e *env) printRun(run *engine.Run, f runFlags) error {
	res, path := run.Result, run.Path
	notes := render.Notes{Undecided: run.Undecided, Elsewhere: run.Elsewhere, Recap: run.Recap}
	switch {
	case f.json && f.combined:
		// Printed with the other profiles' runs at the end.
	case f.json:
		if err := render.WriteJSON(e.stdout, res); err != nil {
			return err
		}
	default:
		if err := render.WriteSummary(e.stdout, res, f.all, notes); err != nil {
			return err
		}
		if res.Sweep != nil {
			fmt.Fprintln(e.stdout, res.Sweep.Summary())
		}
		if path == "" {
			// Nowhere to save it: the document itself is the output.
			fmt.Fprintln(e.stdout)
			if err := render.WriteJSON(e.stdout, res); err != nil {
				return err
			}
		}
	}
	if path != "" {
		fmt.Fprintf(e.stderr, "result: %s\n", path)
	}
	for _, msg := range []string{run.Plots.Sweep, run.Plots.Chart} {
		if msg != "" {
			fmt.Fprintln(e.stderr, msg)
		}
	}
	// The tables the experiment declares, after the summary (not under
	// --json); their charts are beside the result.
	if !f.json {
		_ = render.WriteTables(e.stdout, res, run.Views)
	}
	if run.Plots.Table != "" {
		fmt.Fprintln(e.stderr, run.Plots.Table)
	}
	msgs := run.Problems()
	if run.SaveErr != nil {
		return &exitCode{code: exitSaveFailed, msg: strings.Join(msgs, "\n")}
	}
	if res.Outcome.Status == results.StatusInterrupted {
		return &exitCode{code: exitInterrupted, msg: res.Outcome.Reason}
	}
	if len(msgs) > 0 {
		return &exitCode{code: exitRunFailed, msg: strings.Join(msgs, "\n")}
	}
	return nil
}

// observer draws the engine's events on w: the progress of a run as a
// bar (on a terminal) or lines, everything else a line each.
func observer(w io.Writer) func(engine.Event) {
	var bar *progress
	return func(ev engine.Event) {
		switch ev := ev.(type) {
		case engine.Running:
			bar = newProgress(w, ev.Total, ev.Name(), ev.Count())
		case engine.PointStarted:
			if bar != nil {
				bar.startPoint(ev)
			}
		case engine.Progress:
			if bar != nil {
				bar.step(ev)
			}
		case engine.Ended:
			if bar != nil {
				if ev.OK {
					bar.done()
				} else {
					bar.abort()
				}
				bar = nil
			}
		case engine.Saved:
			// lab run prints the path after the summary.
		default:
			if bar != nil {
				bar.note(ev.String())
			} else {
				fmt.Fprintln(w, ev.String())
			}
		}
	}
}

// progress shows a run's progress: a bar with ETA on a terminal, plain
// lines otherwise.
type progress struct {
	w     io.Writer
	p     *mpb.Progress
	bar   *mpb.Bar
	total int
	name  string
	last  time.Time
	// offset is the repeats of the sweep points before this one; point
	// names the point in plain lines.
	offset int
	point  string
}

// isTerminal says whether x (a reader or writer) is a terminal.
func isTerminal(x any) bool {
	f, ok := x.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func newProgress(w io.Writer, total int, name, count string) *progress {
	pr := &progress{w: w, total: total, name: name, last: time.Now()}
	if isTerminal(w) {
		pr.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(30))
		pr.bar = pr.p.AddBar(int64(total),
			mpb.PrependDecorators(decor.Name(name+" "), decor.CountersNoUnit("%d/%d")),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO), decor.Name(" ETA "), decor.AverageETA(decor.ET_STYLE_GO)))
	} else {
		fmt.Fprintf(w, "running %s (%s)...\n", name, count)
	}
	return pr
}

func (pr *progress) note(msg string) {
	if pr.p != nil {
		pr.p.Write([]byte(msg + "\n"))
		return
	}
	fmt.Fprintln(pr.w, msg)
}

func (pr *progress) step(p engine.Progress) {
	if pr.bar != nil {
		pr.bar.SetCurrent(int64(pr.offset + p.Done))
		return
	}
	fmt.Fprintf(pr.w, "%s[%d/%d] %s (%.1fs)\n", pr.point, p.Done, p.Total, p.Message, time.Since(pr.last).Seconds())
	pr.last = time.Now()
}

// startPoint begins a sweep point, whose repeats come after p.Offset
// others.
func (pr *progress) startPoint(p engine.PointStarted) {
	pr.offset, pr.point = p.Offset, fmt.Sprintf("[point %d/%d %s] ", p.Index+1, p.N, p.Labels)
	pr.note(p.String())
	pr.last = time.Now()
}

func (pr *progress) done() {
	if pr.bar != nil {
		pr.bar.SetTotal(int64(pr.total), true)
		pr.p.Wait()
	}
}

func (pr *progress) abort() {
	if pr.bar != nil {
		pr.bar.Abort(false)
		pr.p.Wait()
	}
}
