package host

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"lab/vm/link"
)

// PeerWorkload is one of a plugin's workloads serving in a peer guest (an
// experiment's plugins.Peer): the bundle installed there as Open installs
// it in the run's guest, the workload started from its workload dir. It
// runs until Stop; if this process ends first, the link's stream goes and
// the agent kills it (and the throwaway peer guest goes too).
type PeerWorkload struct {
	// Name is the workload's; Argv what ran in the guest.
	Name string
	Argv []string
	// Sent and Cached count the bundle's files pushed to the peer and those
	// it already held (lab's own plugins are in every booted snapshot).
	Sent, Cached int
	// Started is when it was started; ReadyAfter how long it then took to
	// print "ready".
	Started    time.Time
	ReadyAfter time.Duration

	proc   *link.Process
	out    *readyWriter
	stderr *tailBuffer
	once   sync.Once
	err    error
}

// StartPeer installs bundle in the guest behind lc and starts its workload
// name with args and env (KEY=VALUE, beside the bundle's workload dir and
// a PATH) there, and returns once it printed a line "ready" on stdout.
// A workload that exits first, or prints nothing of the kind within
// timeout, is an error quoting what it printed; it is killed.
func StartPeer(ctx context.Context, lc *link.Client, bundle *Bundle, name string, args, env []string, timeout time.Duration) (*PeerWorkload, error) {
	w := &PeerWorkload{Name: name, out: newReadyWriter(), stderr: &tailBuffer{max: 4 << 10}}
	root, files, err := pushBundle(ctx, lc, bundle, &w.Sent, &w.Cached)
	if err != nil {
		return nil, err
	}
	rel := path.Join("workload", name)
	if !slices.ContainsFunc(files, func(f bundleFile) bool { return f.rel == rel }) {
		var have []string
		for _, f := range files {
			if d, n := path.Split(f.rel); d == "workload/" {
				have = append(have, n)
			}
		}
		return nil, fmt.Errorf("plugin %s has no workload %q for its peer guest (its workloads: %s); rebuild it, or fix the experiment's peer in description.json",
			bundle.Name, name, strings.Join(have, ", "))
	}
	w.Argv = append([]string{root + "/" + rel}, args...)
	w.Started = time.Now()
	w.proc, err = lc.Start(ctx, &link.ExecRequest{Argv: w.Argv, Env: append(guestEnv(root), env...), Dir: "/tmp", KillGroup: true},
		link.StartOptions{Stdout: w.out, Stderr: w.stderr})
	if err != nil {
		return nil, fmt.Errorf("starting workload %s of plugin %s in the peer guest: %w", name, bundle.Name, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-w.out.ready:
		w.ReadyAfter = time.Since(w.Started)
		return w, nil
	case <-w.proc.Done():
		how := "its exec stream broke"
		if ex, err := w.proc.Wait(); err == nil {
			how = fmt.Sprintf("it exited with status %d", ex.Code)
		}
		err = fmt.Errorf("workload %s of plugin %s in the peer guest did not get ready: %s before it printed \"ready\"%s", name, bundle.Name, how, w.said())
	case <-timer.C:
		err = fmt.Errorf("workload %s of plugin %s in the peer guest did not print \"ready\" within %v%s", name, bundle.Name, timeout, w.said())
	case <-ctx.Done():
		err = fmt.Errorf("starting workload %s of plugin %s in the peer guest: %w", name, bundle.Name, ctx.Err())
	}
	w.kill()
	return nil, err
}

// said quotes what the workload printed, for an error.
func (w *PeerWorkload) said() string {
	var b strings.Builder
	if s := strings.TrimSpace(w.out.tail.String()); s != "" {
		fmt.Fprintf(&b, "; stdout:\n%s", s)
	}
	if s := strings.TrimSpace(w.stderr.String()); s != "" {
		fmt.Fprintf(&b, "; stderr:\n%s", s)
	}
	return b.String()
}

// Stop ends the workload: SIGTERM, SIGKILL after 2 s, and waits for it. A
// workload that had already ended by itself (it died during the run) is an
// error saying how, with what it printed.
func (w *PeerWorkload) Stop(ctx context.Context) error {
	w.once.Do(func() {
		select {
		case <-w.proc.Done():
			how := "its exec stream broke (did the peer guest die?)"
			if ex, err := w.proc.Wait(); err == nil {
				how = fmt.Sprintf("exit status %d", ex.Code)
			}
			w.err = fmt.Errorf("workload %s in the peer guest ended during the run (%s)%s", w.Name, how, w.said())
			return
		default:
		}
		w.kill()
	})
	return w.err
}

// kill ends the workload's process group and waits (a few seconds at most).
func (w *PeerWorkload) kill() {
	defer w.proc.Close()
	for _, step := range []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{syscall.SIGTERM, 2 * time.Second}, {syscall.SIGKILL, 5 * time.Second}} {
		if w.proc.Signal(int(step.sig)) != nil {
			return // the stream is gone: the agent kills the group
		}
		select {
		case <-w.proc.Done():
			return
		case <-time.After(step.wait):
		}
	}
}

// readyWriter is a workload's stdout: it closes ready at the first line
// that says "ready", and keeps the last few KiB for errors.
type readyWriter struct {
	mu    sync.Mutex
	line  []byte
	ready chan struct{}
	seen  bool
	tail  *tailBuffer
}

func newReadyWriter() *readyWriter {
	return &readyWriter{ready: make(chan struct{}), tail: &tailBuffer{max: 4 << 10}}
}

func (r *readyWriter) Write(b []byte) (int, error) {
	r.tail.Write(b)
	r.mu.Lock()
	defer r.mu.Unlock()
	for p := b; len(p) > 0 && !r.seen; {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(r.line) < 256 { // a ready line is short; drop the rest
				r.line = append(r.line, p...)
			}
			break
		}
		r.line = append(r.line, p[:i]...)
		p = p[i+1:]
		if string(bytes.TrimSpace(r.line)) == "ready" {
			r.seen = true
			close(r.ready)
		}
		r.line = r.line[:0]
	}
	return len(b), nil
}
