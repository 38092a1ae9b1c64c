// Package engine runs lab's experiments: it plans a run (checking all it
// can before anything boots), runs it on a VM that is up, on a throwaway
// VM, with a peer guest, point by point for a sweep and on several
// profiles in turn, analyses and saves the result, and schedules a
// matrix's cells. It reports progress as typed events (Event) and
// failures as typed kinds (Kind, *Failure), and prints nothing: the
// command line draws and prints.
package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"lab/images"
	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	rclaims "lab/results/claims"
	"lab/results/compare"
	"lab/results/render"
	"lab/vm"
)

// Options are what the engine is given besides the plan.
type Options struct {
	// Observe receives the engine's events, one at a time; nil drops
	// them.
	Observe func(Event)
	// Exe is the executable that runs the supervisors of the VMs the
	// engine boots (vm.UpOptions.Exe).
	Exe string
	// PeerMemoryMB, if set, boots a peer guest with this much memory
	// instead of its profile's (tests make its boot fail this way).
	PeerMemoryMB int
	// Ran, if set, is called with each run Do makes as it ends: the
	// profile it ran on, the run (nil if it did not start) and its
	// error.
	Ran func(profile string, run *Run, err error)
	// machines, in tests, replace QEMU guests (machine.go).
	machines machines
	// preloads, if set, keeps each arch's preload list (Preload) once
	// made: a matrix lists it once for all its boots, not once a boot.
	preloads *preloads
}

// preloads are the preload lists made, by arch.
type preloads struct {
	mu    sync.Mutex
	files map[string][]vm.PreloadFile
}

func (o Options) emit(e Event) {
	if o.Observe != nil {
		o.Observe(e)
	}
}

// Run is a run that started: its result, and where that went.
type Run struct {
	Result *results.Result
	// Path is where the result was saved: in Dir, else (SaveErr set) a
	// fallback file in the temp or current directory, else "".
	Path string
	// Dir is the results directory the result was meant for.
	Dir     string
	SaveErr error
	// Views are the tables and charts the experiment declares.
	Views results.Views
	// Plots say what was drawn beside the result: a line each for the
	// sweep's plot, the declared bar chart, the declared table's chart
	// ("plot: PATH", "no plot: why", "warning: plot PATH: error"), "" for
	// none.
	Plots Plots
	// Undecided and Elsewhere are what its summary says beyond the
	// result (Do): the command deciding each claim the repeats lab
	// chose left inconclusive (Undecided), and the claims of the
	// plugin's other experiments on the machine its profile stands for
	// (pointers).
	Undecided, Elsewhere []string
	// Recap are the claims whose verdicts the summary ends with: those
	// lab chose the experiment for (ExperimentChosen.Claims).
	Recap []string
}

// Problems say what went wrong, a message each: the run failed (with
// the tail of the plugin's stderr), saving it in Dir failed (and where
// the result went instead); none when it ended well.
func (r *Run) Problems() []string {
	var msgs []string
	if o := r.Result.Outcome; o.Status == results.StatusFailed {
		msg := "run failed: " + o.Reason
		if o.StderrTail != "" {
			msg += "\nplugin stderr (tail):\n" + o.StderrTail
		}
		msgs = append(msgs, msg)
	}
	if r.SaveErr != nil {
		where := "printed in full on stdout above"
		if r.Path != "" {
			where = "saved to " + r.Path + " instead"
		}
		msgs = append(msgs, fmt.Sprintf("saving the result in %s failed: %v; the result was %s (move it into your results directory)", r.Dir, r.SaveErr, where))
	}
	return msgs
}

// Plots are the lines saying what was drawn beside a result.
type Plots struct{ Sweep, Chart, Table string }

// open opens the VM plan.VM names (or the only one up) and checks that
// the plan can run there.
func (plan *Plan) open(opts Options) (machine, error) {
	m, err := opts.vms().Open(plan)
	if err != nil {
		return nil, err
	}
	if err := plan.CheckNeeds(m.State().Profile); err != nil {
		return nil, fmt.Errorf("vm %s: %w", m.Name(), err)
	}
	return m, nil
}

// onThrowaway runs plan on a throwaway VM booted from profile p with
// clock, powered off afterwards.
func onThrowaway(ctx context.Context, plan *Plan, p images.Profile, clock vm.Clock, opts Options) (*Run, error) {
	m, err := opts.vms().Boot(ctx, plan, p, clock, opts)
	if err != nil {
		return nil, err
	}
	return runOn(ctx, plan, m, true, opts)
}

// logWriter turns what vm.Up writes into Log events, a line each.
type logWriter struct {
	opts Options
	mu   sync.Mutex
	buf  []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.opts.emit(Log{Line: string(w.buf[:i])})
		w.buf = w.buf[i+1:]
	}
}

// Preload is what a VM of arch preloads into the guest cache of its
// booted snapshot: lab's own plugins built for that arch (see
// vm/preload.go).
func Preload(path host.SearchPath, arch string) ([]vm.PreloadFile, error) {
	return host.BuiltinPreload(path.Builtin, arch)
}

// preload is Preload, failing with a warning: failing to list lab's
// plugins only costs the first run of each a push. With o.preloads, each
// arch's list is made once (a failed one is made again).
func (o Options) preload(path host.SearchPath, arch string) []vm.PreloadFile {
	c := o.preloads
	if c != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		if files, ok := c.files[arch]; ok {
			return files
		}
	}
	files, err := Preload(path, arch)
	if err != nil {
		o.emit(Warning{Text: fmt.Sprintf("listing lab's plugins to preload into the snapshot: %v; their first run will push them", err)})
		return files
	}
	if c != nil {
		if c.files == nil {
			c.files = map[string][]vm.PreloadFile{}
		}
		c.files[arch] = files
	}
	return files
}

// runOn runs the plan on machine m; a throwaway m is discarded once the
// run is saved. Its steps: hold the VM's run lock, start the peer guest
// if the experiment asks for one, start the plugin, run the experiment
// (once, or point by point for a sweep), and save what came back
// whatever happened (finish).
func runOn(ctx context.Context, plan *Plan, m machine, throwaway bool, opts Options) (*Run, error) {
	// closing is the plugin session closing while the run is saved and
	// its throwaway VM discarded (closeSession).
	var closing sync.WaitGroup
	if throwaway {
		defer func() {
			dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// The run is saved: nothing in the guest is worth a clean
			// power-off. Killed instead, this process still takes the
			// VM with it (vm.UpOptions.Throwaway).
			if err := m.Discard(dctx); err != nil {
				opts.emit(Warning{Text: fmt.Sprintf("powering off %s: %v", m.Name(), err)})
			}
			closing.Wait()
		}()
	}
	unlock, err := m.LockRun(ctx, plan.Command, func(holder *vm.RunHolder) {
		opts.emit(Waiting{VM: m.Name(), Holder: holder})
	})
	if err != nil {
		return nil, err
	}
	defer unlock()
	// The run's window, and its window for interference: from holding
	// the lock to saving (a command let in meanwhile is within the run).
	locked := time.Now()
	bundle, err := plan.bundle(m.State().Profile.Arch)
	if err != nil {
		return nil, err
	}
	r := &running{plan: plan, m: m, opts: opts, res: newResult(plan, m.State(), locked), locked: locked}
	if prev := plan.addTo; prev != nil {
		if diff := addToMachine(prev, r.res.Machine); diff != "" {
			return nil, fmt.Errorf("--add-to %s: that run was on another machine: %s; run on its profile and clock (`lab run %s --profile %s --clock %s --add-to %s`); nothing was measured",
				prev.ID, diff, plan.Desc.Name, results.ProfileName(prev.Machine), prev.Machine.Clock, prev.ID)
		}
		r.res.AddTo = prev.ID
	}
	var pluginEnv []string
	if wantsPeer(plan) {
		if r.peer, err = m.Peer(ctx, plan, bundle, opts); err != nil {
			return nil, err
		}
		defer r.peer.Stop(opts)
		r.res.Peer = r.peer.Record()
		pluginEnv = peerEnv(plugins.PeerSelfAddr, plugins.PeerAddr)
	}

	runCtx, cancel := context.WithTimeout(ctx, plan.Timeout)
	defer cancel()
	desc, exp := plan.Desc, plan.Exp
	npoints := max(len(plan.Points), 1)
	opts.emit(Running{Plugin: desc.Name, Experiment: exp.Name, VM: m.Name(), Repeat: plan.Repeat, Points: npoints,
		Total: npoints * plan.Repeat, Sweep: plan.Axes != nil})
	t := time.Now()
	sess, err := m.Plugin(runCtx, bundle, pluginEnv)
	if err != nil {
		opts.emit(Ended{OK: false})
		r.broke = classify(ctx, runCtx, m, err, plan.Timeout)
		r.res.Outcome = results.Outcome{Status: failedOrInterrupted(ctx), Reason: r.broke.Reason}
		if plan.Axes != nil {
			r.res.Sweep = newSweep(plan)
		}
		return r.finish()
	}
	ready, sent, cached, took, retried := sess.Started()
	r.res.Harness = &results.Harness{StartSeconds: ready.Sub(plan.Started).Seconds(), OpenSeconds: ready.Sub(t).Seconds(),
		PushSeconds: took.Seconds(), FilesSent: sent, FilesCached: cached, StartRetried: retried}
	if retried != "" {
		opts.emit(Note{Text: retried + "; started it again"})
	}
	opts.emit(PluginStarted{Plugin: bundle.Name, Seconds: r.res.Harness.OpenSeconds, PushSeconds: took.Seconds(), Sent: sent, Cached: cached})

	s := &session{ctx: ctx, runCtx: runCtx, plan: plan, m: m, sess: sess, opts: opts}
	if plan.Axes != nil {
		r.broke = s.sweep(r.res)
	} else {
		r.once(s)
	}
	// The plugin ends. On a VM that stays up it ends before the run lets
	// go of the VM. A throwaway VM is discarded once the run is saved,
	// plugin and all: the plugin's graceful stop (tens of ms of round
	// trips under TCG) then overlaps saving and discarding instead of
	// coming before them, and ends (or fails fast on the gone link)
	// before runOn returns.
	if throwaway {
		closing.Add(1)
		go func() {
			defer closing.Done()
			sess.Close()
		}()
	} else {
		sess.Close()
	}
	r.dropped(sess)
	return r.finish()
}

// running is a run under way: what finish saves.
type running struct {
	plan   *Plan
	m      machine
	opts   Options
	res    *results.Result
	locked time.Time
	peer   peer
	// broke is how the run broke, if it did.
	broke *Failure
}

// newResult is the result of a run of plan on the VM of state st that
// holds it from locked: what is known before the plugin starts.
func newResult(plan *Plan, st *vm.State, locked time.Time) *results.Result {
	desc, exp := plan.Desc, plan.Exp
	res := &results.Result{
		Schema:  results.SchemaVersion,
		Started: locked.UTC(), Command: plan.Command,
		Machine: machineOf(st),
		Guest:   guestOf(st),
		Plugin:  desc.Name, PluginVersion: desc.Version,
		Experiment: exp.Name, Parameters: map[string]string{"repeat": fmt.Sprint(plan.Repeat)},
	}
	for _, m := range exp.Metrics {
		if m.TickSampled {
			res.TickSampled = append(res.TickSampled, m.Name)
		}
	}
	for k, v := range plan.Resolved {
		res.Parameters[k] = v
	}
	res.ID = results.NewID(desc.Name, exp.Name, res.Started)
	return res
}

// once runs the experiment once, its repeats in one call.
func (r *running) once(s *session) {
	c := s.call(r.plan.Resolved, nil, func(p plugins.Progress) { r.opts.emit(Progress{Done: p.Done, Total: p.Total, Message: p.Message}) })
	r.opts.emit(Ended{OK: c.broke == nil})
	r.res.Samples = c.samples
	if c.env != nil {
		r.res.Guest = mergeEnv(r.res.Guest, *c.env)
	}
	if c.broke == nil {
		r.res.Outcome = c.outcome
	} else {
		r.res.Outcome, r.broke = c.broke.outcome, c.broke.failure
	}
}

// dropped records, and says, what of the plugin's output lab dropped
// (its cap) and what the plugin left in the guest that had to be
// cleaned up (known once it has exited: on a VM that stays up).
func (r *running) dropped(sess pluginSession) {
	for _, d := range [][]string{sess.Dropped(), sess.LeftBehind()} {
		for _, line := range d {
			r.opts.emit(Warning{Text: line})
		}
	}
	if d := sess.Dropped(); len(d) > 0 {
		r.res.Harness.OutputDropped = d
	}
	if l := sess.LeftBehind(); len(l) > 0 {
		r.res.Harness.LeftBehind = l
	}
}

// finish ends the peer, records the commands let in meanwhile, checks
// what the plugin returned, and saves and judges the result, with its
// plots beside it.
func (r *running) finish() (*Run, error) {
	plan, res := r.plan, r.res
	if r.peer != nil {
		r.peer.Stop(r.opts) // before saving: its fate goes into res.Peer
	}
	res.Finished = time.Now().UTC()
	recs, err := r.m.Interference(r.locked, res.Finished)
	if err != nil {
		r.opts.emit(Warning{Text: err.Error()})
	}
	for _, rec := range recs {
		res.Interference = append(res.Interference, results.Interference{Time: rec.Time.UTC(), Command: rec.Command})
	}
	// What the plugin returned is checked before it is saved: a sample
	// that cannot be a measurement of this run fails it.
	if refused := res.DropImplausible(plan.Exp.SignedMetric); len(refused) > 0 {
		failRun(res, "samples refused, not measurements of this run: "+strings.Join(refused, "; "))
	}
	run := SaveJudged(res, plan.Refs, plan.Claims, plan.ClaimProfiles, plan.OutDir, plan.Roots.TempDir, r.opts.Observe)
	run.Views = host.Views(plan.Exp)
	if run.Path != "" {
		_, run.Plots.Sweep = WritePlot(plan, []*results.Result{res}, strings.TrimSuffix(run.Path, filepath.Ext(run.Path))+".svg")
		// A bar chart the experiment declares, if one fits the run; ""
		// for anything else, sweeps included.
		run.Plots.Chart = render.ChartBeside(run.Path, res, run.Views)
	}
	// A table the experiment declares: its chart beside the result.
	run.Plots.Table = render.TableChartBeside(run.Path, res, run.Views)
	if f := failureOf(res, r.broke); f != nil {
		return run, f
	}
	return run, nil
}

// session is a plugin started in a guest, for one run.
type session struct {
	ctx, runCtx context.Context
	plan        *Plan
	m           machine
	sess        pluginSession
	opts        Options
}

// callResult is one Run call: the samples it measured (all of them, or
// those reported before it broke), labelled with the sweep point if any,
// the guest as the plugin saw it (if it said), and its outcome or how it
// broke.
type callResult struct {
	samples []results.Sample
	env     *results.GuestEnv
	outcome results.Outcome
	broke   *brokenRun
}

// call runs the experiment once with params (repeat times), labelling
// the samples with labels (a sweep point; nil for none). Samples the
// plugin reported before a break are kept, unless its answer holds more.
func (s *session) call(params, labels map[string]string, progress func(plugins.Progress)) callResult {
	label := func(ss []results.Sample) []results.Sample {
		if labels == nil {
			return ss
		}
		return results.LabelPoint(ss, labels)
	}
	var c callResult
	resp, err := s.sess.Run(s.runCtx, &plugins.RunRequest{Experiment: s.plan.Exp.Name, Params: params, Repeat: s.plan.Repeat}, func(p plugins.Progress) {
		c.samples = append(c.samples, label(p.Samples)...)
		progress(p)
	})
	if err == nil || resp != nil && len(resp.Samples) >= len(c.samples) {
		c.samples = label(resp.Samples)
		c.env = &resp.Env
	}
	if err != nil {
		b := runFailure(s.ctx, s.runCtx, s.m, s.sess, err, s.plan.Timeout)
		c.broke = &b
		return c
	}
	c.outcome = host.Outcome(resp.Outcome)
	return c
}

// SaveJudged analyses res (against refs, the published figures its
// experiment declares), decides claims (its own verdicts, with profiles'
// variants and calibrations) and saves it in dir. A result is never lost:
// if it cannot be saved in dir, it goes to a fallback file in tmp ("":
// os.TempDir()) or the current directory (Run.Path, with Run.SaveErr
// set), else nowhere (Path ""); the caller then prints it. Warnings go to
// observe (may be nil).
func SaveJudged(res *results.Result, refs []results.Reference, claims []results.Claim, profiles rclaims.Profiles, dir, tmp string, observe func(Event)) *Run {
	opts := Options{Observe: observe}
	if res.Finished.IsZero() {
		res.Finished = time.Now().UTC()
	}
	// JSON cannot carry NaN or ±Inf; the plugin SDK refuses them, but a
	// document that cannot be encoded would be lost entirely.
	if dropped := res.DropNonFinite(); len(dropped) > 0 {
		failRun(res, "non-finite values dropped (not numbers JSON can carry): "+strings.Join(dropped, "; "))
	}
	compare.Analyze(res, refs)
	rclaims.Judge(res, claims, claimStore(res, claims, dir, opts), profiles)
	if err := res.CheckFinite(); err != nil {
		res.Summary, res.Comparisons, res.Verdicts = nil, nil, nil
		failRun(res, "statistics left out: "+err.Error())
	}
	run := &Run{Result: res, Dir: dir}
	run.Path, run.SaveErr = results.Save(dir, res)
	if run.SaveErr != nil {
		run.Path = saveFallback(res, tmp)
	}
	if run.Path != "" {
		opts.emit(Saved{Path: run.Path})
	}
	return run
}

// claimStore loads the stored runs the judging of res needs: those a
// claim across two profiles needs (the other profile's runs), and those
// res adds its repeats to; only then, as reading the store costs time.
func claimStore(res *results.Result, claims []results.Claim, dir string, opts Options) []*results.Result {
	for i := range claims {
		if res.AddTo != "" || rclaims.AcrossProfiles(&claims[i]) {
			store, errs := results.LoadAll(dir)
			for _, err := range errs {
				opts.emit(Warning{Text: err.Error()})
			}
			return store
		}
	}
	return nil
}

// ClaimProfiles are what the judge needs to know of profiles: each
// one's variant_of and calibration (a variant without one of its own
// takes its base's).
func ClaimProfiles(ps []images.Profile) rclaims.Profiles {
	byName := map[string]images.Profile{}
	for _, p := range ps {
		byName[p.Name] = p
	}
	out := rclaims.Profiles{}
	for _, p := range ps {
		cal := p.Calibration
		if cal == nil && p.VariantOf != "" {
			cal = byName[p.VariantOf].Calibration
		}
		info := rclaims.ProfileInfo{VariantOf: p.VariantOf, Console: p.ConsoleKind()}
		if p.VariantOf != "" {
			for _, d := range p.Original.Differences {
				if k, ok := strings.CutPrefix(d, "kernel: "); ok {
					info.Kernel = k
					break
				}
			}
		}
		info.Calibration = cal
		out[p.Name] = info
	}
	return out
}

// CatalogProfiles are ClaimProfiles of the profile catalogue: the
// built-in profiles, those of the user's directory and files. If the
// catalogue does not load, the built-in ones, and the error.
func CatalogProfiles(userDir string, files ...string) (rclaims.Profiles, error) {
	cat, err := images.LoadCatalog(userDir, files...)
	if err != nil {
		return ClaimProfiles(images.Builtin()), err
	}
	return ClaimProfiles(cat.Profiles()), nil
}

// saveFallback saves res where it can when the results directory failed:
// the temp directory tmp ("": os.TempDir()), else the current one. It
// returns the path, or "" if neither worked.
func saveFallback(res *results.Result, tmp string) string {
	if tmp == "" {
		tmp = os.TempDir()
	}
	for _, dir := range []string{tmp, "."} {
		if path, err := results.Save(dir, res); err == nil {
			if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			return path
		}
	}
	return ""
}

func machineOf(st *vm.State) results.MachineRecord {
	return results.MachineRecord{
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
