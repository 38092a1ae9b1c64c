package images

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPruneBuilds: the unpacked source and a dead build's objects go, the
// build records and the kernels' blobs stay, and nothing goes while a
// build holds the lock.
func TestPruneBuilds(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	write := func(rel, data string) string {
		p := filepath.Join(string(cache), rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("build/src-0123456789abcdef/tree/Makefile", "12345")
	write("build/src-0123456789abcdef/tree/kernel/fork.c", "123")
	write("build/src-0123456789abcdef/unpacked", "6.1\n")
	write("build/out-fedcba9876543210/kernel/fork.o", "12")
	keep := []string{write("builds/abc.json", "{}"), write("blobs/sha256/abc", "kernel")}

	// A build under way holds the lock: nothing goes.
	lf, err := os.OpenFile(filepath.Join(string(cache), "build", "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	n, b, busy, err := cache.PruneBuilds()
	if err != nil || !busy || n != 0 || b != 0 {
		t.Fatalf("with the build lock held: PruneBuilds = %d, %d, busy %v, %v; want 0, 0, busy, nil", n, b, busy, err)
	}
	if _, err := os.Stat(filepath.Join(string(cache), "build", "src-0123456789abcdef", "tree", "Makefile")); err != nil {
		t.Fatalf("a build under way lost its tree: %v", err)
	}
	lf.Close()

	n, b, busy, err = cache.PruneBuilds()
	if err != nil || busy {
		t.Fatalf("PruneBuilds: busy %v, %v", busy, err)
	}
	if n != 4 || b != 14 {
		t.Errorf("PruneBuilds removed %d files, %d bytes; want 4, 14", n, b)
	}
	for _, d := range []string{"src-0123456789abcdef", "out-fedcba9876543210"} {
		if _, err := os.Stat(filepath.Join(string(cache), "build", d)); !os.IsNotExist(err) {
			t.Errorf("build/%s is still there (%v)", d, err)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("prune removed %s: %v", p, err)
		}
	}
	// An empty cache is not an error.
	if n, _, _, err := testCache(t).PruneBuilds(); err != nil || n != 0 {
		t.Errorf("empty cache: %d, %v", n, err)
	}
}
