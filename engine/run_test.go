package engine

// The run's steps on fake machines and plugin sessions (fake_test.go):
// each way a run ends, what is saved, what is left of the VM. The real
// path is the CLI's integration tests.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"lab/images"
	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	"lab/vm"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// runFake runs plan with Do's steps on machines, its events recorded.
func runFake(t *testing.T, ctx context.Context, plan *Plan, ms *fakeMachines) (*Outcome, error, *events) {
	t.Helper()
	evs := &events{}
	out, err := do(ctx, plan, Options{Observe: evs.observe, machines: ms})
	return out, err, evs
}

// onlyRun is the outcome's one run.
func onlyRun(t *testing.T, out *Outcome) *Run {
	t.Helper()
	if out == nil || len(out.Runs) != 1 {
		t.Fatalf("outcome %+v: want one run", out)
	}
	return out.Runs[0]
}

// saved reads back the result the run saved.
func saved(t *testing.T, run *Run) *results.Result {
	t.Helper()
	if run.Path == "" || run.SaveErr != nil {
		t.Fatalf("run saved at %q (%v), want it in its directory", run.Path, run.SaveErr)
	}
	r, err := results.Load(run.Path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRunOnThrowaway(t *testing.T) {
	plan := onProfiles(t, fakeRunPlan(t, "create", map[string]string{"m": "2000"}), "host", "celeron-2.4")
	plan.Repeat = 3
	ms := &fakeMachines{}
	out, err, evs := runFake(t, context.Background(), plan, ms)
	if err != nil {
		t.Fatal(err)
	}
	run := onlyRun(t, out)
	r := saved(t, run)
	if r.Outcome.Status != results.StatusOK || len(r.Samples) != 6 || r.Parameters["repeat"] != "3" || r.Parameters["m"] != "2000" {
		t.Errorf("saved %s %q, %d samples, params %v; want ok, 3 repeats x 2 metrics, m=2000", r.Outcome.Status, r.Outcome.Reason, len(r.Samples), r.Parameters)
	}
	if results.ProfileName(r.Machine) != "celeron-2.4" || r.Harness == nil || r.Harness.FilesSent != 1 {
		t.Errorf("machine %+v, harness %+v: want the celeron and the plugin's start recorded", r.Machine, r.Harness)
	}
	if len(ms.booted) != 1 {
		t.Fatalf("%d VMs booted, want 1", len(ms.booted))
	}
	m := ms.booted[0]
	if m.locked != 1 || m.unlocked != 1 || m.discarded != 1 || m.sess.closed != 1 || len(m.sess.calls) != 1 || m.sess.calls[0].Repeat != 3 {
		t.Errorf("VM locked %d unlocked %d discarded %d, plugin closed %d, calls %+v; want each once and one call of 3 repeats",
			m.locked, m.unlocked, m.discarded, m.sess.closed, m.sess.calls)
	}
	if got := eventsOf[Progress](evs); len(got) != 3 {
		t.Errorf("%d progress events, want one per repeat", len(got))
	}
	if e := eventsOf[Ended](evs); len(e) != 1 || !e[0].OK {
		t.Errorf("Ended events %+v, want one OK", e)
	}
	if s := eventsOf[Saved](evs); len(s) != 1 || s[0].Path != run.Path {
		t.Errorf("Saved events %+v, want the run's path %s", s, run.Path)
	}
	if len(r.Verdicts) == 0 {
		t.Error("no verdicts: the claims in scope (E1.6...) were not judged")
	}
}

func TestRunOnVMThatIsUp(t *testing.T) {
	p, err := images.Lookup("", "celeron-2.4")
	if err != nil {
		t.Fatal(err)
	}
	up := newFakeMachine("mine", p)
	up.interference = []vm.Interference{{Time: time.Now(), Command: []string{"lab", "exec", "mine", "--", "ls"}}}
	ms := &fakeMachines{up: up}
	plan := fakeRunPlan(t, "forktime", nil)
	plan.ChooseRepeat = true
	out, err, _ := runFake(t, context.Background(), plan, ms)
	if err != nil {
		t.Fatal(err)
	}
	r := saved(t, onlyRun(t, out))
	// Opened once: the repeat choice reads the profile the run then runs on.
	if ms.opens != 1 || len(ms.booted) != 0 {
		t.Errorf("opened %d times, booted %d: want the VM that is up, opened once", ms.opens, len(ms.booted))
	}
	if up.discarded != 0 || up.unlocked != 1 || up.sess.closed != 1 {
		t.Errorf("discarded %d, unlocked %d, plugin closed %d: the VM stays up, its lock and plugin let go", up.discarded, up.unlocked, up.sess.closed)
	}
	if len(r.Interference) != 1 || r.Interference[0].Command[1] != "exec" {
		t.Errorf("interference %+v, want the lab exec let in", r.Interference)
	}
	// forktime has no claim of the Celeron's: one repeat, and the
	// summary points at the experiment that has (issue 21's headline).
	if out.Choice.Repeat != 1 || out.Choice.String() != "" {
		t.Errorf("choice %+v, want 1 repeat said nothing of", out.Choice)
	}
	want := "celeron-2.4 stands for the machine of E1.6, E1.7 and E1.10 (forkbench/create): `lab reproduce E1.6 E1.7 E1.10` decides them, about "
	if el := onlyRun(t, out).Elsewhere; len(el) != 1 || !strings.Contains(el[0], want) {
		t.Errorf("Elsewhere %q, want the pointer at create's claims", el)
	}
}

func TestRunNoVMUp(t *testing.T) {
	ms := &fakeMachines{}
	var ran []error
	plan := fakeRunPlan(t, "forktime", nil)
	plan.ChooseRepeat = true
	out, err := do(context.Background(), plan, Options{machines: ms, Ran: func(_ string, run *Run, err error) {
		if run != nil {
			t.Errorf("a run started: %+v", run)
		}
		ran = append(ran, err)
	}})
	if err == nil || !strings.Contains(err.Error(), "lab up") || len(out.Runs) != 0 || len(ran) != 1 || ran[0] != err {
		t.Errorf("do = %v, %v (Ran %v); want the VM's error, no run, Ran told once", out, err, ran)
	}
}

func TestRunRepeatChosen(t *testing.T) {
	plan := onProfiles(t, fakeRunPlan(t, "create", map[string]string{"m": "2000"}), "icount:0", "celeron-2.4")
	plan.ChooseRepeat = true
	ms := &fakeMachines{}
	out, err, evs := runFake(t, context.Background(), plan, ms)
	if err != nil {
		t.Fatal(err)
	}
	ch := out.Choice
	if ch.Need < 5 || strings.Join(ch.Claims, " ") != "E1.6 E1.7 E1.10" || !strings.Contains(ch.String(), "E1.6, E1.7 and E1.10 need") || ch.Repeat != ch.Need {
		t.Fatalf("choice %+v %q: want what E1.6, E1.7 and E1.10 need", ch, ch.String())
	}
	if got := ms.booted[0].sess.calls[0].Repeat; got != ch.Repeat {
		t.Errorf("the plugin was asked for %d repeats, lab chose %d", got, ch.Repeat)
	}
	if e := eventsOf[RepeatChosen](evs); len(e) != 1 || !strings.Contains(e[0].String(), "E1.6") {
		t.Errorf("RepeatChosen events %+v, want the choice said once", e)
	}
}

// TestRunFailures: each way a run breaks is a kind, its result saved
// (what was measured before kept), the VM let go.
func TestRunFailures(t *testing.T) {
	// partial reports one repeat, then breaks with err.
	partial := func(err error) func(context.Context, *plugins.RunRequest, func(plugins.Progress)) (*plugins.RunResponse, error) {
		return func(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
			progress(plugins.Progress{Done: 1, Total: req.Repeat, Samples: []plugins.Sample{{Metric: "process_ms", Value: 2, Unit: "ms"}}})
			return nil, err
		}
	}
	broken := errors.New("rpc error: code = Unavailable desc = connection reset")
	tests := []struct {
		name    string
		set     func(m *fakeMachine)
		cancel  bool // Ctrl-C mid-run
		timeout time.Duration
		kind    Kind
		status  string
		reason  string
		samples int
		// endedOK: the plugin's call ended well (the run failed after).
		endedOK bool
	}{
		{name: "plugin crashed", set: func(m *fakeMachine) { m.sess.run, m.sess.exited, m.sess.code = partial(broken), true, 2 },
			kind: PluginCrashed, status: results.StatusFailed, reason: "the plugin crashed (exit status 2)", samples: 1},
		{name: "guest died", set: func(m *fakeMachine) { m.sess.run, m.gone = partial(broken), true },
			kind: GuestDied, status: results.StatusFailed, reason: "the guest died mid-run", samples: 1},
		{name: "VM taken down", set: func(m *fakeMachine) {
			m.sess.run, m.takenDown = partial(broken), "the VM was taken down by `lab down --force`"
		}, kind: VMDown, status: results.StatusFailed, reason: "taken down by `lab down --force`", samples: 1},
		{name: "broken link", set: func(m *fakeMachine) { m.sess.run = partial(broken) },
			kind: Broken, status: results.StatusFailed, reason: "connection reset", samples: 1},
		{name: "plugin's own error", set: func(m *fakeMachine) {
			m.sess.run, m.sess.exited = partial(&plugins.RunError{Msg: "bad parameter"}), true
		}, kind: Broken, status: results.StatusFailed, reason: "bad parameter", samples: 1},
		{name: "timed out", set: func(m *fakeMachine) {
			m.sess.run = func(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			}
		}, timeout: 50 * time.Millisecond, kind: TimedOut, status: results.StatusFailed, reason: "timed out after 50ms"},
		// The RPC carries the run's deadline to the guest, whose clock is
		// not the host's: on a loaded host the guest's server ended the
		// call first (TestIntegrationRunOutputFlood under load). It is
		// still the --timeout.
		{name: "timed out by the guest's clock", set: func(m *fakeMachine) {
			m.sess.run = partial(status.Error(codes.DeadlineExceeded, "stream terminated by RST_STREAM with error code: CANCEL"))
		}, kind: TimedOut, status: results.StatusFailed, reason: "timed out after 1m0s (--timeout)", samples: 1},
		{name: "interrupted", cancel: true, set: func(m *fakeMachine) {
			m.sess.run = func(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
				progress(plugins.Progress{Done: 1, Total: req.Repeat, Samples: []plugins.Sample{{Metric: "process_ms", Value: 2, Unit: "ms"}}})
				<-ctx.Done()
				return nil, ctx.Err()
			}
		}, kind: Interrupted, status: results.StatusInterrupted, reason: "interrupted (Ctrl-C)", samples: 1},
		{name: "workload failed", set: func(m *fakeMachine) {
			m.sess.run = func(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
				return &plugins.RunResponse{Outcome: plugins.Outcome{Status: results.StatusFailed, Reason: "fork: EAGAIN"}}, nil
			}
		}, kind: WorkloadFailed, status: results.StatusFailed, reason: "fork: EAGAIN", endedOK: true},
		{name: "plugin did not start", set: func(m *fakeMachine) { m.pluginErr = errors.New("plugin forkbench started but does not answer") },
			kind: Broken, status: results.StatusFailed, reason: "does not answer"},
		{name: "samples refused", set: func(m *fakeMachine) {
			m.sess.run = func(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
				return &plugins.RunResponse{Samples: []plugins.Sample{{Metric: "process_ms", Value: -1, Unit: "ms"}}}, nil
			}
		}, kind: WorkloadFailed, status: results.StatusFailed, reason: "samples refused", endedOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := onProfiles(t, fakeRunPlan(t, "create", nil), "host", "celeron-2.4")
			plan.Repeat = 3
			if tt.timeout > 0 {
				plan.Timeout = tt.timeout
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ms := &fakeMachines{newMachine: func(p images.Profile) *fakeMachine {
				m := newFakeMachine("c-run-1", p)
				tt.set(m)
				if tt.cancel {
					run := m.sess.run
					m.sess.run = func(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
						go func() { time.Sleep(20 * time.Millisecond); cancel() }()
						return run(ctx, req, progress)
					}
				}
				return m
			}}
			out, err, evs := runFake(t, ctx, plan, ms)
			var f *Failure
			if !errors.As(err, &f) || f.Kind != tt.kind || !errors.Is(err, tt.kind) {
				t.Fatalf("error %v (%T), want a failure of kind %s", err, err, tt.kind)
			}
			r := saved(t, onlyRun(t, out))
			if r.Outcome.Status != tt.status || !strings.Contains(r.Outcome.Reason, tt.reason) || len(r.Samples) != tt.samples {
				t.Errorf("saved %s %q with %d samples, want %s saying %q with %d", r.Outcome.Status, r.Outcome.Reason, len(r.Samples), tt.status, tt.reason, tt.samples)
			}
			m := ms.booted[0]
			if m.unlocked != 1 || m.discarded != 1 {
				t.Errorf("unlocked %d, discarded %d: want the throwaway VM let go and discarded", m.unlocked, m.discarded)
			}
			if e := eventsOf[Ended](evs); len(e) != 1 || e[0].OK != tt.endedOK {
				t.Errorf("Ended events %+v, want one, OK %v", e, tt.endedOK)
			}
		})
	}
}

// TestRunDoesNotStart: what fails before the run holds the VM saves
// nothing and says why.
func TestRunDoesNotStart(t *testing.T) {
	for _, tt := range []struct {
		name string
		ms   *fakeMachines
		want string
	}{
		{"boot failed", &fakeMachines{bootErr: errors.New("qemu: no kernel")}, "qemu: no kernel"},
		{"lock refused", &fakeMachines{newMachine: func(p images.Profile) *fakeMachine {
			m := newFakeMachine("c", p)
			m.lockErr = errors.New("vm c is being taken down")
			return m
		}}, "being taken down"},
		{"peer did not boot", &fakeMachines{newMachine: func(p images.Profile) *fakeMachine {
			m := newFakeMachine("c", p)
			m.peerErr = errors.New("the peer guest c-peer did not boot")
			return m
		}}, "did not boot"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plan := onProfiles(t, fakeRunPlan(t, "create", nil), "host", "celeron-2.4")
			if tt.name == "peer did not boot" {
				plan = peerPlan(t, plan)
			}
			out, err, _ := runFake(t, context.Background(), plan, tt.ms)
			if err == nil || !strings.Contains(err.Error(), tt.want) || len(out.Runs) != 0 {
				t.Fatalf("do = %d runs, %v; want none and %q", len(out.Runs), err, tt.want)
			}
			if entries, _ := os.ReadDir(plan.OutDir); len(entries) != 0 {
				t.Errorf("results directory holds %d files, want none", len(entries))
			}
			for _, m := range tt.ms.booted {
				if m.discarded != 1 || m.locked != m.unlocked {
					t.Errorf("VM %s discarded %d, locked %d unlocked %d: want it discarded and let go", m.name, m.discarded, m.locked, m.unlocked)
				}
			}
		})
	}
}

// peerPlan makes plan's experiment ask for a peer guest with its
// parameters as they are.
func peerPlan(t *testing.T, plan *Plan) *Plan {
	t.Helper()
	exp := *plan.Exp
	exp.Peer = &plugins.Peer{Param: "m", Value: plan.Resolved["m"], Workload: "serve"}
	plan.Exp = &exp
	if !wantsPeer(plan) {
		t.Fatal("the plan does not ask for its peer")
	}
	return plan
}

func TestRunWithPeer(t *testing.T) {
	plan := peerPlan(t, onProfiles(t, fakeRunPlan(t, "create", nil), "host", "celeron-2.4"))
	ms := &fakeMachines{}
	out, err, _ := runFake(t, context.Background(), plan, ms)
	if err != nil {
		t.Fatal(err)
	}
	r := saved(t, onlyRun(t, out))
	m := ms.booted[0]
	// Stopped before saving: its fate is in the saved result.
	if m.peer == nil || m.peer.stopped == 0 || r.Peer == nil || r.Peer.Error != "stopped" {
		t.Errorf("peer %+v, saved %+v: want it stopped before saving", m.peer, r.Peer)
	}
	if !slices.Contains(m.env, "LAB_PEER_ADDR="+plugins.PeerAddr) {
		t.Errorf("plugin env %q, want the peer's address", m.env)
	}
}

func TestRunSweep(t *testing.T) {
	plan := onProfiles(t, fakeRunPlan(t, "create", nil), "host", "celeron-2.4")
	axes, points, err := planSweep(plan.Desc, plan.Exp, map[string]string{}, []results.SweepAxis{{Key: "m", Values: []string{"100", "200", "300", "400"}}})
	if err != nil {
		t.Fatal(err)
	}
	plan.Axes, plan.Points = axes, points
	plan.Repeat = 2
	ms := &fakeMachines{newMachine: func(p images.Profile) *fakeMachine {
		m := newFakeMachine("c", p)
		m.sess.run = func(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
			switch req.Params["m"] {
			case "200":
				return &plugins.RunResponse{Outcome: plugins.Outcome{Status: results.StatusFailed, Reason: "out of memory"}}, nil
			case "300":
				return nil, errors.New("connection reset")
			}
			return okRun(req, progress, 5), nil
		}
		return m
	}}
	out, err, evs := runFake(t, context.Background(), plan, ms)
	if !errors.Is(err, Broken) {
		t.Fatalf("error %v, want the broken point's", err)
	}
	run := onlyRun(t, out)
	r := saved(t, run)
	// The sweep's plot is drawn beside the result.
	svg := strings.TrimSuffix(run.Path, ".json") + ".svg"
	if _, err := os.Stat(svg); err != nil || run.Plots.Sweep != "plot: "+svg {
		t.Errorf("plot line %q (%v), want %s drawn", run.Plots.Sweep, err, svg)
	}
	var st []string
	for _, p := range r.Sweep.Points {
		st = append(st, p.Status)
	}
	want := []string{results.StatusOK, results.StatusFailed, results.StatusFailed, results.PointNotRun}
	if !slices.Equal(st, want) {
		t.Errorf("points %q, want %q: a failed point goes on, a broken one ends the sweep", st, want)
	}
	if len(r.Samples) != 4 || !strings.Contains(r.Outcome.Reason, "sweep point 3 of 4 (m=300)") || !strings.Contains(r.Outcome.Reason, "the 1 point(s) after it were not run") {
		t.Errorf("%d samples, reason %q", len(r.Samples), r.Outcome.Reason)
	}
	if calls := ms.booted[0].sess.calls; len(calls) != 3 {
		t.Errorf("%d Run calls, want 3 over one session", len(calls))
	}
	if p := eventsOf[PointStarted](evs); len(p) != 3 || p[2].Offset != 4 {
		t.Errorf("PointStarted %+v, want 3, the third after 4 repeats", p)
	}
}

func TestRunSaysWhatWasDropped(t *testing.T) {
	p, err := images.Lookup("", "celeron-2.4")
	if err != nil {
		t.Fatal(err)
	}
	up := newFakeMachine("mine", p)
	up.sess.dropped = []string{"the plugin wrote 200 MiB to stdout; the first 1 MiB kept"}
	up.sess.left = []string{"killed 1 process the plugin left in the guest (session 42)"}
	plan := fakeRunPlan(t, "create", nil)
	out, err, evs := runFake(t, context.Background(), plan, &fakeMachines{up: up})
	if err != nil {
		t.Fatal(err)
	}
	r := saved(t, onlyRun(t, out))
	if !slices.Equal(r.Harness.OutputDropped, up.sess.dropped) || !slices.Equal(r.Harness.LeftBehind, up.sess.left) {
		t.Errorf("harness %+v, want what was dropped and left", r.Harness)
	}
	if w := eventsOf[Warning](evs); len(w) != 2 {
		t.Errorf("warnings %+v, want both said", w)
	}
}

func TestRunSaveFallback(t *testing.T) {
	plan := onProfiles(t, fakeRunPlan(t, "create", nil), "host", "celeron-2.4")
	// The results directory became a file under the run.
	if err := os.RemoveAll(plan.OutDir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plan.OutDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err, _ := runFake(t, context.Background(), plan, &fakeMachines{})
	if err != nil {
		t.Fatal(err)
	}
	run := onlyRun(t, out)
	if run.SaveErr == nil || !strings.HasPrefix(run.Path, plan.Roots.TempDir) {
		t.Fatalf("saved at %q (%v), want the fallback in the temp dir %s", run.Path, run.SaveErr, plan.Roots.TempDir)
	}
	if msgs := run.Problems(); len(msgs) != 1 || !strings.Contains(msgs[0], "saved to "+run.Path+" instead") {
		t.Errorf("problems %q", msgs)
	}
}

// TestRunProfilesInTurn: each profile on its own throwaway VM, told as it
// ends; Ctrl-C during one leaves the rest unrun.
func TestRunProfilesInTurn(t *testing.T) {
	t.Run("all", func(t *testing.T) {
		plan := onProfiles(t, fakeRunPlan(t, "create", nil), "host", "celeron-2.4", "p4-2.4")
		ms := &fakeMachines{}
		var told []string
		out, err := do(context.Background(), plan, Options{machines: ms, Ran: func(profile string, run *Run, err error) {
			if run == nil || err != nil || run.Elsewhere == nil && profile == "" {
				t.Errorf("%s: run %v, %v", profile, run, err)
			}
			told = append(told, profile)
		}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(told, []string{"celeron-2.4", "p4-2.4"}) || len(out.Runs) != 2 || out.Comparison == nil {
			t.Errorf("told %q, %d runs, comparison %v", told, len(out.Runs), out.Comparison)
		}
		for _, m := range ms.booted {
			if m.discarded != 1 {
				t.Errorf("%s discarded %d times", m.name, m.discarded)
			}
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		plan := onProfiles(t, fakeRunPlan(t, "create", nil), "host", "celeron-2.4", "p4-2.4", "p3-450")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ms := &fakeMachines{newMachine: func(p images.Profile) *fakeMachine {
			m := newFakeMachine(p.Name+"-run", p)
			m.sess.run = func(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
				cancel()
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return m
		}}
		out, err := do(ctx, plan, Options{machines: ms})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms.booted) != 1 || len(out.Runs) != 1 || !slices.Equal(out.Left, []string{"p4-2.4", "p3-450"}) {
			t.Errorf("booted %d, %d runs, left %q: want the first interrupted, the rest not run", len(ms.booted), len(out.Runs), out.Left)
		}
		if s := out.Runs[0].Result.Outcome.Status; s != results.StatusInterrupted {
			t.Errorf("status %s, want interrupted", s)
		}
	})
}

// TestRunBundleCheckedOnce: the build the plan was checked against is
// reused; another arch's build is read once, and refused if it records
// another description.
func TestRunBundleCheckedOnce(t *testing.T) {
	plan := fakeRunPlan(t, "create", nil)
	delete(plan.Bundles, "x86_64")
	// The i386 build is the plan's: nothing is read (there is no plugin
	// directory at all).
	if b, err := plan.bundle("i386"); err != nil || b != plan.Bundles["i386"] {
		t.Fatalf("bundle(i386) = %v, %v; want the plan's", b, err)
	}
	// An x86_64 build on disk (any x86_64 executable) recording another
	// version.
	dir := t.TempDir()
	build := filepath.Join(dir, "forkbench", "x86_64")
	if err := os.MkdirAll(build, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(build, "forkbench"), exe, 0o755); err != nil {
		t.Fatal(err)
	}
	other := *plan.Desc
	other.Version = plan.Desc.Version + ".1"
	if err := host.WriteRecord(build, &other); err != nil {
		t.Fatal(err)
	}
	plan.Roots.Plugins = host.SearchPath{User: dir}
	if _, err := plan.bundle("x86_64"); err == nil || !strings.Contains(err.Error(), "the x86_64 build records another description") {
		t.Errorf("bundle(x86_64) = %v, want the other description refused", err)
	}
	if err := host.WriteRecord(build, plan.Desc); err != nil {
		t.Fatal(err)
	}
	b, err := plan.bundle("x86_64")
	if err != nil || b.Dir != build {
		t.Fatalf("bundle(x86_64) = %+v, %v; want the build in %s", b, err, build)
	}
	if again, _ := plan.bundle("x86_64"); again != b {
		t.Error("the x86_64 build was read again")
	}
}

// TestDoFromRequest: a request planned against a build and run on the VM
// that is up: the VM is opened once, the build read once, the repeats
// chosen.
func TestDoFromRequest(t *testing.T) {
	p, err := images.Lookup("", "celeron-2.4")
	if err != nil {
		t.Fatal(err)
	}
	ms := &fakeMachines{up: newFakeMachine("mine", p)}
	req := Request{Plugin: "forkbench", Experiment: "create", Params: map[string]string{"m": "2000"}, ChooseRepeat: true, Timeout: time.Minute,
		Out: t.TempDir(), Command: []string{"lab", "run", "forkbench"}, Roots: Roots{Plugins: fakeBuild(t, "forkbench"), TempDir: t.TempDir()}}
	out, err := Do(context.Background(), req, Options{machines: ms})
	if err != nil {
		t.Fatal(err)
	}
	r := saved(t, onlyRun(t, out))
	if ms.opens != 1 {
		t.Errorf("the VM was opened %d times, want once", ms.opens)
	}
	if out.Choice.Repeat < 2 || r.Parameters["repeat"] != strconv.Itoa(out.Choice.Repeat) {
		t.Errorf("choice %+v, run of %s repeats: want the claims' repeats run", out.Choice, r.Parameters["repeat"])
	}
	// Not planned: nothing opened, nothing run.
	req.Plugin = "nosuch"
	ms.opens = 0
	if out, err := Do(context.Background(), req, Options{machines: ms}); out != nil || err == nil || !strings.Contains(err.Error(), `unknown plugin "nosuch"`) || ms.opens != 0 {
		t.Errorf("Do(nosuch) = %v, %v, %d opens", out, err, ms.opens)
	}
}

// TestRunRefusedOnTheVM: a plan the VM that is up cannot run (a peer on a
// 2.6.32 kernel, built without PCI hotplug) is refused once the VM is
// opened, before it is locked.
func TestRunRefusedOnTheVM(t *testing.T) {
	p, err := images.Lookup("", "celeron-2.4-linux-2.6.32")
	if err != nil {
		t.Fatal(err)
	}
	up := newFakeMachine("old", p)
	plan := peerPlan(t, fakeRunPlan(t, "create", nil))
	out, err, _ := runFake(t, context.Background(), plan, &fakeMachines{up: up})
	if err == nil || !strings.Contains(err.Error(), "vm old: ") || !strings.Contains(err.Error(), "built without PCI hotplug") || len(out.Runs) != 0 {
		t.Errorf("do = %v; want the peer refused on vm old", err)
	}
	if up.locked != 0 || up.plugins != 0 {
		t.Errorf("locked %d, plugins %d: want nothing done to the VM", up.locked, up.plugins)
	}
}

// TestRunSweepNothingToPlot: a sweep none of whose points finished saves
// its result and says there is no plot.
func TestRunSweepNothingToPlot(t *testing.T) {
	plan := onProfiles(t, fakeRunPlan(t, "create", nil), "host", "celeron-2.4")
	axes, points, err := planSweep(plan.Desc, plan.Exp, map[string]string{}, []results.SweepAxis{{Key: "m", Values: []string{"100", "200"}}})
	if err != nil {
		t.Fatal(err)
	}
	plan.Axes, plan.Points = axes, points
	ms := &fakeMachines{newMachine: func(p images.Profile) *fakeMachine {
		m := newFakeMachine("c", p)
		m.sess.run = func(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
			return &plugins.RunResponse{Outcome: plugins.Outcome{Status: results.StatusFailed, Reason: "no memory"}}, nil
		}
		return m
	}}
	out, err, _ := runFake(t, context.Background(), plan, ms)
	if !errors.Is(err, WorkloadFailed) {
		t.Fatalf("error %v, want the workload failed", err)
	}
	run := onlyRun(t, out)
	saved(t, run)
	if !strings.HasPrefix(run.Plots.Sweep, "no plot: ") {
		t.Errorf("plot line %q, want no plot said", run.Plots.Sweep)
	}
	if !strings.Contains(run.Result.Outcome.Reason, "2 of 2 sweep points failed") {
		t.Errorf("reason %q", run.Result.Outcome.Reason)
	}
}

// TestDoChoosesTheHeadline: `lab run forkbench` (no experiment,
// parameter or sweep) on a Celeron runs create, whose claims are the
// Celeron's, as their runs do, says so, and recaps their verdicts; on a
// Pentium 4, whose claim is forktime's, and when an experiment was asked
// for, it runs forktime.
func TestDoChoosesTheHeadline(t *testing.T) {
	run := func(profile string, req Request) (*Outcome, *events) {
		t.Helper()
		p, err := images.Lookup("", profile)
		if err != nil {
			t.Fatal(err)
		}
		req.Plugin, req.ChooseRepeat, req.Timeout, req.Out = "forkbench", true, time.Minute, t.TempDir()
		req.Command = []string{"lab", "run", "forkbench"}
		req.Roots = Roots{Plugins: fakeBuild(t, "forkbench"), TempDir: t.TempDir()}
		evs := &events{}
		out, err := Do(context.Background(), req, Options{machines: &fakeMachines{up: newFakeMachine("mine", p)}, Observe: evs.observe})
		if err != nil {
			t.Fatal(err)
		}
		return out, evs
	}
	out, evs := run("celeron-2.4", Request{ChooseExperiment: true})
	r := saved(t, onlyRun(t, out))
	if r.Experiment != "create" || out.Experiment == nil || r.Parameters["m"] != out.Experiment.Params["m"] || r.Parameters["m"] == "" {
		t.Fatalf("ran %s %v (chosen %+v); want create with its claims' m", r.Experiment, r.Parameters, out.Experiment)
	}
	if ch := eventsOf[ExperimentChosen](evs); len(ch) != 1 || !strings.Contains(ch[0].String(), "experiment: create with m="+r.Parameters["m"]+", which decides E1.6, E1.7 and E1.10 (celeron-2.4 stands for") ||
		!strings.Contains(ch[0].String(), "-e forktime to run that one") {
		t.Errorf("ExperimentChosen events %v", ch)
	}
	if got := onlyRun(t, out).Recap; !slices.Equal(got, []string{"E1.6", "E1.7", "E1.10"}) {
		t.Errorf("Recap %v, want create's claims", got)
	}
	if el := onlyRun(t, out).Elsewhere; len(el) != 0 {
		t.Errorf("Elsewhere %q: the run decides the Celeron's claims itself", el)
	}
	var judged []string
	for _, v := range r.Verdicts {
		judged = append(judged, v.Claim)
	}
	if !slices.Contains(judged, "E1.6") || out.Choice.Need < 2 {
		t.Errorf("verdicts on %v, repeats needed %d; want E1.6 judged, its repeats chosen", judged, out.Choice.Need)
	}
	// Its own experiment's claim is the Pentium 4's: forktime, no word.
	out, evs = run("p4-2.4", Request{ChooseExperiment: true})
	if r := saved(t, onlyRun(t, out)); r.Experiment != "forktime" || out.Experiment != nil || len(eventsOf[ExperimentChosen](evs)) != 0 {
		t.Errorf("on p4-2.4 ran %s (chosen %+v), want forktime", r.Experiment, out.Experiment)
	}
	// Asked for (the CLI's -e, -p or --sweep): the first experiment.
	out, _ = run("celeron-2.4", Request{})
	if r := saved(t, onlyRun(t, out)); r.Experiment != "forktime" || out.Experiment != nil || len(onlyRun(t, out).Recap) != 0 {
		t.Errorf("not choosing, ran %s (chosen %+v)", r.Experiment, out.Experiment)
	}
}

// TestPreloadListedOnce: with a matrix's preloads, each arch's list is
// made once, whatever changes after; without, each boot lists it again.
func TestPreloadListedOnce(t *testing.T) {
	dir := t.TempDir()
	plugin := func(name string) {
		t.Helper()
		d := filepath.Join(dir, name, "i386")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), []byte(name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	plugin("a")
	path := host.SearchPath{Builtin: dir}
	kept := Options{preloads: &preloads{}}
	if got := kept.preload(path, "i386"); len(got) != 1 {
		t.Fatalf("preload = %v, want plugin a", got)
	}
	plugin("b")
	if got := kept.preload(path, "i386"); len(got) != 1 {
		t.Errorf("a matrix's second boot listed again: %v", got)
	}
	if got := (Options{}).preload(path, "i386"); len(got) != 2 {
		t.Errorf("a run's own boot: %v, want a and b", got)
	}
	if got := kept.preload(path, "x86_64"); len(got) != 0 {
		t.Errorf("another arch: %v, want none", got)
	}
}
