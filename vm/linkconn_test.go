package vm

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
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
	ln, err := net.Listen("unix", filepath.Join(dir, CtlSock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				var req ctlRequest
				if link.ReadMsg(conn, &req) != nil {
					return
				}
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
			}()
		}
	}()
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
