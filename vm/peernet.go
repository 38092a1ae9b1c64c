package vm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"sync"
	"time"

	"lab/vm/link"
)

// A NIC attached through a supervisor lasts as long as the control
// connection that asked for it: the supervisor detaches it when the client
// asks (NIC.Detach) or when the connection ends, which it does when the
// client's process ends, however it ends. So a `lab run` killed with
// SIGKILL during a run with a peer still leaves its first guest with the
// hardware it had before, as the throwaway peer's owner pipe takes the
// peer away.

// holdNIC attaches spec, answers, and holds the NIC until a ctlNICDel on
// conn or conn's end, then detaches it and answers again.
func (s *server) holdNIC(conn net.Conn, spec *NICSpec) {
	defer conn.Close()
	if spec == nil {
		_ = link.WriteMsg(conn, &ctlResponse{Error: "nic: no card described"})
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	st, err := s.m.AttachNIC(ctx, *spec)
	cancel()
	if err != nil {
		s.log.Printf("attaching a nic: %v", err)
		_ = link.WriteMsg(conn, &ctlResponse{Error: err.Error()})
		return
	}
	s.log.Printf("nic %s attached (mac %s, %s): plugged in %.2fs, configured in %.2fs", st.Iface, st.MAC, st.Addr, st.PlugSeconds, st.ConfigSeconds)
	_ = link.WriteMsg(conn, &ctlResponse{NIC: st})
	var req ctlRequest
	if err := link.ReadMsg(conn, &req); err != nil {
		s.log.Printf("the process holding nic %s is gone; detaching it", st.Iface)
	} else if req.Op != ctlNICDel {
		s.log.Printf("unexpected %q on the nic's connection; detaching it", req.Op)
	}
	t := time.Now()
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Minute)
	err = s.m.DetachNIC(ctx)
	cancel()
	resp := &ctlResponse{}
	if err != nil {
		s.log.Printf("detaching nic %s: %v", st.Iface, err)
		resp.Error = err.Error()
	} else {
		s.log.Printf("nic %s detached in %.2fs", st.Iface, time.Since(t).Seconds())
	}
	_ = link.WriteMsg(conn, resp)
}

// NIC is a NIC attached to a VM through its supervisor, held by this
// process: see AttachNIC.
type NIC struct {
	VM    string
	State NICState

	h    *Handle
	conn net.Conn
	once sync.Once
	err  error
}

// AttachNIC gives the VM the NIC spec describes, hot-plugged and
// configured in the guest (see nic.go). It stays until Detach, or until
// this process ends (killed, even with SIGKILL): the supervisor then
// detaches it itself.
func (h *Handle) AttachNIC(ctx context.Context, spec NICSpec) (*NIC, error) {
	if err := spec.Check(); err != nil {
		return nil, fmt.Errorf("vm %s: %w", h.Name, err)
	}
	conn, resp, err := h.ctl(ctx, ctlRequest{Op: ctlNIC, NIC: &spec})
	if err != nil {
		return nil, err
	}
	return &NIC{VM: h.Name, State: *resp.NIC, h: h, conn: conn}, nil
}

// Detach takes the NIC away and waits until it is gone from the guest. A
// VM that went down took its NIC with it: that is no error. If ctx ends
// first the supervisor still detaches it, on its own.
func (n *NIC) Detach(ctx context.Context) error {
	n.once.Do(func() { n.err = n.detach(ctx) })
	return n.err
}

func (n *NIC) detach(ctx context.Context) error {
	defer n.conn.Close()
	stop := context.AfterFunc(ctx, func() { n.conn.Close() })
	defer stop()
	err := link.WriteMsg(n.conn, &ctlRequest{Op: ctlNICDel})
	if err == nil {
		var resp ctlResponse
		if err = link.ReadMsg(n.conn, &resp); err == nil {
			if resp.Error != "" {
				return fmt.Errorf("vm %s: %s", n.VM, resp.Error)
			}
			return nil
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("vm %s: detaching its nic: %w (its supervisor goes on detaching it)", n.VM, ctx.Err())
	}
	if !supervisorAlive(n.h.State.SupervisorPID) {
		return nil
	}
	return fmt.Errorf("vm %s: detaching its nic: the supervisor hung up: %w", n.VM, err)
}

// Network is two VMs joined by a peer network, a NIC in each.
type Network struct {
	A, B *NIC
	// Took is from Join's start to B answering A's ping.
	Took time.Duration
}

// Join joins VMs a and b by a peer network, a at addrA and b at addrB
// (addresses with a prefix, in 169.254.0.0/16), and checks that b answers
// a's ping over it. The NICs last until Close or until this process ends
// (see AttachNIC). If anything fails, both NICs are gone again when Join
// returns.
func Join(ctx context.Context, a, b *Handle, addrA, addrB string) (*Network, error) {
	t := time.Now()
	pa, err := netip.ParsePrefix(addrA)
	if err != nil {
		return nil, fmt.Errorf("peer network: address %q: %w", addrA, err)
	}
	pb, err := netip.ParsePrefix(addrB)
	if err != nil {
		return nil, fmt.Errorf("peer network: address %q: %w", addrB, err)
	}
	if pa.Masked() != pb.Masked() || pa.Addr() == pb.Addr() {
		return nil, fmt.Errorf("peer network: %s and %s must be two addresses of one network", addrA, addrB)
	}
	sockA, sockB := filepath.Join(a.Dir, NetSock), filepath.Join(b.Dir, NetSock)
	specs := []NICSpec{
		{MAC: nicMAC(pa.Addr()), Addr: addrA, Local: sockA, Remote: sockB},
		{MAC: nicMAC(pb.Addr()), Addr: addrB, Local: sockB, Remote: sockA},
	}
	nics := make([]*NIC, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, h := range []*Handle{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nics[i], errs[i] = h.AttachNIC(ctx, specs[i])
		}()
	}
	wg.Wait()
	n := &Network{A: nics[0], B: nics[1]}
	if err := errors.Join(errs...); err != nil {
		if cerr := n.Close(context.WithoutCancel(ctx)); cerr != nil {
			err = fmt.Errorf("%w; detaching the other: %v", err, cerr)
		}
		return nil, fmt.Errorf("joining vm %s and vm %s: %w", a.Name, b.Name, err)
	}
	if _, err := guestSh(ctx, a.Link(), pingScript, pb.Addr().String()); err != nil {
		err = fmt.Errorf("vm %s cannot reach vm %s at %s over the peer network: %w", a.Name, b.Name, pb.Addr(), err)
		if cerr := n.Close(context.WithoutCancel(ctx)); cerr != nil {
			err = fmt.Errorf("%w; detaching the nics: %v", err, cerr)
		}
		return nil, err
	}
	n.Took = time.Since(t)
	return n, nil
}

// Close detaches both NICs (either may be nil) and returns what failed.
func (n *Network) Close(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, nic := range []*NIC{n.A, n.B} {
		if nic == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = nic.Detach(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
