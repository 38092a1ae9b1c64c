package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// itWatchedBuffer is a buffer another goroutine writes while the test waits
// for a string to appear in it.
type itWatchedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newWatchedBuffer() *itWatchedBuffer {
	return &itWatchedBuffer{changed: make(chan struct{}, 1)}
}

func (w *itWatchedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.b.Write(p)
	select {
	case w.changed <- struct{}{}:
	default:
	}
	return n, err
}

func (w *itWatchedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// await waits until s was written, or fails t after d.
func (w *itWatchedBuffer) await(t *testing.T, s string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for !strings.Contains(w.String(), s) {
		select {
		case <-w.changed:
		case <-deadline:
			t.Fatalf("%q not written within %v; got %q", s, d, w.String())
		}
	}
}

// TestIntegrationLinkReconnect: the supervisor's link session to a guest
// dies (its connection cut, as a failing link would). A `lab exec` running
// over it fails within seconds saying the link dropped, its program does
// not live on in the guest, and the supervisor reconnects on its own: the
// next `lab exec`, even one started while it reconnects, works.
func TestIntegrationLinkReconnect(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)
	const name = "relink"
	itUp(t, p.Name, name)
	h, err := testRoots(t).vm.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// An exec in flight when the link drops.
	out, errb := newWatchedBuffer(), newWatchedBuffer()
	type result struct {
		code int
		at   time.Time
	}
	done := make(chan result, 1)
	go func() {
		code := run(ctx, []string{"lab", "exec", name, "--", "sh", "-c", "echo started; exec sleep 60"}, getenvFor(t), nil, out, errb)
		done <- result{code, time.Now()}
	}()
	out.await(t, "started", 30*time.Second)
	dropped := time.Now()
	if err := h.DropLink(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		t.Logf("the exec in flight ended %v after the drop: exit %d: %s", r.at.Sub(dropped).Round(time.Millisecond), r.code, strings.TrimSpace(errb.String()))
		if r.code == 0 {
			t.Errorf("the exec in flight exited 0 after its link dropped")
		}
		if want := "link to vm " + name + " dropped"; !strings.Contains(errb.String(), want) {
			t.Errorf("the exec in flight says %q; want it to say %q", errb.String(), want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the exec in flight still runs 5 s after its link dropped (stderr %q)", errb.String())
	}

	// Right away, while the supervisor reconnects.
	r := itMust(t, itCallTimeout, nil, "exec", name, "--", "echo", "back")
	if r.stdout != "back\n" {
		t.Errorf("exec after the drop printed %q", r.stdout)
	}
	t.Logf("exec after the drop worked %v after it", time.Since(dropped).Round(time.Millisecond))

	// A second drop with nothing in flight, and an exec at once.
	dropped = time.Now()
	if err := h.DropLink(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := h.LinkState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("link right after the second drop: session %d up %v", st.Session, st.Up)
	r = itMust(t, itCallTimeout, nil, "exec", name, "--", "sh", "-c", "pgrep -x sleep || echo none")
	t.Logf("exec after the second drop worked %v after it", time.Since(dropped).Round(time.Millisecond))
	if strings.TrimSpace(r.stdout) != "none" {
		t.Errorf("the program of the dropped exec still runs in the guest: pgrep -x sleep: %q", r.stdout)
	}
	if st, err := h.LinkState(ctx); err != nil || st.Session != 3 || !st.Up {
		t.Errorf("link after two drops: %+v, %v; want session 3, up", st, err)
	}
	itMust(t, itCallTimeout, nil, "down", name)
}
