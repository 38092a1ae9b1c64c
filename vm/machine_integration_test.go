package vm

// Integration tests of Machine in this process: a real QEMU guest under
// TCG, booted with Start as the supervisor does. They hold the
// cross-process boot lock; `go test -short` skips them.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lab/images"
	"lab/internal/labtest"
	"lab/vm/link"
)

func itProfile(t testing.TB, name string) images.Profile {
	t.Helper()
	p, err := images.Lookup("", name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// itRoot is a private state root for an integration test.
func itRoot(t testing.TB) Root { return Root(labtest.TempRoot(t)) }

// itMachine boots profile as a Machine in this process. snapshot is the
// Config's snapshot file ("" for a cold boot that saves nothing).
func itMachine(t testing.TB, profile, snapshot string) *Machine {
	t.Helper()
	p := itProfile(t, profile)
	labtest.RequireBoot(t, p)
	labtest.LockBoots(t)
	root := itRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	name := "itm"
	cfg, err := Prepare(ctx, UpOptions{Root: root, Cache: labtest.Cache(), LibDirs: images.LibDirs(labtest.LibDir()), Name: name, Profile: p, Accel: "tcg", Clock: Clock{Mode: "host"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Snapshot = snapshot
	dir := root.Dir(name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	m, err := Start(ctx, dir, *cfg, StartOptions{Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Kill)
	t.Logf("%s up in %.2fs (%s)", profile, m.Ready.Sub(m.Started).Seconds(), m.Boot)
	return m
}

// TestIntegrationSnapshotPrivate: a booted snapshot holds guest memory, so
// its files and directory are the user's alone.
func TestIntegrationSnapshotPrivate(t *testing.T) {
	snap := filepath.Join(t.TempDir(), "cache", "snapshots", "k.state")
	m := itMachine(t, "celeron-2.4", snap)
	if m.Boot != "cold, snapshot saved" {
		t.Fatalf("boot %q, want cold, snapshot saved", m.Boot)
	}
	for _, c := range []struct {
		path string
		want os.FileMode
	}{
		{filepath.Dir(snap), 0o700},
		{snap, 0o600},
		{snap + ".console", 0o600},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Error(err)
			continue
		}
		if got := fi.Mode().Perm(); got != c.want {
			t.Errorf("%s: mode %v, want %v", c.path, got, c.want)
		}
	}
}

// TestIntegrationSnapshotRestore: a second boot of the configuration
// restores the snapshot the first saved, through the QMP state machine.
func TestIntegrationSnapshotRestore(t *testing.T) {
	snap := filepath.Join(t.TempDir(), "cache", "snapshots", "k.state")
	m := itMachine(t, "celeron-2.4", snap)
	m.Kill()
	cold := m // its cfg has no restore arguments
	for i := 0; i < 3; i++ {
		m = itMachineAgain(t, cold, snap)
		if m.Boot != "restored from snapshot" {
			t.Fatalf("boot %q, want restored from snapshot", m.Boot)
		}
		t.Logf("restored: ready in %.3fs; phases %v", m.Ready.Sub(m.Started).Seconds(), m.Phases)
		m.Kill()
	}

	// A corrupt snapshot: QEMU fails the incoming migration (and exits);
	// the boot goes cold, and says so through the caller's log, not stderr.
	if err := os.Truncate(snap, 4096); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var logged []string
	ctx := testCtx(t, 3*time.Minute)
	cfg := cold.cfg
	cfg.Snapshot = snap
	m, err := Start(ctx, cold.dir, cfg, StartOptions{Log: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}})
	if err != nil {
		mu.Lock()
		t.Fatalf("%v\nlogged: %q", err, logged)
	}
	t.Cleanup(m.Kill)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("corrupt snapshot: boot %q in %.2fs; logged %q", m.Boot, m.Ready.Sub(m.Started).Seconds(), logged)
	if m.Boot != "cold, snapshot saved" {
		t.Errorf("boot from a corrupt snapshot: %q, want cold, snapshot saved", m.Boot)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "restoring the snapshot") || !strings.Contains(logged[0], "booting cold") {
		t.Errorf("logged %q, want one line saying the restore failed and the boot goes cold", logged)
	}
}

// itMachineAgain boots prev's configuration again in prev's directory
// (prev must not be a restored machine: its argv has -incoming).
func itMachineAgain(t testing.TB, prev *Machine, snapshot string) *Machine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := prev.cfg
	cfg.Snapshot = snapshot
	m, err := Start(ctx, prev.dir, cfg, StartOptions{Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Kill)
	return m
}

// TestIntegrationLinkReconnect: when the link's session dies under a live
// guest, a program running over it fails within seconds, and the machine
// reconnects on its own: the next stream (opened while it reconnects) works,
// on a new session.
func TestIntegrationLinkReconnect(t *testing.T) {
	m := itMachine(t, "celeron-2.4", "")
	ctx := testCtx(t, time.Minute)
	if s, up := m.LinkState(); s != 1 || !up {
		t.Fatalf("link state after boot: session %d up %v", s, up)
	}
	var out bytes.Buffer
	p, err := m.Client.Start(ctx, &link.ExecRequest{Argv: []string{"sh", "-c", "echo started; exec sleep 60"}}, link.StartOptions{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		dropped := time.Now()
		if err := m.DropLink(); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			select {
			case <-p.Done():
				_, err := p.Wait()
				t.Logf("in-flight program ended %v after the drop: %v", time.Since(dropped).Round(time.Millisecond), err)
				if err == nil {
					t.Error("the program running over the dropped link reported no error")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the program running over the dropped link still waits 5 s after the drop")
			}
		}
		// At once, while the machine reconnects.
		info, err := m.Client.Info(ctx)
		if err != nil {
			t.Fatalf("after drop %d: %v", i+1, err)
		}
		s, up := m.LinkState()
		t.Logf("drop %d: agent answered again %v later, session %d (guest agent %s)", i+1, time.Since(dropped).Round(time.Millisecond), s, info.AgentVersion)
		if s != i+2 || !up {
			t.Errorf("after drop %d: session %d up %v, want session %d up", i+1, s, up, i+2)
		}
	}
	var after bytes.Buffer
	r, err := m.Client.Start(ctx, &link.ExecRequest{Argv: []string{"sh", "-c", "date +%s; pgrep -x sleep || echo none"}}, link.StartOptions{Stdout: &after})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(after.String())
	if len(lines) < 2 {
		t.Fatalf("guest after the reconnects printed %q", after.String())
	}
	guestNow, err := strconv.ParseInt(lines[0], 10, 64)
	if err != nil || guestNow-time.Now().Unix() > 5 || time.Now().Unix()-guestNow > 5 {
		t.Errorf("guest clock %q after the reconnects, host %d", lines[0], time.Now().Unix())
	}
	t.Logf("console:\n%s", m.ConsoleTail(12))
	if lines[1] != "none" {
		t.Errorf("the program of the dropped session still runs in the guest (pgrep: %v)", lines[1:])
	}
}
