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
	"lab/vm"
)

type runFlags struct {
	plugin     string
	vm         string
	profile    string
	files      []string
	experiment string
	params     []string
	repeat     int
	timeout    time.Duration
	clock      string
	out        string
	json       bool
	all        bool
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
)

func runCommand(e *env) *cli.Command {
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
			"lab run holds the VM's run lock for the whole run: `lab exec` and `lab cp`\n" +
			"wait for it (saying so) unless given --no-wait; those that go ahead are\n" +
			"listed in the result as interference, and the summary warns about them.\n\n" +
			"Examples:\n" +
			"   lab up celeron-2.4 && lab run forkbench\n" +
			"   lab run forkbench --experiment create -p m=20000 --repeat 5\n" +
			"   lab run forkbench --profile xeon5130-1core --json > result.json",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "vm", Usage: "VM to run in (default: the only VM up)"},
			&cli.StringFlag{Name: "profile", Usage: "boot a throwaway VM from `PROFILE`, run, and power it off"},
			&cli.StringFlag{Name: "clock", Usage: "with --profile: guest clock host, icount or icount:SHIFT (TCG, one online CPU); default: the profile's clock, else host"},
			profileFileFlag,
			&cli.StringFlag{Name: "experiment", Aliases: []string{"e"}, Usage: "experiment (default: the plugin's first; see `lab plugins show PLUGIN`)"},
			&cli.StringSliceFlag{Name: "param", Aliases: []string{"p"}, Usage: "parameter `KEY=VALUE`; repeatable"},
			&cli.IntFlag{Name: "repeat", Value: 1, Usage: "run the workload `N` times (medians, min/max and CV over the repeats)"},
			&cli.DurationFlag{Name: "timeout", Value: time.Hour, Usage: "give up after this long (the plugin is killed, the VM stays usable)"},
			&cli.StringFlag{Name: "out", Usage: "directory for result files (default: $LAB_RESULTS_DIR, else $XDG_DATA_HOME/lab/results, else ~/.local/share/lab/results)"},
			&cli.BoolFlag{Name: "all", Usage: "the summary lists every published figure, those of other machines too"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("lab run needs one PLUGIN (see `lab plugins`)")
			}
			f := runFlags{plugin: c.Args().First(), vm: c.String("vm"), profile: c.String("profile"), files: c.StringSlice("profile-file"),
				experiment: c.String("experiment"), params: c.StringSlice("param"), repeat: c.Int("repeat"),
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

func (e *env) runPlugin(ctx context.Context, f runFlags) error {
	t0 := time.Now()
	if f.repeat < 1 || f.repeat > 1000 {
		return fmt.Errorf("--repeat %d: want 1..1000", f.repeat)
	}
	if f.vm != "" && f.profile != "" {
		return errors.New("give --vm or --profile, not both")
	}
	if f.clock != "" && f.profile == "" {
		return fmt.Errorf("--clock %s needs --profile: a VM that is up keeps the clock it booted with (`lab up --clock %s`)", f.clock, f.clock)
	}
	// Everything that can be checked without a guest is checked first,
	// starting with where the result goes: a run must not measure for an
	// hour and then find it cannot save.
	outDir := f.out
	if outDir == "" {
		var err error
		if outDir, err = results.DefaultDir(); err != nil {
			return err
		}
	}
	if err := results.CheckDir(outDir); err != nil {
		return fmt.Errorf("%w; make it writable or choose another with --out DIR (nothing was started)", err)
	}
	// The plugin's description is the one recorded when it was built: no
	// plugin code runs on the host.
	desc, err := host.Describe(f.plugin)
	if err != nil {
		return err
	}
	params, err := parseParams(f.params)
	if err != nil {
		return err
	}
	exp, resolved, err := desc.Resolve(f.experiment, params)
	if err != nil {
		return err
	}

	var h *vm.Handle
	var vmTLS *host.VMTLS
	if f.profile != "" {
		p, err := images.Lookup(f.profile, f.files...)
		if err != nil {
			return err
		}
		clock, err := resolveClock(f.clock, p)
		if err != nil {
			return err
		}
		exe, err := supervisorExe()
		if err != nil {
			return err
		}
		var b [3]byte
		_, _ = rand.Read(b[:])
		name := p.Name + "-run-" + hex.EncodeToString(b[:])
		fmt.Fprintf(e.stderr, "booting throwaway vm %s (profile %s)...\n", name, p.Name)
		st, err := vm.Up(ctx, vm.UpOptions{Name: name, Profile: p, Accel: "auto", Clock: clock, Preload: preloadFor(p.Arch, e.stderr), Exe: exe, Log: e.stderr})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "%s up in %.2fs (%s, clock %s)\n", name, st.BootSeconds, st.Accel, st.Clock)
		if h, err = vm.Open(name); err != nil {
			return err
		}
		defer func() {
			dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := h.Down(dctx, 20*time.Second); err != nil {
				fmt.Fprintf(e.stderr, "warning: powering off %s: %v\n", name, err)
			}
		}()
		// Made when the VM comes up, as `lab up` does.
		if vmTLS, err = host.EnsureTLS(h.Dir, h.Name); err != nil {
			return err
		}
	} else if h, err = vm.OpenDefault(f.vm); err != nil {
		return err
	}
	unlock, err := h.LockRun(ctx, e.args, func(holder *vm.RunHolder) {
		fmt.Fprintln(e.stderr, runBusyMessage(h.Name, holder))
	})
	if err != nil {
		return err
	}
	defer unlock()
	// The published figures the experiment declares, for the comparison,
	// and the claims its runs decide.
	refs := host.References(exp)
	claims := host.Claims(desc.Name, exp)
	// The run's window for interference: from holding the lock to saving.
	locked := time.Now()
	finish := func(res *results.Result) error {
		res.Finished = time.Now().UTC()
		recs, err := h.Interference(locked, res.Finished)
		if err != nil {
			fmt.Fprintf(e.stderr, "warning: %v\n", err)
		}
		for _, r := range recs {
			res.Interference = append(res.Interference, results.Interference{Time: r.Time.UTC(), Command: r.Command})
		}
		return e.finish(res, refs, claims, outDir, f)
	}
	bundle, err := host.Find(f.plugin, h.State.Profile.Arch)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(bundle.Description, desc) {
		return fmt.Errorf("plugin %s: the %s build records another description than the plugin's other build; %s",
			f.plugin, bundle.Arch, "rebuild it with `make plugins` (lab's own plugins) or `lab plugin build DIR` (yours)")
	}
	// A VM booted by an older lab has no certificates yet: made now.
	if vmTLS == nil {
		if vmTLS, err = host.EnsureTLS(h.Dir, h.Name); err != nil {
			return err
		}
	}

	res := &results.Result{
		Schema:  results.SchemaVersion,
		Started: time.Now().UTC(), Command: e.args,
		Machine: machineOf(h.State),
		Guest:   guestOf(h.State),
		Plugin:  desc.Name, PluginVersion: desc.Version,
		Experiment: exp.Name, Parameters: map[string]string{"repeat": fmt.Sprint(f.repeat)},
	}
	for k, v := range resolved {
		res.Parameters[k] = v
	}
	res.ID = results.NewID(desc.Name, exp.Name, res.Started)

	runCtx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	bar := newProgress(e.stderr, f.repeat, fmt.Sprintf("%s/%s on %s", desc.Name, exp.Name, h.Name))
	t := time.Now()
	sess, err := host.Open(runCtx, h.Link(), bundle, host.OpenOptions{TLS: vmTLS})
	if err != nil {
		bar.abort()
		res.Outcome = results.Outcome{Status: "failed", Reason: classify(ctx, runCtx, h, err, f.timeout)}
		return finish(res)
	}
	sent, cached, took := sess.Pushed()
	res.Harness = &results.Harness{StartSeconds: sess.Ready.Sub(t0).Seconds(), OpenSeconds: sess.Ready.Sub(t).Seconds(),
		PushSeconds: took.Seconds(), FilesSent: sent, FilesCached: cached}
	bar.note(fmt.Sprintf("plugin %s started in %.2fs (pushed %d files in %.2fs, %d already in the guest)", bundle.Name, res.Harness.OpenSeconds, sent, took.Seconds(), cached))

	var partial []results.Sample
	resp, err := sess.Bench.Run(runCtx, &plugins.RunRequest{Experiment: exp.Name, Params: resolved, Repeat: f.repeat}, func(p plugins.Progress) {
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
		reason := classify(ctx, runCtx, h, err, f.timeout)
		var rerr *plugins.RunError
		if ctx.Err() == nil && runCtx.Err() == nil && !errors.As(err, &rerr) {
			// The exit frame may trail the broken connection a little.
			code, exited, linkErr := sess.Exit(3 * time.Second)
			switch {
			case exited && linkErr == nil:
				reason = fmt.Sprintf("the plugin crashed (exit status %d): %v", code, err)
			case exited || guestGone(h, 3*time.Second):
				reason = fmt.Sprintf("the guest died mid-run (vm %s is gone): %v", h.Name, err)
			}
		}
		res.Outcome = results.Outcome{Status: "failed", Reason: reason, StderrTail: sess.StderrTail()}
	}
	sess.Close()
	return finish(res)
}

// classify turns a run error into a reason a user can act on.
func classify(ctx, runCtx context.Context, h *vm.Handle, err error, timeout time.Duration) string {
	switch {
	case ctx.Err() != nil:
		return "interrupted (Ctrl-C)"
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("timed out after %v (--timeout); the plugin was killed", timeout)
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
	asJSON := f.json
	if res.Finished.IsZero() {
		res.Finished = time.Now().UTC()
	}
	// JSON cannot carry NaN or ±Inf; the plugin SDK refuses them, but a
	// document that cannot be encoded would be lost entirely.
	if dropped := res.DropNonFinite(); len(dropped) > 0 {
		failRun(res, "non-finite values dropped (not numbers JSON can carry): "+strings.Join(dropped, "; "))
	}
	res.Analyze(refs)
	res.Judge(claims, e.claimStore(claims, dir))
	if err := res.CheckFinite(); err != nil {
		res.Summary, res.Comparisons, res.Verdicts = nil, nil, nil
		failRun(res, "statistics left out: "+err.Error())
	}
	path, saveErr := results.Save(dir, res)
	saved := saveErr == nil
	if !saved {
		path = saveFallback(res)
	}
	if asJSON {
		if err := results.WriteJSON(e.stdout, res); err != nil {
			return err
		}
	} else {
		write := results.WriteTable
		if f.all {
			write = results.WriteTableAll
		}
		if err := write(e.stdout, res); err != nil {
			return err
		}
		if path == "" {
			// Nowhere to save it: the document itself is the output.
			fmt.Fprintln(e.stdout)
			if err := results.WriteJSON(e.stdout, res); err != nil {
				return err
			}
		}
	}
	if path != "" {
		fmt.Fprintf(e.stderr, "result: %s\n", path)
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
		return &exitCode{code: exitSaveFailed, msg: strings.Join(msgs, "\n")}
	}
	if len(msgs) > 0 {
		return &exitCode{code: exitRunFailed, msg: strings.Join(msgs, "\n")}
	}
	return nil
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
		KernelID: st.KernelID, KernelSHA256: st.KernelSHA256, KernelPackage: st.KernelPackage, Boot: st.Boot,
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
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

func newProgress(w io.Writer, total int, name string) *progress {
	pr := &progress{w: w, total: total, name: name, last: time.Now()}
	if isTerminal(w) {
		pr.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(30))
		pr.bar = pr.p.AddBar(int64(total),
			mpb.PrependDecorators(decor.Name(name+" "), decor.CountersNoUnit("%d/%d")),
			mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO), decor.Name(" ETA "), decor.AverageETA(decor.ET_STYLE_GO)))
	} else {
		fmt.Fprintf(w, "running %s (%d repeat(s))...\n", name, total)
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
		pr.bar.SetCurrent(int64(p.Done))
		return
	}
	fmt.Fprintf(pr.w, "[%d/%d] %s (%.1fs)\n", p.Done, p.Total, p.Message, time.Since(pr.last).Seconds())
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
