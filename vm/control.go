package vm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"lab/vm/link"
)

// Operations on a supervisor's control socket.
const (
	ctlLink   = "link"   // splice this connection to a new link stream
	ctlStatus = "status" // report Status
	ctlDown   = "down"   // power off and exit
)

type ctlRequest struct {
	Op    string        `json:"op"`
	Grace time.Duration `json:"grace,omitempty"`
}

type ctlResponse struct {
	Error  string  `json:"error,omitempty"`
	Status *Status `json:"status,omitempty"`
}

// Status is a live VM's state as its supervisor sees it.
type Status struct {
	// RunState is QEMU's run state from QMP ("running", "paused"...).
	RunState string        `json:"run_state"`
	Uptime   time.Duration `json:"uptime"`
}

// Handle is a VM that is up, reached through its supervisor.
type Handle struct {
	Name  string
	Dir   string
	State *State
}

// ErrNotUp is returned for a VM name with no live supervisor.
var ErrNotUp = errors.New("not up")

// Open finds the VM called name. A stale state directory is cleaned up and
// reported as not up.
func Open(name string) (*Handle, error) {
	entries, err := List()
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
				return nil, fmt.Errorf("vm %s is still booting; wait for `lab up` to finish", name)
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

// OpenDefault opens the named VM, or the only VM up when name is empty.
func OpenDefault(name string) (*Handle, error) {
	if name != "" {
		return Open(name)
	}
	entries, err := List()
	if err != nil {
		return nil, err
	}
	var live []Entry
	for _, e := range entries {
		if !e.Stale && e.State != nil {
			live = append(live, e)
		}
	}
	switch len(live) {
	case 0:
		return nil, errors.New("no VMs are up; start one with `lab up PROFILE`")
	case 1:
		return Open(live[0].Name)
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
		return nil, nil, fmt.Errorf("vm %s: supervisor not answering: %w", h.Name, err)
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
		return nil, nil, ctxErr(ctx, fmt.Errorf("vm %s: supervisor hung up: %w", h.Name, err))
	}
	if resp.Error != "" {
		conn.Close()
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
// supervisor, which owns the link.
func (h *Handle) Link() *link.Client {
	return link.NewClient(func(ctx context.Context) (net.Conn, error) {
		conn, _, err := h.ctl(ctx, ctlRequest{Op: ctlLink})
		return conn, err
	})
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
	conn, _, err := h.ctl(ctx, ctlRequest{Op: ctlDown, Grace: grace})
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
