package vm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"lab/vm/link"
)

// Operations on a supervisor's control socket.
const (
	ctlLink   = "link"   // splice this connection to a new link stream
	ctlStatus = "status" // report Status
	ctlDown   = "down"   // power off and exit
	// ctlLinkState reports LinkStatus: a client whose link stream broke
	// asks whether the link dropped under it.
	ctlLinkState = "linkstate"
	// ctlDropLink cuts the link connection as a failing link would, to
	// check that the supervisor reconnects (a diagnostic, for tests).
	ctlDropLink = "droplink"
	// ctlNIC attaches a NIC (ctlRequest.NIC) and holds it while the
	// connection lasts: a ctlNICDel request on it, or its end, detaches
	// it (peernet.go).
	ctlNIC    = "nic"
	ctlNICDel = "nicdel"
)

type ctlRequest struct {
	Op    string        `json:"op"`
	Grace time.Duration `json:"grace,omitempty"`
	// Discard (with ctlDown): end QEMU without powering the guest off.
	Discard bool `json:"discard,omitempty"`
	// NIC is the card ctlNIC attaches.
	NIC *NICSpec `json:"nic,omitempty"`
	// PID and By (with ctlDown) are the process asking and its command
	// line, for the record of the VM's end.
	PID int      `json:"pid,omitempty"`
	By  []string `json:"by,omitempty"`
}

type ctlResponse struct {
	Error  string  `json:"error,omitempty"`
	Status *Status `json:"status,omitempty"`
	// Link is the session a ctlLink stream was opened on, or the state
	// ctlLinkState asked for.
	Link *LinkStatus `json:"link,omitempty"`
	// NIC is the card ctlNIC attached.
	NIC *NICState `json:"nic,omitempty"`
}

// LinkStatus is the state of a VM's link to its agent.
type LinkStatus struct {
	// Session counts link sessions: 1 after boot, one more per reconnect.
	Session int `json:"session"`
	// Up is false while the supervisor reconnects.
	Up bool `json:"up"`
}

// Status is a live VM's state as its supervisor sees it.
type Status struct {
	// RunState is QEMU's run state from QMP ("running", "paused"...).
	RunState string        `json:"run_state"`
	Uptime   time.Duration `json:"uptime"`
	// NIC is the NIC a peer network attached, if any.
	NIC *NICState `json:"nic,omitempty"`
}

// Handle is a VM that is up, reached through its supervisor.
type Handle struct {
	Name  string
	Dir   string
	State *State
}

// Errors callers tell apart with errors.Is.
var (
	// ErrNotUp: no VM of that name is up (no live supervisor).
	ErrNotUp = errors.New("not up")
	// ErrNoneUp: no VM is up at all, and none was named.
	ErrNoneUp = errors.New("no VMs are up")
	// ErrBooting: the VM is still booting (`lab up` has not finished).
	ErrBooting = errors.New("still booting")
	// ErrNoSupervisor: the VM's supervisor does not answer on its
	// control socket (it is gone, or was never there).
	ErrNoSupervisor = errors.New("supervisor not answering")
	// ErrHungUp: the supervisor closed the control connection before
	// answering (it died, or the VM went down, mid-request).
	ErrHungUp = errors.New("supervisor hung up")
	// ErrOlderLab: the VM's supervisor is the older lab binary that
	// booted it, which lacks what this one asks of it (olderLab).
	ErrOlderLab = errors.New("booted by an older lab")
)

// olderLab is the one error of a VM whose supervisor is too old for what
// is asked of it, saying what to do.
func (h *Handle) olderLab() error {
	return fmt.Errorf("vm %s: %w: `lab down %s` and `lab up` again", h.Name, ErrOlderLab, h.Name)
}

// unknownOp is a supervisor's answer to an operation it does not know,
// as every supervisor has said it: from a lab older than its client, the
// operation is newer than the supervisor.
func unknownOp(op string) string { return fmt.Sprintf("unknown control operation %q", op) }

// Open finds the VM called name in r. A stale state directory is cleaned
// up and reported as not up.
func (r Root) Open(name string) (*Handle, error) {
	entries, err := r.List()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Stale || e.State == nil {
			continue
		}
		names = append(names, e.Name)
		if e.Name == name {
			if e.State.Phase == PhaseBooting {
				return nil, fmt.Errorf("vm %s is %w; wait for `lab up` to finish", name, ErrBooting)
			}
			return &Handle{Name: name, Dir: e.Dir, State: e.State}, nil
		}
	}
	up := "no VMs are up; start one with `lab up PROFILE`"
	if len(names) > 0 {
		up = "up: " + strings.Join(names, ", ")
	}
	return nil, fmt.Errorf("vm %q is %w (%s)", name, ErrNotUp, up)
}

// OpenDefault opens the named VM, or the only VM up in r when name is
// empty. A throwaway VM (another run's: lab run --profile, a matrix
// cell) is never the default.
func (r Root) OpenDefault(name string) (*Handle, error) {
	if name != "" {
		return r.Open(name)
	}
	entries, err := r.List()
	if err != nil {
		return nil, err
	}
	var live []Entry
	var others []string
	for _, e := range entries {
		switch {
		case e.Stale || e.State == nil:
		case e.State.Throwaway:
			others = append(others, e.Name+" is another run's throwaway VM")
		default:
			live = append(live, e)
		}
	}
	switch len(live) {
	case 0:
		if len(others) > 0 {
			return nil, fmt.Errorf("%w (%s); start one with `lab up PROFILE`", ErrNoneUp, strings.Join(others, "; "))
		}
		return nil, fmt.Errorf("%w; start one with `lab up PROFILE`", ErrNoneUp)
	case 1:
		return r.Open(live[0].Name)
	}
	var names []string
	for _, e := range live {
		names = append(names, e.Name)
	}
	return nil, fmt.Errorf("%d VMs are up (%s); name one", len(live), strings.Join(names, ", "))
}

func (h *Handle) ctl(ctx context.Context, req ctlRequest) (net.Conn, *ctlResponse, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", filepath.Join(h.Dir, CtlSock))
	if err != nil {
		return nil, nil, fmt.Errorf("vm %s: %w: %w", h.Name, ErrNoSupervisor, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := link.WriteMsg(conn, &req); err != nil {
		conn.Close()
		return nil, nil, ctxErr(ctx, fmt.Errorf("vm %s: %w", h.Name, err))
	}
	var resp ctlResponse
	if err := link.ReadMsg(conn, &resp); err != nil {
		conn.Close()
		return nil, nil, ctxErr(ctx, fmt.Errorf("vm %s: %w: %w", h.Name, ErrHungUp, err))
	}
	if resp.Error != "" {
		conn.Close()
		if resp.Error == unknownOp(req.Op) {
			return nil, nil, h.olderLab()
		}
		return nil, nil, fmt.Errorf("vm %s: %s", h.Name, resp.Error)
	}
	return conn, &resp, nil
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Link returns a client for the VM's agent; each stream goes through the
// supervisor, which owns the link. While the supervisor reconnects a
// dropped link, new streams wait for it. A stream that breaks because the
// link dropped under it fails with a *LinkDroppedError.
func (h *Handle) Link() *link.Client {
	return link.NewClient(func(ctx context.Context) (net.Conn, error) {
		conn, resp, err := h.ctl(ctx, ctlRequest{Op: ctlLink})
		if err != nil {
			return nil, err
		}
		if resp.Link == nil { // a supervisor from before link sessions
			conn.Close()
			return nil, h.olderLab()
		}
		return &linkConn{Conn: conn, h: h, session: resp.Link.Session}, nil
	})
}

// LinkDroppedError is a stream to the guest cut because the link's session
// died; the supervisor reconnects, so a new stream works again.
type LinkDroppedError struct {
	VM string
	// Session is the dead session.
	Session int
}

func (e *LinkDroppedError) Error() string {
	return fmt.Sprintf("link to vm %s dropped (session %d): the guest agent kills what ran over it; the supervisor reconnects, so run it again", e.VM, e.Session)
}

// linkConn is a stream through the supervisor on link session session. When
// a read fails it asks the supervisor whether that session died, so the
// caller gets a *LinkDroppedError rather than a bare EOF.
type linkConn struct {
	net.Conn
	h       *Handle
	session int

	closed atomic.Bool
	once   sync.Once
	drop   error
}

func (c *linkConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil && !c.closed.Load() {
		if derr := c.dropped(); derr != nil {
			return n, derr
		}
	}
	return n, err
}

func (c *linkConn) Close() error {
	c.closed.Store(true)
	return c.Conn.Close()
}

// dropped asks the supervisor (once) whether c's session is gone.
func (c *linkConn) dropped() error {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, err := c.h.LinkState(ctx)
		if err != nil {
			return // the supervisor is gone too: the plain error says enough
		}
		if st.Session != c.session || !st.Up {
			c.drop = &LinkDroppedError{VM: c.h.Name, Session: c.session}
		}
	})
	return c.drop
}

// LinkState asks the supervisor for the state of the VM's link.
func (h *Handle) LinkState(ctx context.Context) (*LinkStatus, error) {
	conn, resp, err := h.ctl(ctx, ctlRequest{Op: ctlLinkState})
	if err != nil {
		return nil, err
	}
	conn.Close()
	return resp.Link, nil
}

// DropLink makes the supervisor cut the VM's link connection as a failing
// link would; it reconnects on its own. A diagnostic: tests use it to
// check reconnection.
func (h *Handle) DropLink(ctx context.Context) error {
	conn, _, err := h.ctl(ctx, ctlRequest{Op: ctlDropLink})
	if err != nil {
		return err
	}
	conn.Close()
	return nil
}

// Status asks the supervisor for the VM's live status.
func (h *Handle) Status(ctx context.Context) (*Status, error) {
	conn, resp, err := h.ctl(ctx, ctlRequest{Op: ctlStatus})
	if err != nil {
		return nil, err
	}
	conn.Close()
	return resp.Status, nil
}

// Down powers the VM off (forced after grace) and waits until its state is
// gone.
func (h *Handle) Down(ctx context.Context, grace time.Duration) error {
	return h.down(ctx, ctlRequest{Op: ctlDown, Grace: grace})
}

// Discard ends the VM without powering the guest off (QMP quit) and waits
// until its state is gone: for a throwaway VM whose run is saved.
func (h *Handle) Discard(ctx context.Context) error {
	err := h.down(ctx, ctlRequest{Op: ctlDown, Discard: true})
	if f, ok := owners.LoadAndDelete(h.Name); ok {
		f.(*os.File).Close()
	}
	return err
}

func (h *Handle) down(ctx context.Context, req ctlRequest) error {
	req.PID, req.By = os.Getpid(), os.Args
	conn, _, err := h.ctl(ctx, req)
	if err != nil {
		if !supervisorAlive(h.State.SupervisorPID) {
			cleanStale(h.Dir, h.State)
			return nil
		}
		return err
	}
	defer conn.Close()
	// The supervisor closes the connection when it is done.
	var resp ctlResponse
	_ = link.ReadMsg(conn, &resp)
	for supervisorAlive(h.State.SupervisorPID) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	cleanStale(h.Dir, h.State)
	if resp.Error != "" {
		return fmt.Errorf("vm %s: %s", h.Name, resp.Error)
	}
	return nil
}
