package engine

// Fakes of the machine and the plugin session (machine.go): the engine's
// steps run against them in milliseconds. What they do is set per test;
// what the engine did to them is recorded.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"lab/images"
	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	"lab/vm"
)

// fakeMachines hand out fake machines: one per boot (made by newMachine,
// else a plain one), and up, the VM that is up.
type fakeMachines struct {
	mu         sync.Mutex
	bootErr    error
	newMachine func(p images.Profile) *fakeMachine
	up         *fakeMachine
	openErr    error
	booted     []*fakeMachine
	opens      int
	// cold are the profiles ("NAME clock") with no booted snapshot yet:
	// a boot of one makes it. Every other has one.
	cold map[string]bool
	// snapshotChecks counts Snapshotted's calls.
	snapshotChecks int
}

func (f *fakeMachines) Snapshotted(ctx context.Context, plan *Plan, p images.Profile, clock vm.Clock, opts Options) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snapshotChecks++
	return !f.cold[p.Name+" "+clock.String()]
}

func (f *fakeMachines) Boot(ctx context.Context, plan *Plan, p images.Profile, clock vm.Clock, opts Options) (machine, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bootErr != nil {
		return nil, f.bootErr
	}
	var m *fakeMachine
	if f.newMachine != nil {
		m = f.newMachine(p)
	} else {
		m = newFakeMachine(p.Name+"-run-000000", p)
	}
	m.st.Clock = clock
	opts.emit(Booting{VM: m.name, Profile: p.Name})
	f.booted = append(f.booted, m)
	delete(f.cold, p.Name+" "+clock.String())
	return m, nil
}

func (f *fakeMachines) Open(plan *Plan) (machine, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opens++
	if f.openErr != nil {
		return nil, f.openErr
	}
	if f.up == nil {
		return nil, errors.New("no VM is up; start one with `lab up PROFILE`")
	}
	return f.up, nil
}

// fakeMachine is a VM: its plugin session is sess (or pluginErr), and
// what the run did to it is counted.
type fakeMachine struct {
	mu           sync.Mutex
	name         string
	st           *vm.State
	lockErr      error
	pluginErr    error
	sess         *fakeSession
	peerErr      error
	peer         *fakePeer
	takenDown    string
	gone         bool
	interference []vm.Interference
	// What happened to it.
	locked, unlocked, discarded, plugins int
	env                                  []string
}

func newFakeMachine(name string, p images.Profile) *fakeMachine {
	st := &vm.State{Config: vm.Config{Name: name, Profile: p, Accel: "tcg"}, Boot: "restored from the booted snapshot"}
	return &fakeMachine{name: name, st: st, sess: &fakeSession{}}
}

func (m *fakeMachine) Name() string     { return m.name }
func (m *fakeMachine) State() *vm.State { return m.st }

func (m *fakeMachine) LockRun(ctx context.Context, command []string, waiting func(*vm.RunHolder)) (func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lockErr != nil {
		return nil, m.lockErr
	}
	m.locked++
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.unlocked++
	}, nil
}

func (m *fakeMachine) Interference(from, to time.Time) ([]vm.Interference, error) {
	return m.interference, nil
}

func (m *fakeMachine) Plugin(ctx context.Context, bundle *host.Bundle, env []string) (pluginSession, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.plugins++
	m.env = env
	if m.pluginErr != nil {
		return nil, m.pluginErr
	}
	m.sess.ready = time.Now()
	return m.sess, nil
}

func (m *fakeMachine) Peer(ctx context.Context, plan *Plan, bundle *host.Bundle, opts Options) (peer, error) {
	if m.peerErr != nil {
		return nil, m.peerErr
	}
	m.peer = &fakePeer{rec: &results.Peer{VM: PeerName(m.name)}}
	return m.peer, nil
}

func (m *fakeMachine) TakenDown() string         { return m.takenDown }
func (m *fakeMachine) Gone(d time.Duration) bool { return m.gone }

func (m *fakeMachine) Discard(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.discarded++
	return nil
}

// fakeSession is a plugin: run answers each Run call (nil: every repeat
// ok, one sample of each of the experiment's metrics).
type fakeSession struct {
	mu     sync.Mutex
	run    func(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error)
	ready  time.Time
	exited bool
	code   int
	stderr string
	// dropped and left are what Dropped and LeftBehind say.
	dropped, left []string
	calls         []plugins.RunRequest
	closed        int
}

func (s *fakeSession) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	s.mu.Lock()
	s.calls = append(s.calls, *req)
	run := s.run
	s.mu.Unlock()
	if run != nil {
		return run(ctx, req, progress)
	}
	return okRun(req, progress, 1), nil
}

// okRun is an ok run of req: each repeat reported as progress, every
// sample value.
func okRun(req *plugins.RunRequest, progress func(plugins.Progress), value float64) *plugins.RunResponse {
	resp := &plugins.RunResponse{Outcome: plugins.Outcome{Status: results.StatusOK}}
	for i := 0; i < max(req.Repeat, 1); i++ {
		ss := []plugins.Sample{{Metric: "process_ms", Value: value, Unit: "ms", Repeat: i}, {Metric: "thread_ms", Value: value / 10, Unit: "ms", Repeat: i}}
		resp.Samples = append(resp.Samples, ss...)
		progress(plugins.Progress{Done: i + 1, Total: req.Repeat, Message: "repeat", Samples: ss})
	}
	return resp
}

func (s *fakeSession) Started() (time.Time, int, int, time.Duration, string) {
	return s.ready, 1, 0, time.Millisecond, ""
}

func (s *fakeSession) Exit(d time.Duration) (int, bool, error) { return s.code, s.exited, nil }
func (s *fakeSession) StderrTail() string                      { return s.stderr }
func (s *fakeSession) Dropped() []string                       { return s.dropped }
func (s *fakeSession) LeftBehind() []string                    { return s.left }

func (s *fakeSession) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed++
}

// fakePeer is a peer guest; stopped counts its Stop calls.
type fakePeer struct {
	mu      sync.Mutex
	rec     *results.Peer
	stopped int
}

func (p *fakePeer) Record() *results.Peer { return p.rec }

func (p *fakePeer) Stop(opts Options) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped == 0 {
		p.rec.Error = "stopped"
	}
	p.stopped++
}

// events records what a run emitted.
type events struct {
	mu  sync.Mutex
	evs []Event
}

func (e *events) observe(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evs = append(e.evs, ev)
}

// of are the events of type T.
func eventsOf[T Event](e *events) []T {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []T
	for _, ev := range e.evs {
		if t, ok := ev.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// fakeRunPlan is a plan of forkbench's experiment exp (forkbenchPlan) ready
// to run on fakes: its results in a fresh directory, a build for every
// arch recorded with its description, and a one-minute timeout.
func fakeRunPlan(t *testing.T, exp string, params map[string]string) *Plan {
	t.Helper()
	plan := forkbenchPlan(t, exp, params)
	plan.Started = time.Now()
	plan.OutDir = filepath.Join(t.TempDir(), "results")
	if err := os.MkdirAll(plan.OutDir, 0o755); err != nil {
		t.Fatal(err)
	}
	plan.Timeout = time.Minute
	plan.Roots.TempDir = t.TempDir()
	plan.Bundles = map[string]*host.Bundle{}
	for _, arch := range images.Arches {
		plan.Bundles[arch] = &host.Bundle{Name: "forkbench", Arch: arch, Description: plan.Desc}
	}
	return plan
}

// onProfiles makes plan a run on throwaway VMs of the built-in profiles
// names, in turn, under clock.
func onProfiles(t *testing.T, plan *Plan, clock string, names ...string) *Plan {
	t.Helper()
	c, err := images.ParseClock(clock)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		p, err := images.Lookup("", name)
		if err != nil {
			t.Fatal(err)
		}
		plan.Profiles = append(plan.Profiles, p)
		plan.Clocks = append(plan.Clocks, c)
	}
	return plan
}

// fakeBuild is a plugin directory holding lab's plugin name as if built
// for every arch: its real description recorded beside a binary that is
// only an ELF header of the arch (nothing of it ever runs: the sessions
// are fakes). NewPlan takes it as a build.
func fakeBuild(t *testing.T, name string) host.SearchPath {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "plugins", name, "description.json"))
	if err != nil {
		t.Fatal(err)
	}
	desc, err := plugins.ParseDescription(b)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for arch, machine := range map[string]byte{"i386": 3, "x86_64": 62} {
		build := filepath.Join(dir, name, arch)
		if err := os.MkdirAll(build, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(build, name), elfHeader(arch == "x86_64", machine), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := host.WriteRecord(build, desc); err != nil {
			t.Fatal(err)
		}
	}
	return host.SearchPath{User: dir}
}

// elfHeader is the ELF header of an executable for machine, and nothing
// else.
func elfHeader(is64 bool, machine byte) []byte {
	class, size, ph, sh := byte(1), 52, 32, 40
	if is64 {
		class, size, ph, sh = 2, 64, 56, 64
	}
	h := make([]byte, size)
	copy(h, []byte{0x7f, 'E', 'L', 'F', class, 1, 1})
	h[16], h[18], h[20] = 2, machine, 1 // ET_EXEC, e_machine, EV_CURRENT
	h[size-12], h[size-10], h[size-6] = byte(size), byte(ph), byte(sh)
	return h
}
