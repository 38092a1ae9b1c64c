package vm

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"lab/vm/link"
)

// dropCtl serves a control socket whose link streams (on session 1) are
// cut before the agent answers, as when the link drops mid-stream, and
// whose linkstate answers state (or nothing, when state is nil).
func dropCtl(t *testing.T, dir string, state *LinkStatus) {
	t.Helper()
	serveCtl(t, dir, func(conn net.Conn, req ctlRequest) {
		switch req.Op {
		case ctlLink:
			_ = link.WriteMsg(conn, &ctlResponse{Link: &LinkStatus{Session: 1, Up: true}})
			var lr link.Request
			_ = link.ReadMsg(conn, &lr) // and hang up: the stream's session died
		case ctlLinkState:
			if state == nil {
				return // a supervisor that cannot say
			}
			_ = link.WriteMsg(conn, &ctlResponse{Link: state})
		}
	})
}

// A stream cut under a client says the link dropped when (and only when)
// the supervisor reports that its session is gone.
func TestLinkDroppedError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name        string
		state       *LinkStatus
		wantDropped bool
	}{
		{"reconnected", &LinkStatus{Session: 2, Up: true}, true},
		{"reconnecting", &LinkStatus{Session: 1, Up: false}, true},
		{"same session up", &LinkStatus{Session: 1, Up: true}, false},
		{"supervisor cannot say", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			root := stateRoot(t)
			dir := writeVM(t, root, "drop", State{SupervisorPID: fakeSupervisor(t)})
			dropCtl(t, dir, c.state)
			h, err := root.Open("drop")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = h.Link().Info(ctx)
			var de *LinkDroppedError
			if got := errors.As(err, &de); got != c.wantDropped {
				t.Fatalf("Info over a cut stream: %v; LinkDroppedError %v, want %v", err, got, c.wantDropped)
			}
			if c.wantDropped {
				if de.VM != "drop" || de.Session != 1 || !strings.Contains(err.Error(), "link to vm drop dropped") {
					t.Errorf("error %q (%+v) should name the VM and the dead session", err, de)
				}
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("Info over a cut stream: %v, want the plain EOF", err)
			}
		})
	}
}

// olderCtl serves a control socket as a supervisor of a lab from before
// link sessions did: a link stream answered without its session, any
// later operation refused as unknown, in the words every supervisor has
// used.
func olderCtl(t *testing.T, dir string) {
	t.Helper()
	serveCtl(t, dir, func(conn net.Conn, req ctlRequest) {
		switch req.Op {
		case ctlLink:
			_ = link.WriteMsg(conn, &ctlResponse{})
		case ctlStatus:
			_ = link.WriteMsg(conn, &ctlResponse{Status: &Status{RunState: "running"}})
		default:
			_ = link.WriteMsg(conn, &ctlResponse{Error: `unknown control operation "` + req.Op + `"`})
		}
	})
}

// TestOlderLab: a VM whose supervisor is an older lab's (the one that
// booted it, before an upgrade) says so, and what to do, whatever this
// lab asks of it that it lacks: a link stream with its session, the
// link's state, a NIC. What it knows still works.
func TestOlderLab(t *testing.T) {
	t.Parallel()
	root := stateRoot(t)
	dir := writeVM(t, root, "old", State{SupervisorPID: fakeSupervisor(t)})
	olderCtl(t, dir)
	h, err := root.Open("old")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if st, err := h.Status(ctx); err != nil || st.RunState != "running" {
		t.Errorf("Status = %+v, %v; want what the older supervisor knows", st, err)
	}
	const want = "vm old: booted by an older lab: `lab down old` and `lab up` again"
	for what, call := range map[string]func() error{
		"Link().Info": func() error { _, err := h.Link().Info(ctx); return err },
		"LinkState":   func() error { _, err := h.LinkState(ctx); return err },
		"AttachNIC":   func() error { _, err := h.AttachNIC(ctx, goodNIC()); return err },
	} {
		err := call()
		if !errors.Is(err, ErrOlderLab) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s = %v, want %q", what, err, want)
		}
	}
}
