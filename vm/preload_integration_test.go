package vm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lab/images"
	"lab/internal/labtest"
	"lab/vm/link"
)

// itPreloadMachine boots celeron-2.4 cold with a snapshot file to save and
// preload as its preload list, logging what the machine says into logged.
func itPreloadMachine(t *testing.T, snap string, preload []PreloadFile, logged *[]string, mu *sync.Mutex) *Machine {
	t.Helper()
	p := itProfile(t, "celeron-2.4")
	labtest.RequireBoot(t, p)
	labtest.LockBoots(t)
	root := itRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg, err := Prepare(ctx, UpOptions{Root: root, Cache: labtest.Cache(), LibDirs: images.LibDirs(labtest.LibDir()), Name: "itp", Profile: p, Accel: "tcg", Clock: Clock{Mode: "host"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Snapshot, cfg.Preload = snap, preload
	dir := root.Dir("itp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	m, err := Start(ctx, dir, *cfg, StartOptions{Log: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		*logged = append(*logged, fmt.Sprintf(format, args...))
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Kill)
	t.Logf("up in %.2fs (%s); phases %v", m.Ready.Sub(m.Started).Seconds(), m.Boot, m.Phases)
	return m
}

// TestIntegrationPreloadSaved: the preloaded files are in the snapshot's
// guest cache (a put of them to any path sends nothing after a restore);
// the agent waited for a host again before the save.
func TestIntegrationPreloadSaved(t *testing.T) {
	dir := t.TempDir()
	content := bytes.Repeat([]byte("preloaded "), 100000)
	src := filepath.Join(dir, "blob")
	if err := os.WriteFile(src, content, 0o755); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(content)
	sum := hex.EncodeToString(h[:])
	snap := filepath.Join(dir, "cache", "snapshots", "k.state")
	var mu sync.Mutex
	var logged []string
	m := itPreloadMachine(t, snap, []PreloadFile{{Path: src, SHA256: sum, Mode: 0o755}}, &logged, &mu)
	if m.Boot != "cold, snapshot saved" {
		mu.Lock()
		t.Fatalf("boot %q, want cold, snapshot saved; logged %q", m.Boot, logged)
	}
	console, _ := os.ReadFile(snap + ".console")
	if n := strings.Count(string(console), readyMarker); n != 2 {
		t.Errorf("the saved console shows the ready marker %d times, want 2 (first host, then after the preload):\n%s", n, console)
	}
	cold := m
	m.Kill()
	m = itMachineAgain(t, cold, snap)
	if m.Boot != "restored from snapshot" {
		t.Fatalf("boot %q, want restored from snapshot", m.Boot)
	}
	ctx := testCtx(t, time.Minute)
	sent, err := m.Client.Put(ctx, bytes.NewReader(content), &link.PutRequest{Path: "/root/p", Mode: 0o755, Size: int64(len(content)), SHA256: sum})
	if err != nil || sent {
		t.Errorf("put of the preloaded content after a restore = %v, %v; want not sent", sent, err)
	}
}

// TestIntegrationPreloadFailsNoSnapshot: a preload that fails (the host
// file changed since the list was made) saves no snapshot, since its key
// promises the files, and the boot goes on cold.
func TestIntegrationPreloadFailsNoSnapshot(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "blob")
	if err := os.WriteFile(src, []byte("rebuilt since"), 0o755); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, "cache", "snapshots", "k.state")
	var mu sync.Mutex
	var logged []string
	m := itPreloadMachine(t, snap, []PreloadFile{{Path: src, SHA256: strings.Repeat("ab", 32), Mode: 0o755}}, &logged, &mu)
	mu.Lock()
	defer mu.Unlock()
	if m.Boot != "cold" {
		t.Errorf("boot %q, want cold (nothing saved)", m.Boot)
	}
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Errorf("snapshot %s saved after a failed preload: %v", snap, err)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "changed since") {
		t.Errorf("logged %q, want one line saying the preload file changed", logged)
	}
	if _, err := m.Client.Info(testCtx(t, time.Minute)); err != nil {
		t.Errorf("the machine does not answer after a failed preload: %v", err)
	}
}
