package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCache is a fresh, empty cache of the test's own.
func testCache(t *testing.T) Cache {
	t.Helper()
	return Cache(t.TempDir())
}

func TestPutVerify(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	dir := string(cache)
	content := "hello kernel\n"
	sum := sha256.Sum256([]byte(content))
	want := hex.EncodeToString(sum[:])

	src := filepath.Join(t.TempDir(), "f")
	writeTestFile(t, src, content)
	got, err := cache.PutFile(src)
	if err != nil || got != want {
		t.Fatalf("PutFile() = %q, %v; want %q, nil", got, err, want)
	}
	if p := cache.BlobPath(got); p != filepath.Join(dir, "blobs", "sha256", want) {
		t.Errorf("BlobPath() = %q", p)
	}
	data, err := os.ReadFile(cache.BlobPath(got))
	if err != nil || string(data) != content {
		t.Errorf("blob content = %q, %v; want %q", data, err, content)
	}
	// Storing the same content again is harmless.
	if got2, err := cache.PutReader(strings.NewReader(content)); err != nil || got2 != want {
		t.Errorf("PutReader(same) = %q, %v; want %q, nil", got2, err, want)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(filepath.Join(dir, "blobs", "sha256"))
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("blob dir holds %v, want just the blob", names)
	}
	if err := cache.Verify(got); err != nil {
		t.Errorf("Verify(good) = %v", err)
	}

	// Corrupt it: Verify names the blob and says how to recover.
	if err := os.WriteFile(cache.BlobPath(got), []byte("hello kernal\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = cache.Verify(got)
	for _, w := range []string{cache.BlobPath(got), "corrupted", "make setup", "lab image fetch"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Verify(corrupted) = %v, want an error containing %q", err, w)
		}
	}
	os.Remove(cache.BlobPath(got))
	if err := cache.Verify(got); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Verify(missing) = %v, want a 'missing' error", err)
	}
	if err := cache.Verify("../../etc/passwd"); err == nil {
		t.Errorf("Verify(bad digest) = nil, want an error")
	}
}

func TestWriteAtomicKeepsOldOnFailure(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.json")
	if err := WriteFileAtomic(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := writeAtomic(p, 0o644, func(w io.Writer) error {
		w.Write([]byte("half"))
		return os.ErrInvalid
	})
	if err == nil {
		t.Fatal("writeAtomic(failing fill) = nil, want the error")
	}
	if data, _ := os.ReadFile(p); string(data) != "old" {
		t.Errorf("after a failed write the file holds %q, want %q", data, "old")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("dir holds %d entries after a failed write, want 1", len(entries))
	}
}

func TestCacheLock(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	ctx := context.Background()
	unlock, err := cache.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to open files, so a second open in this process
	// contends just as another process would.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := cache.Lock(short); err == nil || !strings.Contains(err.Error(), "another lab") {
		t.Errorf("Lock(while held) = %v, want a timeout naming the other holder", err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := cache.Lock(ctx)
		if err == nil {
			u()
		}
		got <- err
	}()
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Errorf("Lock(after release) = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("Lock did not get the lock after it was released")
	}
}
