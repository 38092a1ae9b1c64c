package main

// A cached blob changed in the guest is never handed out again: copies to
// user paths do not share storage with the cache, and a blob whose file
// changed since the agent stored it is re-hashed before use.

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCopyDoesNotShareTheCache: `lab cp a.out vm:/root/a.out`, then
// `echo X >> /root/a.out` in the guest, then `lab cp a.out vm:/root/b.out`:
// b.out holds what the host sent, not the changed bytes.
func TestCopyDoesNotShareTheCache(t *testing.T) {
	a := newCacheAgent(t, 0)
	l := connect(t, a)
	root := t.TempDir()
	b := content("a.out", 64*kib)
	first := filepath.Join(root, "a.out")
	if !putBytes(t, l, b, first, 0o755) {
		t.Fatal("the first put was not sent")
	}
	appendTo(t, first, "X\n")
	second := filepath.Join(root, "b.out")
	putBytes(t, l, b, second, 0o755)
	if got, _ := os.ReadFile(second); !bytes.Equal(got, b) {
		t.Errorf("b.out holds %d bytes (the changed a.out?), want the %d the host sent", len(got), len(b))
	}
	st1, _ := os.Stat(first)
	st2, _ := os.Stat(second)
	blob, _ := os.Stat(filepath.Join(a.blobDir, sum(b)))
	if blob != nil && (st1 != nil && os.SameFile(st1, blob) || st2 != nil && os.SameFile(st2, blob)) {
		t.Error("a copied file shares its inode with the cached blob")
	}
}

// TestChangedBlobIsNotUsed: a bundle's files are hard links to their blobs
// (one copy in guest memory), so changing one in the guest changes the
// cached blob. Whatever the change (appending; rewriting in place with the
// size and mtime put back, as `cp -p` of a same-size file does), the next
// put of that content finds the blob changed, sends the content again and
// installs what the host sent.
func TestChangedBlobIsNotUsed(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, path string)
	}{
		{"appended", func(t *testing.T, path string) { appendTo(t, path, "X\n") }},
		{"rewritten with size and mtime kept", func(t *testing.T, path string) {
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte("changed"), 100); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by another file", func(t *testing.T, path string) {
			b, _ := os.ReadFile(path)
			b[100] ^= 0xff
			tmp := path + ".new"
			if err := os.WriteFile(tmp, b, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newCacheAgent(t, 0)
			l := connect(t, a)
			b := content("forktime", 64*kib)
			workload := filepath.Join(a.pluginDir, "forkbench", "s1", "workload", "forktime")
			if !putBytes(t, l, b, workload, 0o755) {
				t.Fatal("the first put was not sent")
			}
			blob := filepath.Join(a.blobDir, sum(b))
			target := workload
			if c.name == "replaced by another file" {
				target = blob // a new inode at the blob's own path
			}
			c.change(t, target)
			// The next run installs the same bundle again: the content is
			// sent. Another build of the plugin with the same workload
			// then installs what was sent.
			for i, dst := range []string{workload, filepath.Join(a.pluginDir, "forkbench", "s2", "workload", "forktime")} {
				if sent := putBytes(t, l, b, dst, 0o755); i == 0 && !sent {
					t.Errorf("put to %s: the changed blob was taken as held", dst)
				}
				if got, _ := os.ReadFile(dst); !bytes.Equal(got, b) {
					t.Errorf("%s differs from what the host sent after the blob was changed", dst)
				}
			}
			if got, _ := os.ReadFile(blob); !bytes.Equal(got, b) {
				t.Error("the blob still holds the changed content")
			}
		})
	}
}

// TestIntactBlobIsNotRehashed: the check of a blob nobody changed is a
// stat, not a hash: a put of held content in a bundle sends nothing.
func TestIntactBlobIsNotRehashed(t *testing.T) {
	a := newCacheAgent(t, 0)
	l := connect(t, a)
	b := content("plugin", 64*kib)
	dst := filepath.Join(a.pluginDir, "p", "s", "bin")
	putBytes(t, l, b, dst, 0o755)
	hashed := a.hashes
	for i := 0; i < 3; i++ {
		if putBytes(t, l, b, dst, 0o755) {
			t.Fatal("a put of held content was sent")
		}
	}
	if a.hashes != hashed {
		t.Errorf("%d blobs re-hashed on puts of an unchanged blob, want 0", a.hashes-hashed)
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
}

// BenchmarkHashBlob is what re-hashing a changed blob costs: a 13 MB file,
// the size of forkbench's i386 bundle. Run it for the guest arch
// (GOARCH=386 GO386=softfloat go test -c) to see the guest's figure.
func BenchmarkHashBlob(b *testing.B) {
	path := filepath.Join(b.TempDir(), "blob")
	if err := os.WriteFile(path, content("blob", 13<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(13 << 20)
	for i := 0; i < b.N; i++ {
		if _, err := hashFile(path); err != nil {
			b.Fatal(err)
		}
	}
}
