package vm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/yamux"

	"lab/vm/link"
)

// Preloading a booted snapshot. A snapshot is saved before any host has
// spoken to the agent, so a restored guest's file cache would be empty and
// the first run of every plugin would push it again (~0.9 s for
// forkbench). So when a cold boot is about to save a snapshot and the
// caller listed files (lab's own plugin bundles for the guest's arch),
// the supervisor connects once the agent waits for its first host, puts
// each file into the agent's blob cache only (a put whose guest path is
// the blob itself: nothing is installed), hangs up, and waits for the
// agent to wait for a host again before it saves the machine. The files
// are part of the snapshot's key, so a rebuilt plugin makes a new one.
// They cost the guest their size in RAM (the cache lives in the
// initramfs's tmpfs), counted in the agent's cache budget.

// GuestBlobDir is the agent's content cache (guest/agent blobDir): a put
// to GuestBlobDir/SHA256 stores content without installing it.
const GuestBlobDir = "/var/lib/lab/blobs"

// PreloadFile is a host file the guest's cache receives before a booted
// snapshot is saved, named by its content hash, with the mode the plugin
// runner will install it with (the blob keeps that mode, so installing it
// later is a hard link).
type PreloadFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Mode   uint32 `json:"mode"`
}

// preloadSettle bounds how long the agent may take to notice the preload
// session ended and wait for a host again.
const preloadSettle = 15 * time.Second

// checkPreload refuses a list the agent could not store by hash.
func checkPreload(files []PreloadFile) error {
	for _, f := range files {
		if _, err := hex.DecodeString(f.SHA256); err != nil || len(f.SHA256) != 64 {
			return fmt.Errorf("preload file %s: sha256 %q is not 64 hex digits", f.Path, f.SHA256)
		}
		if !filepath.IsAbs(f.Path) {
			return fmt.Errorf("preload file %s: want an absolute host path", f.Path)
		}
	}
	return nil
}

// preload connects to an agent waiting for its first host, puts the
// preload files into its blob cache, hangs up and waits until the agent
// waits for a host again: the state a booted snapshot must hold. It
// returns how many bytes it sent.
func (m *Machine) preload(ctx context.Context) (int64, error) {
	var reset time.Duration
	if m.cfg.ttyLink() {
		reset = handshakeReset
	}
	conn, id, err := m.handshake(ctx, reset)
	if err != nil {
		return 0, fmt.Errorf("connecting to preload: %w", err)
	}
	// On a terminal link the connection outlives the yamux session (see
	// below): yamux gets one whose Close leaves it open.
	var yconn net.Conn = conn
	if m.cfg.ttyLink() {
		yconn = keepOpen{conn}
	}
	sess, err := yamux.Client(yconn, link.Config())
	if err != nil {
		conn.Close()
		return 0, err
	}
	c := link.NewClient(func(context.Context) (net.Conn, error) { return sess.Open() })
	var sent int64
	for _, f := range m.cfg.Preload {
		n, err := putPreload(ctx, c, f)
		if err != nil {
			sess.Close()
			conn.Close()
			return sent, err
		}
		sent += n
	}
	// Every put was answered: the agent holds the files. Hanging up ends
	// its session (its port reads EOF once no host is connected); it then
	// reopens the port and prints the ready marker again.
	ctx, cancel := context.WithTimeout(ctx, preloadSettle)
	defer cancel()
	if m.cfg.ttyLink() {
		// A terminal link (hvc0, a UART) reads no EOF when the host
		// goes: the reset line ends the agent's session there. The
		// connection stays open until the agent has said it waits again:
		// QEMU may drop what it had not yet handed the guest of a
		// connection that closed (seen once in CI: the agent never read
		// the reset line and the snapshot was not saved).
		sess.Close() // leaves conn open (keepOpen)
		link.Reset(conn)
		err := m.awaitMarker(ctx, "announcing session "+id)
		conn.Close()
		if err != nil {
			return sent, fmt.Errorf("the agent did not wait for a host again after the preload session %s: %w", id, err)
		}
		return sent, nil
	}
	sess.Close()
	conn.Close()
	if err := m.awaitMarker(ctx, "announcing session "+id); err != nil {
		return sent, fmt.Errorf("the agent did not wait for a host again after the preload session %s: %w", id, err)
	}
	return sent, nil
}

// keepOpen is a connection whose Close does not hang up: it only ends the
// reads in progress (yamux's Close waits for its reader), so a yamux
// session over it can end while the connection stays.
type keepOpen struct{ net.Conn }

func (k keepOpen) Close() error { return k.Conn.SetReadDeadline(time.Now()) }

// putPreload puts one file into the guest's blob cache, after checking
// that the host file still has the content the list names (a plugin
// rebuilt since would otherwise be stored under the old hash).
func putPreload(ctx context.Context, c *link.Client, f PreloadFile) (int64, error) {
	b, err := os.ReadFile(f.Path)
	if err != nil {
		return 0, fmt.Errorf("preload: %w", err)
	}
	h := sha256.Sum256(b)
	if got := hex.EncodeToString(h[:]); got != f.SHA256 {
		return 0, fmt.Errorf("preload: %s changed since the boot was prepared (sha256 %s, listed %s)", f.Path, got[:12], f.SHA256[:12])
	}
	sent, err := c.Put(ctx, bytes.NewReader(b), &link.PutRequest{Path: GuestBlobDir + "/" + f.SHA256, Mode: f.Mode, Size: int64(len(b)), SHA256: f.SHA256})
	if err != nil {
		return 0, fmt.Errorf("preloading %s: %w", f.Path, err)
	}
	if !sent {
		return 0, nil
	}
	return int64(len(b)), nil
}

// awaitMarker waits until the console shows the agent's ready marker
// (readyMarker) after the first occurrence of after ("" for anywhere): the
// agent then waits for a host. Counting from a line of the session before
// (its announcement, which carries the session id) tells the ready marker
// printed after that session from the one printed before it.
func (m *Machine) awaitMarker(ctx context.Context, after string) error {
	for {
		b, _ := os.ReadFile(filepath.Join(m.dir, ConsoleLog))
		s := string(b)
		start := 0
		if after != "" {
			i := strings.Index(s, after)
			if i < 0 {
				start = -1
			} else {
				start = i + len(after)
			}
		}
		if start >= 0 && strings.Contains(s[start:], readyMarker) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.exited:
			return errors.New("qemu exited")
		case <-time.After(20 * time.Millisecond): // the console is a file QEMU appends to
		}
	}
}
