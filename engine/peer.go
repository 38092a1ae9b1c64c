package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"lab/plugins"
	"lab/plugins/host"
	"lab/results"
	"lab/vm"
)

// A run whose experiment asks for a peer (plugins.Peer, e.g. netbench's
// `-p clients=peer`) gets a second guest: a throwaway VM of the run's
// profile, joined to the run's guest by a link-local network between the
// two QEMUs (vm.Join), running the plugin's peer workload until the run
// ends. It belongs to this process as any throwaway VM does: killed, even
// with SIGKILL, lab takes the peer with it, and the run's guest's
// supervisor takes the NIC out again.

// peerReadyTimeout bounds the peer workload's start, from its push to its
// "ready" line.
const peerReadyTimeout = 30 * time.Second

// peerRun is a run's peer guest while it serves.
type peerRun struct {
	h      *vm.Handle
	vms    vm.Root
	net    *vm.Network
	work   *host.PeerWorkload
	unlock func()
	rec    *results.Peer
	once   sync.Once
}

// wantsPeer says whether the plan needs a peer guest: its parameters, or
// any point of its sweep, ask for the experiment's peer. A sweep that
// crosses clients=local,peer starts one for the whole sweep (the plugin's
// environment is set once); the points that do not use it leave it idle.
func wantsPeer(plan *Plan) bool {
	p := plan.Exp.Peer
	if p == nil {
		return false
	}
	if p.Wants(plan.Resolved) {
		return true
	}
	for _, pt := range plan.Points {
		if p.Wants(pt.Params) {
			return true
		}
	}
	return false
}

// PeerName is the name of the peer VM of VM vmName: its name with
// "-peer".
func PeerName(vmName string) string {
	const suffix = "-peer"
	if len(vmName)+len(suffix) > 63 {
		vmName = vmName[:63-len(suffix)]
	}
	return vmName + suffix
}

// peerEnv is the environment of the plugin in the run's guest, and of the
// workload in the peer.
func peerEnv(self, peer string) []string {
	return []string{"LAB_SELF_ADDR=" + self, "LAB_PEER_ADDR=" + peer}
}

// startPeer boots the peer guest for a run on h, joins it to h, installs
// bundle there and starts the experiment's peer workload, and returns
// once that is ready. If anything fails, nothing of it is left: no peer VM,
// no NIC in h's guest.
func startPeer(ctx context.Context, plan *Plan, h *vm.Handle, bundle *host.Bundle, opts Options) (p *peerRun, err error) {
	spec := plan.Exp.Peer
	name := PeerName(h.Name)
	st := h.State
	opts.emit(PeerBooting{Plugin: plan.Desc.Name, Experiment: plan.Exp.Name, Param: spec.Param, Value: spec.Value, VM: name, Profile: st.Profile.Name})
	pst, err := vm.Up(ctx, plan.Roots.Up(vm.UpOptions{Name: name, Profile: st.Profile, Accel: st.Accel, Clock: st.Clock, MemoryMB: opts.PeerMemoryMB,
		Preload: opts.preload(plan.Roots.Plugins, st.Profile.Arch), Exe: opts.Exe, Log: &logWriter{opts: opts}, Throwaway: true}))
	if err != nil {
		return nil, fmt.Errorf("the peer guest %s (profile %s) did not boot, so the run did not start; nothing of it is left running, and vm %s is as it was: %w\n"+
			"(check that `lab up %s --name %s` boots on its own; or run without -p %s=%s, which asks for the peer)",
			name, st.Profile.Name, h.Name, err, st.Profile.Name, name, spec.Param, spec.Value)
	}
	p = &peerRun{vms: plan.Roots.VMs, rec: &results.Peer{VM: name, Boot: pst.Boot, BootSeconds: pst.BootSeconds,
		Addr: plugins.PeerAddr, SelfAddr: plugins.PeerSelfAddr, Network: "virtio-net on a QEMU dgram netdev over unix sockets, link-local /16, IPv6 off",
		Workload: spec.Workload, Args: spec.Args, Guest: guestOf(pst)}}
	defer func() {
		if err != nil {
			p.Stop(opts)
			p = nil
		}
	}()
	if p.h, err = p.vms.Open(name); err != nil {
		return p, err
	}
	opts.emit(PeerBooted{VM: name, Seconds: pst.BootSeconds, Boot: pst.Boot})
	if p.unlock, err = p.h.LockRun(ctx, plan.Command, func(holder *vm.RunHolder) {
		opts.emit(Waiting{VM: name, Holder: holder})
	}); err != nil {
		return p, err
	}
	if p.net, err = vm.Join(ctx, h, p.h, plugins.PeerSelfAddr+"/16", plugins.PeerAddr+"/16"); err != nil {
		return p, fmt.Errorf("joining vm %s and its peer guest %s: %w", h.Name, name, err)
	}
	p.rec.JoinSeconds = p.net.Took.Seconds()
	opts.emit(PeerJoined{Seconds: p.rec.JoinSeconds, VM: h.Name, Addr: plugins.PeerSelfAddr, Iface: p.net.A.State.Iface,
		Peer: name, PeerAddr: plugins.PeerAddr, PeerIfc: p.net.B.State.Iface})
	t := time.Now()
	p.work, err = host.StartPeer(ctx, p.h.Link(), bundle, spec.Workload, spec.Args, peerEnv(plugins.PeerAddr, plugins.PeerSelfAddr), peerReadyTimeout)
	if err != nil {
		return p, fmt.Errorf("peer guest %s: %w", name, err)
	}
	p.rec.ReadySeconds = time.Since(t).Seconds()
	p.rec.FilesSent, p.rec.FilesCached = p.work.Sent, p.work.Cached
	opts.emit(PeerReady{Workload: spec.Workload, VM: name, Seconds: p.rec.ReadySeconds, Sent: p.work.Sent, Cached: p.work.Cached})
	return p, nil
}

// Stop (once) ends the peer workload, takes both NICs out and discards the peer
// VM, whatever state the run left them in; what went wrong is recorded
// in rec.Error and said as a warning.
func (p *peerRun) Stop(opts Options) { p.once.Do(func() { p.stopOnce(opts) }) }

// Record is the peer's record in the run's result, its fate included
// once stopped.
func (p *peerRun) Record() *results.Peer { return p.rec }

func (p *peerRun) stopOnce(opts Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var errs []string
	if p.work != nil {
		if err := p.work.Stop(ctx); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if p.net != nil {
		if err := p.net.Close(ctx); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if p.unlock != nil {
		p.unlock()
	}
	h := p.h
	if h == nil {
		h, _ = p.vms.Open(p.rec.VM)
	}
	if h != nil {
		if err := h.Discard(ctx); err != nil {
			errs = append(errs, fmt.Sprintf("discarding the peer guest %s: %v", p.rec.VM, err))
		}
	}
	for _, msg := range errs {
		opts.emit(Warning{Text: fmt.Sprintf("peer guest %s: %s", p.rec.VM, msg)})
		if p.rec.Error != "" {
			p.rec.Error += "; "
		}
		p.rec.Error += msg
	}
}
