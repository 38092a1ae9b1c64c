package main

// A put that cannot fit in the guest's RAM root is refused before anything
// is sent or evicted (issue 22 item 8).

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"lab/vm/link"
)

// fakeFS makes a's filesystem capacity bytes large: free space is capacity
// less the files under root (each inode once), as statfs of a tmpfs of
// that size would say.
func fakeFS(a *agent, root string, capacity int64) {
	a.statfs = func(string) (fsSpace, error) {
		seen := map[uint64]bool{}
		var used int64
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				if seen[uint64(st.Ino)] {
					return nil
				}
				seen[uint64(st.Ino)] = true
			}
			used += (info.Size() + pageSize - 1) / pageSize * pageSize
			return nil
		})
		return fsSpace{dev: 1, free: capacity - used, total: capacity}, nil
	}
}

// TestPutThatCannotFit: a copy larger than the guest's free RAM is refused
// up front, naming the sizes and the way out, and evicts nothing; a copy
// larger than the cache budget that fits is received without evicting the
// cache (it could not stay in it) and is not kept by hash.
func TestPutThatCannotFit(t *testing.T) {
	a := newCacheAgent(t, 350*kib)
	root := filepath.Dir(a.blobDir)
	fakeFS(a, root, 1000*kib)
	l := connect(t, a)
	bundle := func(s string) string { return filepath.Join(a.pluginDir, "p", s) }
	for _, s := range []string{"a", "b", "c"} {
		putBytes(t, l, content(s, 100*kib), bundle(s)+"/bin", 0o755)
	}
	intact := func(when string) {
		t.Helper()
		for _, s := range []string{"a", "b", "c"} {
			if !exists(bundle(s) + "/bin") {
				t.Errorf("%s: bundle %s was evicted", when, s)
			}
		}
	}
	home := filepath.Join(root, "root")

	// 800 KiB into 700 KiB free: refused before a byte is sent.
	big := content("big", 800*kib)
	_, err := l.c.Put(ctxT(t), bytes.NewReader(big), &link.PutRequest{Path: home + "/big", Mode: 0o644, Size: int64(len(big)), SHA256: sum(big)})
	if err == nil {
		t.Fatal("a put of 800 KiB into 700 KiB free succeeded")
	}
	t.Logf("refused: %v", err)
	for _, want := range []string{"does not fit", "800 KiB", "free", "--memory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Put error %q, want it to say %q", err, want)
		}
	}
	intact("after a put that cannot fit")
	if exists(home + "/big") {
		t.Error("the refused file was installed")
	}
	if des, _ := os.ReadDir(a.blobDir); len(des) != 3 {
		t.Errorf("blob dir holds %d entries after the refusal, want the 3 bundles' blobs", len(des))
	}

	// 500 KiB, more than the 350 KiB budget, into 700 KiB free: received
	// once (no blob beside the copy), and the cache stays.
	mid := content("mid", 500*kib)
	if !putBytes(t, l, mid, home+"/mid", 0o640) {
		t.Fatal("the 500 KiB put was not sent")
	}
	intact("after a put larger than the cache budget")
	if got, err := os.ReadFile(home + "/mid"); err != nil || !bytes.Equal(got, mid) {
		t.Errorf("installed %d bytes (%v), want the 500 KiB sent", len(got), err)
	}
	if fi, err := os.Stat(home + "/mid"); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("installed file mode %v (%v), want 0640", fi.Mode().Perm(), err)
	}
	if exists(filepath.Join(a.blobDir, sum(mid))) {
		t.Error("content larger than the cache budget was kept by hash")
	}

	// A cached blob copied to a user path needs room for the copy.
	a.statfs = func(string) (fsSpace, error) { return fsSpace{dev: 1, free: 50 * kib, total: 1000 * kib}, nil }
	_, err = l.c.Put(ctxT(t), bytes.NewReader(content("a", 100*kib)), &link.PutRequest{Path: home + "/a", Mode: 0o755, Size: 100 * kib, SHA256: sum(content("a", 100*kib))})
	if err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("a copy of a cached 100 KiB blob into 50 KiB free: %v, want it refused", err)
	}
	intact("after a copy of a cached blob that cannot fit")
}

// TestStatSpace: the free space of the filesystem a path would be created
// on, from its nearest existing parent.
func TestStatSpace(t *testing.T) {
	dir := t.TempDir()
	s, err := statSpace(filepath.Join(dir, "not", "yet", "file"))
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	if s.dev != uint64(st.Dev) || s.total <= 0 || s.free < 0 || s.free > s.total {
		t.Errorf("statSpace = %+v, want device %d and 0 <= free <= total", s, st.Dev)
	}
}

// TestPutFitsOnceTrimmed: what trimming the cache to its budget frees
// counts: a copy that fits only then goes ahead, one that does not even
// then is refused, saying how much trimming would have freed.
func TestPutFitsOnceTrimmed(t *testing.T) {
	for _, tt := range []struct {
		capacity int64
		fits     bool
	}{{700 * kib, true}, {600 * kib, false}} {
		a := newCacheAgent(t, 350*kib)
		root := filepath.Dir(a.blobDir)
		fakeFS(a, root, tt.capacity)
		l := connect(t, a)
		for _, s := range []string{"a", "b", "c"} {
			putBytes(t, l, content(s, 100*kib), filepath.Join(a.pluginDir, "p", s, "bin"), 0o755)
		}
		// 300 KiB to a user path: the blob and its copy, 600 KiB.
		b := content("user", 300*kib)
		_, err := l.c.Put(ctxT(t), bytes.NewReader(b), &link.PutRequest{Path: filepath.Join(root, "root", "f"), Mode: 0o644, Size: int64(len(b)), SHA256: sum(b)})
		if tt.fits && err != nil {
			t.Errorf("capacity %d KiB: Put = %v, want it to fit once the cache is trimmed", tt.capacity/kib, err)
		}
		if !tt.fits && (err == nil || !strings.Contains(err.Error(), "once the cache is trimmed") || !strings.Contains(err.Error(), "cached copy")) {
			t.Errorf("capacity %d KiB: Put = %v, want it refused, counting the trimmed cache and the cached copy", tt.capacity/kib, err)
		}
	}
}
