package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/sys/unix"

	"lab/images"
	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/compare"
	"lab/results/render"
	"lab/vm"
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
	// combined: one of several profiles' runs (lab run --profile A
	// --profile B): with --json the documents are printed together at the
	// end, not one by one.
	combined bool
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
			"lab run holds the VM's run lock for the whole run: `lab exec` and `lab cp`\n" +
			"wait for it (saying so) unless given --no-wait; those that go ahead are\n" +
			"listed in the result as interference, and the summary warns about them.\n\n" +
			"Examples:\n" +
			"   lab up celeron-2.4 && lab run forkbench\n" +
			"   lab run forkbench --experiment create -p m=20000 --repeat 5\n" +
			"   lab run forkbench -e forktime --sweep n=500,1000,2000 --repeat 4\n" +
			"   lab run forkbench --profile xeon5130-1core --profile xeon5130-2core --repeat 4\n" +
			"   lab run forkbench --profile xeon5130-1core --json > result.json",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "vm", Usage: "VM to run in (default: the only VM up)"},
			&cli.StringSliceFlag{Name: "profile", Usage: "boot a throwaway VM from `PROFILE`, run, and discard it; repeatable: one run per profile, then their comparison"},
			&cli.StringFlag{Name: "clock", Usage: "with --profile: guest clock host, icount or icount:SHIFT (TCG, one online CPU); default: the profile's clock, else host"},
			profileFileFlag,
			&cli.StringFlag{Name: "experiment", Aliases: []string{"e"}, Usage: "experiment (default: the plugin's first; see `lab plugins show PLUGIN`)"},
			&cli.StringSliceFlag{Name: "param", Aliases: []string{"p"}, Usage: "parameter `KEY=VALUE`; repeatable"},
			&cli.GenericFlag{Name: "sweep", Value: sweeps, Usage: "sweep a parameter, `KEY=V1,V2,...`: one run per value, all in one VM and one result; repeatable (the cross product)"},
			&cli.IntFlag{Name: "repeat", Value: 1, Usage: "run the workload `N` times (per sweep point; medians, min/max and CV over the repeats)"},
			&cli.DurationFlag{Name: "timeout", Value: time.Hour, Usage: "give up after this long, the whole sweep included (the plugin is killed, the VM stays usable)"},
			&cli.StringFlag{Name: "out", Usage: "directory for result files (default: $LAB_RESULTS_DIR, else $XDG_DATA_HOME/lab/results, else ~/.local/share/lab/results)"},
			&cli.BoolFlag{Name: "all", Usage: "the summary lists every published figure, those of other machines too"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("lab run needs one PLUGIN (see `lab plugins`)")
			}
			f := runFlags{plugin: c.Args().First(), vm: c.String("vm"), profiles: c.StringSlice("profile"), files: c.StringSlice("profile-file"),
				experiment: c.String("experiment"), params: c.StringSlice("param"), sweeps: sweeps.flags, repeat: c.Int("repeat"),
				timeout: c.Duration("timeout"), clock: c.String("clock"), out: c.String("out"), json: c.Bool("json"), all: c.Bool("all")}
			return e.runPlugin(c.Context, f)
		},
	}
}

func parseParams(kvs []string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-p %q: want KEY=VALUE", kv)
		}
		m[k] = v
	}
	return m, nil
}

// runPlan is what a run was asked to do, checked before anything boots.
type runPlan struct {
	f      runFlags
	t0     time.Time
	outDir string
	desc   *plugins.Description
	exp    *plugins.Experiment
	// resolved holds every parameter; a swept key holds its values
	// joined ("50,100"), each point's own are in points.
	resolved map[string]string
	axes     []results.SweepAxis
	points   []sweepPoint
	refs     []results.Reference
	claims   []results.Claim
	// profiles and clocks: the throwaway VMs to boot, one run each.
	profiles []images.Profile
	clocks   []vm.Clock
}

// planRun checks everything that can be checked without a guest,
// starting with where the result goes: a run must not measure for an
// hour and then find it cannot save.
func (e *env) planRun(f runFlags) (*runPlan, error) {
	if f.repeat < 1 || f.repeat > 1000 {
		return nil, fmt.Errorf("--repeat %d: want 1..1000", f.repeat)
	}
	if f.vm != "" && len(f.profiles) > 0 {
		return nil, errors.New("give --vm or --profile, not both")
	}
	if f.clock != "" && len(f.profiles) == 0 {
		return nil, fmt.Errorf("--clock %s needs --profile: a VM that is up keeps the clock it booted with (`lab up --clock %s`)", f.clock, f.clock)
	}
	for i, p := range f.profiles {
		if slices.Contains(f.profiles[:i], p) {
			return nil, fmt.Errorf("--profile %s given twice; each profile runs once (use --repeat for more samples)", p)
		}
	}
	plan := &runPlan{f: f, t0: time.Now(), outDir: f.out}
	if plan.outDir == "" {
		var err error
		if plan.outDir, err = results.DefaultDir(); err != nil {
			return nil, err
		}
	}
	if err := results.CheckDir(plan.outDir); err != nil {
		return nil, fmt.Errorf("%w; make it writable or choose another with --out DIR (nothing was started)", err)
	}
	// The plugin's description is the one recorded when it was built: no
	// plugin code runs on the host.
	desc, err := host.Describe(f.plugin)
	if err != nil {
		return nil, err
	}
	params, err := parseParams(f.params)
	if err != nil {
		return nil, err
	}
	axes, err := parseSweeps(f.sweeps)
	if err != nil {
		return nil, err
	}
	exp, resolved, err := desc.Resolve(f.experiment, params)
	if err != nil {
		return nil, err
	}
	plan.desc, plan.exp, plan.resolved = desc, exp, resolved
	if len(axes) > 0 {
		if plan.axes, plan.points, err = planSweep(desc, exp, params, axes); err != nil {
			return nil, err
		}
		for _, a := range plan.axes {
			plan.resolved[a.Key] = strings.Join(a.Values, ",")
		}
	}
	for _, name := range f.profiles {
		p, err := images.Lookup(name, f.files...)
		if err != nil {
			return nil, err
		}
		clock, err := resolveClock(f.clock, p)
		if err == nil {
			err = vm.CheckClock(p, "auto", clock)
		}
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", p.Name, err)
		}
		plan.profiles = append(plan.profiles, p)
		plan.clocks = append(plan.clocks, clock)
	}
	// The published figures the experiment declares, for the comparison,
	// and the claims its runs decide.
	plan.refs = host.References(exp)
	plan.claims = host.Claims(desc.Name, exp)
	return plan, nil
}

func (e *env) runPlugin(ctx context.Context, f runFlags) error {
	plan, err := e.planRun(f)
	if err != nil {
		return err
	}
	if len(plan.profiles) > 1 {
		return e.runProfiles(ctx, plan)
	}
	var p *images.Profile
	var clock vm.Clock
	if len(plan.profiles) == 1 {
		p, clock = &plan.profiles[0], plan.clocks[0]
	}
	_, _, err = e.runOn(ctx, plan, p, clock, f)
	return err
}

// runOn runs the plan on a throwaway VM booted from profile (powered off
// afterwards), or with profile nil on the VM --vm names (or the only one
// up). It returns the result and where it was saved ("" if nowhere), or
// a nil result if the run never started.
func (e *env) runOn(ctx context.Context, plan *runPlan, profile *images.Profile, clock vm.Clock, f runFlags) (res *results.Result, path string, err error) {
	var (
		h     *vm.Handle
		vmTLS *host.VMTLS
	)
	if profile != nil {
		p := *profile
		exe, err := supervisorExe()
		if err != nil {
			return nil, "", err
		}
		var b [3]byte
		_, _ = rand.Read(b[:])
		name := p.Name + "-run-" + hex.EncodeToString(b[:])
		fmt.Fprintf(e.stderr, "booting throwaway vm %s (profile %s)...\n", name, p.Name)
		st, err := vm.Up(ctx, vm.UpOptions{Name: name, Profile: p, Accel: "auto", Clock: clock, Preload: preloadFor(p.Arch, e.stderr), Exe: exe, Log: e.stderr, Throwaway: true})
		if err != nil {
			return nil, "", err
		}
		fmt.Fprintf(e.stderr, "%s up in %.2fs (%s, clock %s)\n", name, st.BootSeconds, st.Accel, st.Clock)
		if h, err = vm.Open(name); err != nil {
			return nil, "", err
		}
		defer func() {
			dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// The run is saved: nothing in the guest is worth a clean
			// power-off. Killed instead, this process still takes the
			// VM with it (vm.UpOptions.Throwaway).
			if err := h.Discard(dctx); err != nil {
				fmt.Fprintf(e.stderr, "warning: powering off %s: %v\n", name, err)
			}
		}()
		// Made when the VM comes up, as `lab up` does.
		if vmTLS, err = host.EnsureTLS(h.Dir, h.Name); err != nil {
			return nil, "", err
		}
	} else if h, err = vm.OpenDefault(f.vm); err != nil {
		return nil, "", err
	}
	unlock, err := h.LockRun(ctx, e.args, func(holder *vm.RunHolder) {
		fmt.Fprintln(e.stderr, runBusyMessage(h.Name, holder))
	})
	if err != nil {
		return nil, "", err
	}
	defer unlock()
	desc, exp := plan.desc, plan.exp
	// The run's window for interference: from holding the lock to saving.
	locked := time.Now()
	var peer *peerRun // a second guest, if the experiment asks for one (peer.go)
	finish := func(res *results.Result) (*results.Result, string, error) {
		if peer != nil {
			peer.stop(e) // before saving: its fate goes into res.Peer
		}
		res.Finished = time.Now().UTC()
		recs, err := h.Interference(locked, res.Finished)
		if err != nil {
			fmt.Fprintf(e.stderr, "warning: %v\n", err)
		}
		for _, r := range recs {
			res.Interference = append(res.Interference, results.Interference{Time: r.Time.UTC(), Command: r.Command})
		}
		path, err := e.finishRun(res, plan.refs, plan.claims, plan.outDir, f, func(path string) {
			if path != "" {
				e.writePlot(plan, []*results.Result{res}, strings.TrimSuffix(path, filepath.Ext(path))+".svg")
				// A bar chart the experiment declares, if one fits the
				// run; "" for anything else, sweeps included.
				if msg := render.ChartBeside(path, res, host.Views(plan.exp)); msg != "" {
					fmt.Fprintln(e.stderr, msg)
				}
			}
			// A table the experiment declares after the summary (not
			// under --json) and its chart beside the result.
			if !f.json {
				_ = render.WriteTables(e.stdout, res, host.Views(plan.exp))
			}
			if msg := render.TableChartBeside(path, res, host.Views(plan.exp)); msg != "" {
				fmt.Fprintln(e.stderr, msg)
			}
		})
		return res, path, err
	}
	bundle, err := host.Find(f.plugin, h.State.Profile.Arch)
	if err != nil {
		return nil, "", err
	}
	if !reflect.DeepEqual(bundle.Description, desc) {
		return nil, "", fmt.Errorf("plugin %s: the %s build records another description than the plugin's other build; %s",
			f.plugin, bundle.Arch, "rebuild it with `make plugins` (lab's own plugins) or `lab plugin build DIR` (yours)")
	}
	// A VM booted by an older lab has no certificates yet: made now.
	if vmTLS == nil {
		if vmTLS, err = host.EnsureTLS(h.Dir, h.Name); err != nil {
			return nil, "", err
		}
	}

	res = &results.Result{
		Schema:  results.SchemaVersion,
		Started: time.Now().UTC(), Command: e.args,
		Machine: machineOf(h.State),
		Guest:   guestOf(h.State),
		Plugin:  desc.Name, PluginVersion: desc.Version,
		Experiment: exp.Name, Parameters: map[string]string{"repeat": fmt.Sprint(f.repeat)},
	}
	for k, v := range plan.resolved {
		res.Parameters[k] = v
	}
	res.ID = results.NewID(desc.Name, exp.Name, res.Started)
	var pluginEnv []string
	if wantsPeer(plan) {
		if peer, err = e.startPeer(ctx, plan, h, bundle); err != nil {
			return nil, "", err
		}
		defer peer.stop(e)
		res.Peer = peer.rec
		pluginEnv = peerEnv(plugins.PeerSelfAddr, plugins.PeerAddr)
	}

	runCtx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	npoints := max(len(plan.points), 1)
	count := fmt.Sprintf("%d repeat(s)", f.repeat)
	if plan.axes != nil {
		count = fmt.Sprintf("%d sweep point(s) x %d repeat(s)", npoints, f.repeat)
	}
	bar := newProgress(e.stderr, npoints*f.repeat, fmt.Sprintf("%s/%s on %s", desc.Name, exp.Name, h.Name), count)
	t := time.Now()
	sess, err := host.Open(runCtx, h.Link(), bundle, host.OpenOptions{TLS: vmTLS, Env: pluginEnv})
	if err != nil {
		bar.abort()
		res.Outcome = results.Outcome{Status: failedOrInterrupted(ctx), Reason: classify(ctx, runCtx, h, err, f.timeout)}
		if plan.axes != nil {
			res.Sweep = newSweep(plan)
		}
		return finish(res)
	}
	sent, cached, took := sess.Pushed()
	res.Harness = &results.Harness{StartSeconds: sess.Ready.Sub(plan.t0).Seconds(), OpenSeconds: sess.Ready.Sub(t).Seconds(),
		PushSeconds: took.Seconds(), FilesSent: sent, FilesCached: cached, StartRetried: sess.Retried}
	if sess.Retried != "" {
		fmt.Fprintf(e.stderr, "note: %s; started it again\n", sess.Retried)
	}
	bar.note(fmt.Sprintf("plugin %s started in %.2fs (pushed %d files in %.2fs, %d already in the guest)", bundle.Name, res.Harness.OpenSeconds, sent, took.Seconds(), cached))

	if plan.axes != nil {
		e.runSweep(ctx, runCtx, plan, h, sess, res, bar)
		sess.Close()
		return finish(res)
	}
	var partial []results.Sample
	resp, err := sess.Bench.Run(runCtx, &plugins.RunRequest{Experiment: exp.Name, Params: plan.resolved, Repeat: f.repeat}, func(p plugins.Progress) {
		partial = append(partial, host.Samples(p.Samples)...)
		bar.step(p)
	})
	switch {
	case err == nil:
		bar.done()
		res.Samples = host.Samples(resp.Samples)
		res.Outcome = host.Outcome(resp.Outcome)
		res.Guest = mergeEnv(res.Guest, host.Env(resp.Env))
	default:
		bar.abort()
		res.Samples = partial
		if resp != nil && len(resp.Samples) >= len(partial) {
			res.Samples = host.Samples(resp.Samples)
			res.Guest = mergeEnv(res.Guest, host.Env(resp.Env))
		}
		res.Outcome = runFailure(ctx, runCtx, h, sess, err, f.timeout)
	}
	sess.Close()
	return finish(res)
}

// runFailure is the outcome of a Run call that broke: interrupted, timed
// out, the plugin crashed, the guest died, or the error as it is.
func runFailure(ctx, runCtx context.Context, h *vm.Handle, sess *host.Session, err error, timeout time.Duration) results.Outcome {
	reason := classify(ctx, runCtx, h, err, timeout)
	var rerr *plugins.RunError
	if ctx.Err() == nil && runCtx.Err() == nil && !errors.As(err, &rerr) {
		// The exit frame may trail the broken connection a little.
		code, exited, linkErr := sess.Exit(3 * time.Second)
		switch {
		case takenDown(h) != "":
		case exited && linkErr == nil:
			reason = fmt.Sprintf("the plugin crashed (exit status %d): %v", code, err)
		case exited || guestGone(h, 3*time.Second):
			reason = fmt.Sprintf("the guest died mid-run (vm %s is gone): %v", h.Name, err)
		}
	}
	return results.Outcome{Status: failedOrInterrupted(ctx), Reason: reason, StderrTail: sess.StderrTail()}
}

// takenDown is the reason of a run whose VM `lab down --force` took down
// under it ("" if it was not): the plugin then dies of the guest's
// shutdown, which must not read as a crash.
func takenDown(h *vm.Handle) string {
	// The supervisor records why before it powers the guest off, and a
	// new VM of the name forgets an older record.
	en, err := vm.ReadEnded(h.Name)
	if err != nil || en.Cause != vm.EndDown {
		return ""
	}
	return fmt.Sprintf("the VM was %s mid-run", en.Reason)
}

// failedOrInterrupted is the status of a run that broke: interrupted if
// the user stopped it (Ctrl-C: what finished is kept, exit 130), else
// failed.
func failedOrInterrupted(ctx context.Context) string {
	if ctx.Err() != nil {
		return results.StatusInterrupted
	}
	return "failed"
}

// classify turns a run error into a reason a user can act on.
func classify(ctx, runCtx context.Context, h *vm.Handle, err error, timeout time.Duration) string {
	switch {
	case ctx.Err() != nil:
		return "interrupted (Ctrl-C)"
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("timed out after %v (--timeout); the plugin was killed", timeout)
	}
	if down := takenDown(h); down != "" {
		return down + ": " + err.Error()
	}
	return err.Error()
}

// guestGone says whether the VM went away (its QEMU or supervisor died),
// waiting up to d for the supervisor to notice.
func guestGone(h *vm.Handle, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if _, err := vm.Open(h.Name); err != nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// finish analyses (against refs, the published figures the experiment
// declares), decides claims, saves and prints a result; a failed run still
// saves what it measured and exits exitRunFailed. A result is never lost:
// if it cannot be saved in dir, it goes to a fallback file, else in full
// to stdout, and the exit code is exitSaveFailed.
func (e *env) finish(res *results.Result, refs []results.Reference, claims []results.Claim, dir string, f runFlags) error {
	_, err := e.finishRun(res, refs, claims, dir, f, nil)
	return err
}

// finishRun is finish calling after with the path the result was saved
// at ("" if nowhere) once it is printed, and returning that path. An
// interrupted sweep exits exitInterrupted once its points are saved.
func (e *env) finishRun(res *results.Result, refs []results.Reference, claims []results.Claim, dir string, f runFlags, after func(path string)) (string, error) {
	asJSON := f.json
	if res.Finished.IsZero() {
		res.Finished = time.Now().UTC()
	}
	// JSON cannot carry NaN or ±Inf; the plugin SDK refuses them, but a
	// document that cannot be encoded would be lost entirely.
	if dropped := res.DropNonFinite(); len(dropped) > 0 {
		failRun(res, "non-finite values dropped (not numbers JSON can carry): "+strings.Join(dropped, "; "))
	}
	compare.Analyze(res, refs)
	rclaims.JudgeSweep(res, claims, e.claimStore(claims, dir))
	if err := res.CheckFinite(); err != nil {
		res.Summary, res.Comparisons, res.Verdicts = nil, nil, nil
		failRun(res, "statistics left out: "+err.Error())
	}
	path, saveErr := results.Save(dir, res)
	saved := saveErr == nil
	if !saved {
		path = saveFallback(res)
	}
	switch {
	case asJSON && f.combined:
		// Printed with the other profiles' runs at the end.
	case asJSON:
		if err := render.WriteJSON(e.stdout, res); err != nil {
			return path, err
		}
	default:
		write := render.WriteTable
		if f.all {
			write = render.WriteTableAll
		}
		if err := write(e.stdout, res); err != nil {
			return path, err
		}
		if res.Sweep != nil {
			fmt.Fprintln(e.stdout, sweepLine(res.Sweep))
		}
		if path == "" {
			// Nowhere to save it: the document itself is the output.
			fmt.Fprintln(e.stdout)
			if err := render.WriteJSON(e.stdout, res); err != nil {
				return path, err
			}
		}
	}
	if path != "" {
		fmt.Fprintf(e.stderr, "result: %s\n", path)
	}
	if after != nil {
		after(path)
	}
	var msgs []string
	if res.Outcome.Status == "failed" {
		msg := "run failed: " + res.Outcome.Reason
		if res.Outcome.StderrTail != "" {
			msg += "\nplugin stderr (tail):\n" + res.Outcome.StderrTail
		}
		msgs = append(msgs, msg)
	}
	if !saved {
		where := "printed in full on stdout above"
		if path != "" {
			where = "saved to " + path + " instead"
		}
		msgs = append(msgs, fmt.Sprintf("saving the result in %s failed: %v; the result was %s (move it into your results directory)", dir, saveErr, where))
		return path, &exitCode{code: exitSaveFailed, msg: strings.Join(msgs, "\n")}
	}
	if res.Outcome.Status == results.StatusInterrupted {
		return path, &exitCode{code: exitInterrupted, msg: res.Outcome.Reason}
	}
	if len(msgs) > 0 {
		return path, &exitCode{code: exitRunFailed, msg: strings.Join(msgs, "\n")}
	}
	return path, nil
}

// claimStore loads the stored runs a speedup claim needs (its other
// run), only when claims has one: reading the store costs time.
func (e *env) claimStore(claims []results.Claim, dir string) []*results.Result {
	for _, c := range claims {
		if c.Kind == results.KindSpeedup {
			store, errs := results.LoadAll(dir)
			for _, err := range errs {
				fmt.Fprintf(e.stderr, "warning: %v\n", err)
			}
			return store
		}
	}
	return nil
}

// failRun marks res failed with reason, keeping an earlier reason.
func failRun(res *results.Result, reason string) {
	if res.Outcome.Status == "failed" && res.Outcome.Reason != "" {
		reason = res.Outcome.Reason + "; " + reason
	}
	res.Outcome.Status, res.Outcome.Reason = "failed", reason
}

// saveFallback saves res where it can when the results directory failed:
// the temp directory, else the current one. It returns the path, or "" if
// neither worked.
func saveFallback(res *results.Result) string {
	for _, dir := range []string{os.TempDir(), "."} {
		if path, err := results.Save(dir, res); err == nil {
			if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			return path
		}
	}
	return ""
}

func machineOf(st *vm.State) results.Machine {
	return results.Machine{
		Name: st.Name, Profile: st.Profile, QEMUArgv: st.Argv, QEMUVersion: st.QEMUVersion,
		Accelerator: st.Accel, Clock: st.Clock.String(),
		KernelID: st.KernelID, KernelSHA256: st.KernelSHA256, KernelEntry: st.KernelEntry, KernelPackage: st.KernelPackage, Boot: st.Boot,
		KernelConfig: st.KernelConfig, KernelNotable: st.KernelNotable,
	}
}

// guestOf is what the agent reported at boot; the plugin's own view of the
// guest replaces it when the run gets that far.
func guestOf(st *vm.State) results.GuestEnv {
	g := st.Guest
	if g == nil {
		return results.GuestEnv{}
	}
	return results.GuestEnv{Uname: g.Uname, KernelRelease: g.KernelRelease, CPUModel: g.CPUModel, CPUFamily: g.CPUFamily,
		CPUModelNum: g.CPUModelNum, OnlineCPUs: g.OnlineCPUs, PresentCPUs: g.PresentCPUs, MemTotalKB: g.MemTotalKB, StackKB: g.StackKB}
}

func mergeEnv(base, got results.GuestEnv) results.GuestEnv {
	if got.Uname == "" {
		got.Uname, got.KernelRelease = base.Uname, base.KernelRelease
	}
	if got.CPUModel == "" {
		got.CPUModel, got.CPUFamily, got.CPUModelNum = base.CPUModel, base.CPUFamily, base.CPUModelNum
	}
	if got.OnlineCPUs == 0 {
		got.OnlineCPUs, got.PresentCPUs = base.OnlineCPUs, base.PresentCPUs
	}
	if got.MemTotalKB == 0 {
		got.MemTotalKB = base.MemTotalKB
	}
	if got.StackKB == 0 {
		got.StackKB = base.StackKB
	}
	return got
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

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
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

func (pr *progress) step(p plugins.Progress) {
	if pr.bar != nil {
		pr.bar.SetCurrent(int64(pr.offset + p.Done))
		return
	}
	fmt.Fprintf(pr.w, "%s[%d/%d] %s (%.1fs)\n", pr.point, p.Done, p.Total, p.Message, time.Since(pr.last).Seconds())
	pr.last = time.Now()
}

// startPoint begins sweep point i of n (labels), whose repeats come after
// offset others.
func (pr *progress) startPoint(i, n, offset int, labels string) {
	pr.offset, pr.point = offset, fmt.Sprintf("[point %d/%d %s] ", i+1, n, labels)
	pr.note(fmt.Sprintf("point %d/%d: %s", i+1, n, labels))
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
