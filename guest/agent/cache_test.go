package main

// The guest cache's budget and eviction, with the real agent (put,
// install, makeRoom) over a real link session.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"lab/vm/link"
)

// newCacheAgent is a test agent with a plugin dir and a budget.
func newCacheAgent(t *testing.T, budget int64) *agent {
	a := newTestAgent(t)
	a.pluginDir = filepath.Join(filepath.Dir(a.blobDir), "plugins")
	a.cacheBudget = budget
	return a
}

// content is n bytes that differ for each seed.
func content(seed string, n int) []byte {
	return bytes.Repeat([]byte(seed+" "), n/(len(seed)+1)+1)[:n]
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// putBytes pushes b to guest path dst as the plugin runner does and
// reports whether it was sent.
func putBytes(t *testing.T, l *testLink, b []byte, dst string, mode uint32) bool {
	t.Helper()
	sent, err := l.c.Put(ctxT(t), bytes.NewReader(b), &link.PutRequest{Path: dst, Mode: mode, Size: int64(len(b)), SHA256: sum(b)})
	if err != nil {
		t.Fatalf("Put(%s): %v", dst, err)
	}
	// Let mtimes (the order of use) differ even on a coarse clock.
	time.Sleep(5 * time.Millisecond)
	return sent
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

const kib = 1 << 10

// TestCacheEvictsLeastRecentlyUsed: with room for three bundles, a fourth
// evicts the one used longest ago (with its blob), not one used again
// since, and not the bundle the put installs into, even when it is older.
func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	a := newCacheAgent(t, 350*kib)
	l := connect(t, a)
	bundle := func(s string) string { return filepath.Join(a.pluginDir, "p", s) }
	A, B, C, D := content("A", 100*kib), content("B", 100*kib), content("C", 100*kib), content("D", 100*kib)
	for _, c := range []struct {
		b   []byte
		dir string
	}{{A, "a"}, {B, "b"}, {C, "c"}} {
		if !putBytes(t, l, c.b, bundle(c.dir)+"/bin", 0o755) {
			t.Fatalf("first put into %s was not sent", c.dir)
		}
	}
	if got := a.cacheUsage(); got != 300*kib {
		t.Fatalf("cache usage %d KiB after three 100 KiB bundles, want 300 (a bundle's file is a hard link to its blob)", got/kib)
	}
	// a is used again (a run of it): b is now the least recently used.
	if putBytes(t, l, A, bundle("a")+"/bin", 0o755) {
		t.Fatal("second put of a's content was sent; the guest holds it")
	}
	if !putBytes(t, l, D, bundle("d")+"/bin", 0o755) {
		t.Fatal("put of d was not sent")
	}
	for path, want := range map[string]bool{
		bundle("a"): true, filepath.Join(a.blobDir, sum(A)): true,
		bundle("b"): false, filepath.Join(a.blobDir, sum(B)): false,
		bundle("c"): true, filepath.Join(a.blobDir, sum(C)): true,
		bundle("d"): true, filepath.Join(a.blobDir, sum(D)): true,
	} {
		if exists(path) != want {
			t.Errorf("%s exists = %v, want %v", path, !want, want)
		}
	}
	if got := a.cacheUsage(); got > a.cacheBudget {
		t.Errorf("cache usage %d KiB over the %d KiB budget", got/kib, a.cacheBudget/kib)
	}
	// b comes back: sent again, and c (now the oldest) makes room.
	if !putBytes(t, l, B, bundle("b")+"/bin", 0o755) {
		t.Error("put of the evicted b was not sent")
	}
	if exists(bundle("c")) || !exists(bundle("a")) || !exists(bundle("d")) {
		t.Errorf("after b came back: a %v, c %v, d %v; want c evicted only", exists(bundle("a")), exists(bundle("c")), exists(bundle("d")))
	}

	// A bundle being installed is not evicted for its own next file,
	// although it is the least recently used: a is older than d and b.
	E := content("E", 100*kib)
	if !putBytes(t, l, E, bundle("a")+"/workload/e", 0o755) {
		t.Fatal("put of e was not sent")
	}
	if !exists(bundle("a")+"/bin") || !exists(bundle("a")+"/workload/e") {
		t.Errorf("bundle a lost a file while a put installed into it")
	}
	// d was used before b came back: d goes.
	if !exists(bundle("b")) || exists(bundle("d")) {
		t.Errorf("b %v, d %v: want d (used before b) evicted for a's second file", exists(bundle("b")), exists(bundle("d")))
	}
}

// TestCacheBudget: pushing many bundles never leaves the cache over its
// budget, and the newest ones stay.
func TestCacheBudget(t *testing.T) {
	a := newCacheAgent(t, 350*kib)
	l := connect(t, a)
	var dirs []string
	for i := 0; i < 10; i++ {
		s := string(rune('a' + i))
		dir := filepath.Join(a.pluginDir, "p", s)
		putBytes(t, l, content(s, 100*kib), dir+"/bin", 0o755)
		putBytes(t, l, content(s+s, 10*kib), dir+"/workload/w", 0o755)
		dirs = append(dirs, dir)
		if got := a.cacheUsage(); got > a.cacheBudget {
			t.Fatalf("after bundle %d: cache usage %d KiB over the %d KiB budget", i, got/kib, a.cacheBudget/kib)
		}
	}
	for i, dir := range dirs {
		if want := i >= len(dirs)-3; exists(dir) != want {
			t.Errorf("bundle %d exists = %v, want %v (the three newest stay)", i, !want, want)
		}
	}
	// Emptied NAME/ dirs go too; here p/ still holds the newest.
	if !exists(filepath.Join(a.pluginDir, "p")) {
		t.Error("the plugin's dir went with its old builds")
	}
}

// TestCacheKeepsBundleInUse: a bundle whose program runs is not evicted,
// however old; once the program has exited it is.
func TestCacheKeepsBundleInUse(t *testing.T) {
	sleep, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Skip("no /bin/sleep to run from a bundle:", err)
	}
	size := int64(len(sleep))
	// Room for the sleeping bundle and one more of its size.
	a := newCacheAgent(t, 2*size+8*pageSize)
	l := connect(t, a)
	old := filepath.Join(a.pluginDir, "sleeper", "old")
	putBytes(t, l, sleep, old+"/sleeper", 0o755)
	p := start(t, l, &link.ExecRequest{Argv: []string{old + "/sleeper", "30"}, KillGroup: true}, link.StartOptions{})
	deadline := time.Now().Add(5 * time.Second)
	for !contains(runningPaths("/proc"), old+"/sleeper") {
		if time.Now().After(deadline) {
			t.Fatalf("the program from %s does not show in /proc", old)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 4; i++ {
		dir := filepath.Join(a.pluginDir, "other", string(rune('a'+i)))
		putBytes(t, l, content(dir, int(size)), dir+"/bin", 0o755)
		if !exists(old + "/sleeper") {
			t.Fatalf("after %d more bundles: the bundle of a running program was evicted", i+1)
		}
	}
	if exists(filepath.Join(a.pluginDir, "other", "a")) {
		t.Error("other/a (not in use, least recently used) was kept")
	}
	// Its blob went (it frees nothing while the bundle holds the inode).
	if exists(filepath.Join(a.blobDir, sum(sleep))) {
		t.Error("the running bundle's blob was kept; it was the least recently used entry")
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	if _, err := waitExit(t, p, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	putBytes(t, l, content("last", int(size)), filepath.Join(a.pluginDir, "other", "z")+"/bin", 0o755)
	if exists(old) {
		t.Error("the bundle was kept after its program exited")
	}
	if exists(filepath.Join(a.pluginDir, "sleeper")) {
		t.Error("sleeper/ was left empty")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestPutCacheOnly: a put of the blob itself (the host's preload) stores
// the content and installs nothing; a later put of the same content to a
// bundle sends nothing and hard-links the blob, with the mode preloaded.
func TestPutCacheOnly(t *testing.T) {
	a := newCacheAgent(t, 0)
	l := connect(t, a)
	b := content("plugin", 200*kib)
	blob := filepath.Join(a.blobDir, sum(b))
	if !putBytes(t, l, b, blob, 0o755) {
		t.Fatal("preload put was not sent")
	}
	st, err := os.Stat(blob)
	if err != nil || st.Mode().Perm() != 0o755 || st.Size() != int64(len(b)) {
		t.Fatalf("blob after the preload: %v, %v; want %d bytes, mode 755", st, err, len(b))
	}
	ents, _ := os.ReadDir(a.blobDir)
	if len(ents) != 1 {
		t.Errorf("blob dir holds %d entries, want the blob alone (no stray temp or link)", len(ents))
	}
	if exists(a.pluginDir) {
		t.Error("a preload installed something under the plugin dir")
	}
	if putBytes(t, l, b, blob, 0o755) {
		t.Error("a second preload of the same content was sent")
	}
	dst := filepath.Join(a.pluginDir, "p", "s", "p")
	if putBytes(t, l, b, dst, 0o755) {
		t.Fatal("the run's put of preloaded content was sent")
	}
	st2, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(st, st2) {
		t.Error("the installed file is a copy, not a hard link to the preloaded blob")
	}
	got, _ := os.ReadFile(dst)
	if !bytes.Equal(got, b) {
		t.Error("installed content differs from what was preloaded")
	}
}

// TestCacheUnboundedWithoutBudget: a budget of 0 evicts nothing.
func TestCacheUnboundedWithoutBudget(t *testing.T) {
	a := newCacheAgent(t, 0)
	l := connect(t, a)
	for i := 0; i < 5; i++ {
		dir := filepath.Join(a.pluginDir, "p", strings.Repeat("x", i+1))
		putBytes(t, l, content(dir, 100*kib), dir+"/bin", 0o755)
	}
	ents, err := os.ReadDir(filepath.Join(a.pluginDir, "p"))
	if err != nil && !errors.Is(err, os.ErrNotExist) || len(ents) != 5 {
		t.Errorf("%d bundles kept without a budget, want all 5 (%v)", len(ents), err)
	}
}

func TestCacheBudgetFor(t *testing.T) {
	// celeron-2.4: 256 MB, of which the kernel reports ~245 MB.
	if got := cacheBudgetFor(250000); got != 250000*1024/4 {
		t.Errorf("cacheBudgetFor(250000 KiB) = %d, want a quarter", got)
	}
}
