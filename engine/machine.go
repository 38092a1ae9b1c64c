package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"lab/images"
	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	"lab/vm"
)

// A run reaches its VM and its plugin through two small interfaces: the
// machine it runs on, and the plugin session started there. The real ones
// wrap a vm.Handle and a host.Session; the engine's tests give fakes
// (fake_test.go), so planning, repeats, failures and saving are tested
// without QEMU, and the integration tests cover the real path.

// machine is a VM as a run uses it.
type machine interface {
	Name() string
	State() *vm.State
	// LockRun takes the VM's run lock (vm.Handle.LockRun).
	LockRun(ctx context.Context, command []string, waiting func(*vm.RunHolder)) (unlock func(), err error)
	// Interference lists the commands let into the VM in [from, to].
	Interference(from, to time.Time) ([]vm.Interference, error)
	// Plugin pushes bundle into the guest and starts it.
	Plugin(ctx context.Context, bundle *host.Bundle, env []string) (pluginSession, error)
	// Peer boots the run's peer guest, joined to this one, with the
	// experiment's peer workload started from bundle.
	Peer(ctx context.Context, plan *Plan, bundle *host.Bundle, opts Options) (peer, error)
	// TakenDown is why `lab down` took the VM down mid-run ("" if it
	// did not).
	TakenDown() string
	// Gone says whether the VM went away (QEMU or its supervisor died),
	// waiting up to d for its supervisor to notice.
	Gone(d time.Duration) bool
	// Discard powers a throwaway VM off at once.
	Discard(ctx context.Context) error
}

// pluginSession is a plugin started in a guest, for one run.
type pluginSession interface {
	Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error)
	// Started says how the start went: when the plugin first answered,
	// the files pushed and found in the guest's cache, how long the push
	// took, and why a first start had to be retried ("" if it did not).
	Started() (ready time.Time, sent, cached int, push time.Duration, retried string)
	// Exit waits up to d for the plugin's exit status.
	Exit(d time.Duration) (code int, exited bool, linkErr error)
	StderrTail() string
	// Dropped says what of the plugin's output was dropped (its cap),
	// LeftBehind what it left in the guest that had to be cleaned up.
	Dropped() []string
	LeftBehind() []string
	Close()
}

// peer is a run's peer guest while it serves.
type peer interface {
	Record() *results.Peer
	Stop(opts Options)
}

// machines are where a run gets its VM: a throwaway one booted from a
// profile, or one that is up.
type machines interface {
	Boot(ctx context.Context, plan *Plan, p images.Profile, clock vm.Clock, opts Options) (machine, error)
	Open(plan *Plan) (machine, error)
	// Snapshotted says whether Boot of p under clock would restore a
	// booted snapshot, not boot cold (false when it cannot tell: the
	// boot then says why).
	Snapshotted(ctx context.Context, plan *Plan, p images.Profile, clock vm.Clock, opts Options) bool
}

// realMachines are QEMU guests under the plan's roots.
type realMachines struct{}

// Boot boots a throwaway VM of p (powered off by Discard, and by this
// process's end however it ends: vm.UpOptions.Throwaway).
func (realMachines) Boot(ctx context.Context, plan *Plan, p images.Profile, clock vm.Clock, opts Options) (machine, error) {
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := p.Name + "-run-" + hex.EncodeToString(b[:])
	opts.emit(Booting{VM: name, Profile: p.Name})
	st, tls, err := Up(ctx, plan.Roots, throwawayOptions(name, p, clock), opts)
	if err != nil {
		return nil, err
	}
	opts.emit(Booted{VM: name, Seconds: st.BootSeconds, Accel: st.Accel, Clock: st.Clock.String()})
	h, err := plan.Roots.VMs.Open(name)
	if err != nil {
		return nil, err
	}
	return &vmMachine{h: h, tls: tls}, nil
}

// throwawayOptions are the boot options of throwaway VM name of p.
func throwawayOptions(name string, p images.Profile, clock vm.Clock) vm.UpOptions {
	return vm.UpOptions{Name: name, Profile: p, Accel: "auto", Clock: clock, Throwaway: true}
}

// Snapshotted resolves the boot Boot would make (vm.Prepare: the kernel,
// initramfs and accelerator are cached, nothing starts) and looks for
// its snapshot.
func (realMachines) Snapshotted(ctx context.Context, plan *Plan, p images.Profile, clock vm.Clock, opts Options) bool {
	o := plan.Roots.Up(throwawayOptions(p.Name+"-run-check", p, clock))
	o.Preload, o.Exe = opts.preload(plan.Roots.Plugins, p.Arch), opts.Exe
	cfg, err := vm.Prepare(ctx, o)
	return err == nil && cfg.HasSnapshot()
}

// Open opens the VM plan.VM names, or the only one up.
func (realMachines) Open(plan *Plan) (machine, error) {
	h, err := plan.Roots.VMs.OpenDefault(plan.VM)
	if err != nil {
		return nil, err
	}
	return &vmMachine{h: h}, nil
}

// vmMachine is a VM lab runs, behind its handle.
type vmMachine struct {
	h   *vm.Handle
	tls *host.VMTLS
}

func (m *vmMachine) Name() string      { return m.h.Name }
func (m *vmMachine) State() *vm.State  { return m.h.State }
func (m *vmMachine) TakenDown() string { return takenDown(m.h) }

func (m *vmMachine) Gone(d time.Duration) bool { return guestGone(m.h, d) }

func (m *vmMachine) Discard(ctx context.Context) error { return m.h.Discard(ctx) }

func (m *vmMachine) LockRun(ctx context.Context, command []string, waiting func(*vm.RunHolder)) (func(), error) {
	return m.h.LockRun(ctx, command, waiting)
}

func (m *vmMachine) Interference(from, to time.Time) ([]vm.Interference, error) {
	return m.h.Interference(from, to)
}

func (m *vmMachine) Plugin(ctx context.Context, bundle *host.Bundle, env []string) (pluginSession, error) {
	// Certificates not made at boot (Up warned why), or a VM booted by
	// an older lab: made now.
	if m.tls == nil {
		var err error
		if m.tls, err = host.EnsureTLS(m.h.Dir, m.h.Name); err != nil {
			return nil, err
		}
	}
	s, err := host.Open(ctx, m.h.Link(), bundle, host.OpenOptions{TLS: m.tls, Env: env})
	if err != nil {
		return nil, err
	}
	return hostSession{s}, nil
}

func (m *vmMachine) Peer(ctx context.Context, plan *Plan, bundle *host.Bundle, opts Options) (peer, error) {
	p, err := startPeer(ctx, plan, m.h, bundle, opts)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// hostSession is a plugin session over the VM's link.
type hostSession struct{ s *host.Session }

func (h hostSession) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	return h.s.Bench.Run(ctx, req, progress)
}

func (h hostSession) Started() (time.Time, int, int, time.Duration, string) {
	sent, cached, took := h.s.Pushed()
	return h.s.Ready, sent, cached, took, h.s.Retried
}

func (h hostSession) Exit(d time.Duration) (int, bool, error) { return h.s.Exit(d) }
func (h hostSession) StderrTail() string                      { return h.s.StderrTail() }
func (h hostSession) Dropped() []string                       { return h.s.Dropped() }
func (h hostSession) LeftBehind() []string                    { return h.s.LeftBehind() }
func (h hostSession) Close()                                  { h.s.Close() }

// vms is where runs get their machines: opts.machines (tests), else
// QEMU guests.
func (o Options) vms() machines {
	if o.machines != nil {
		return o.machines
	}
	return realMachines{}
}
