// Package link is the host<->guest channel: one byte stream (a virtio-serial
// port, or the second UART on kernels without virtio) carrying a yamux
// session. Each yamux stream starts with a length-prefixed JSON Request and
// Response header, followed by data whose shape depends on the operation.
//
// Both sides import this package: the agent (PID 1 in the guest) serves
// streams, the host opens them.
//
// Session start-up guards against a missed disconnect: the guest only sees
// whether a host is connected now, so if the host reconnects before the guest
// notices, a stale yamux session would eat the new connection. The agent
// therefore announces every new session with a ready line carrying a session
// id on the raw port and waits for the host's go-ahead before starting yamux.
// The host reads byte by byte up to that line; if it does not come in time,
// it writes a junk line that makes a stale yamux session fail, and the agent
// reopens the port and announces again.
package link

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/hashicorp/yamux"
)

// PortName is the virtio-serial port name the host creates and the agent
// looks for under /sys/class/virtio-ports/*/name.
const PortName = "org.lab.link.0"

const (
	readyPrefix = "LAB-LINK-READY "
	goPrefix    = "LAB-LINK-GO "
	// junk is not a valid yamux header (version byte must be 0), so a stale
	// yamux session on the guest side fails on it and the agent reopens.
	junk = "\xffLAB-LINK-RESET\n"
)

// Config is the yamux configuration both sides use. Keepalive is off: a
// paused guest (QMP stop) must not kill the session.
func Config() *yamux.Config {
	c := yamux.DefaultConfig()
	c.EnableKeepAlive = false
	// A write blocked this long means the guest is gone, not paused briefly.
	c.ConnectionWriteTimeout = 24 * time.Hour
	c.StreamOpenTimeout = 0
	c.StreamCloseTimeout = 5 * time.Minute
	c.LogOutput = io.Discard
	c.MaxStreamWindowSize = 8 << 20
	return c
}

// Announce writes the guest's ready line for session id.
func Announce(w io.Writer, id string) error {
	_, err := io.WriteString(w, readyPrefix+id+"\n")
	return err
}

// ErrReset is AwaitGo's error when the host's reset line came instead of
// a go-ahead: a host is there, and did not see the ready line.
var ErrReset = errors.New("link: the host reset the link before a go-ahead")

// AwaitGo reads the host's go-ahead for session id, byte by byte so no yamux
// bytes are swallowed. The host's reset line ends it with ErrReset; other
// lines (a go-ahead for an older session) are skipped; the caller bounds
// the wait with a read deadline.
func AwaitGo(r io.Reader, id string) error {
	for {
		line, err := readLine(r, 256)
		if errors.Is(err, errLineTooLong) {
			continue
		}
		if err != nil {
			return err
		}
		if line == goPrefix+id {
			return nil
		}
		if line+"\n" == junk {
			return ErrReset
		}
	}
}

// Reset writes the reset line on a raw link connection (after its yamux
// session is closed): a guest session still on it fails and the agent
// waits for a host again.
func Reset(w io.Writer) { _, _ = io.WriteString(w, junk) }

// SkipRepeats wraps a handshaken connection so that repeats of session
// id's ready line arriving before the guest's first yamux bytes are
// dropped (the agent says it twice when the host's reset crossed it; a
// yamux frame starts with version byte 0, never a ready line's 'L').
func SkipRepeats(conn net.Conn, id string) net.Conn {
	return &skipConn{Conn: conn, line: readyPrefix + id + "\n"}
}

type skipConn struct {
	net.Conn
	line    string
	pending []byte // bytes read while checking for a repeat, not yet returned
	done    bool
}

func (c *skipConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	if c.done {
		return c.Conn.Read(p)
	}
	var buf []byte
	b := make([]byte, 1)
	for {
		n, err := c.Conn.Read(b)
		if n == 1 {
			buf = append(buf, b[0])
			switch {
			case string(buf) == c.line:
				buf = buf[:0] // a repeat: dropped; look again
				continue
			case strings.HasPrefix(c.line, string(buf)):
				continue
			}
			c.done = true
			c.pending = buf
			return c.Read(p)
		}
		if err != nil {
			c.pending = buf
			if len(buf) > 0 {
				return c.Read(p)
			}
			return 0, err
		}
	}
}

// readLine reads one '\n'-terminated line a byte at a time.
func readLine(r io.Reader, max int) (string, error) {
	var sb strings.Builder
	b := make([]byte, 1)
	for sb.Len() < max {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				return sb.String(), nil
			}
			sb.WriteByte(b[0])
			continue
		}
		if err != nil {
			return sb.String(), err
		}
	}
	return sb.String(), errLineTooLong
}

// Deadliner is a connection whose reads can time out.
type Deadliner interface {
	io.ReadWriter
	SetReadDeadline(t time.Time) error
}

// HostHandshake waits for the agent's ready line on conn, discarding
// anything before it, and answers with the go-ahead. If resetAfter is
// non-zero and no ready line has come after that long, it writes the junk
// line that breaks a stale guest session (a reconnect the guest missed),
// and again after each further interval. It returns the session id.
func HostHandshake(ctx context.Context, conn Deadliner, resetAfter time.Duration) (string, error) {
	type ready struct {
		id  string
		err error
	}
	ch := make(chan ready, 1)
	go func() {
		// Stops right after the ready line's newline: no byte past it is read.
		id, err := scanReady(conn)
		ch <- ready{id, err}
	}()
	var tick <-chan time.Time
	if resetAfter > 0 {
		t := time.NewTicker(resetAfter)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case r := <-ch:
			if r.err != nil {
				return "", fmt.Errorf("link: reading the guest's ready line: %w", r.err)
			}
			if _, err := io.WriteString(conn, goPrefix+r.id+"\n"); err != nil {
				return "", fmt.Errorf("link: sending go-ahead: %w", err)
			}
			return r.id, nil
		case <-tick:
			if _, err := io.WriteString(conn, junk); err != nil {
				return "", fmt.Errorf("link: resetting a stale session: %w", err)
			}
		case <-ctx.Done():
			_ = conn.SetReadDeadline(time.Now())
			<-ch
			_ = conn.SetReadDeadline(time.Time{})
			return "", fmt.Errorf("link: waiting for the guest agent: %w", ctx.Err())
		}
	}
}

// scanReady reads lines until one is a ready line.
func scanReady(r io.Reader) (string, error) {
	for {
		line, err := readLine(r, 4096)
		if errors.Is(err, errLineTooLong) {
			continue // console noise or yamux bytes from a stale session
		}
		if err != nil {
			return "", err
		}
		if i := strings.Index(line, readyPrefix); i >= 0 {
			id := strings.TrimSpace(line[i+len(readyPrefix):])
			if id != "" {
				return id, nil
			}
		}
	}
}

var errLineTooLong = errors.New("link: line too long")
