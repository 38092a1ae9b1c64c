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

// testCache points the cache at a fresh temporary directory.
func testCache(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("LAB_CACHE_DIR", dir)
	return dir
}

func TestCacheDir(t *testing.T) {
	tests := []struct {
		labDir, xdg, home string
		want              string
	}{
		{"/tmp/lc", "/xdg", "/home/u", "/tmp/lc"},
		{"", "/xdg", "/home/u", "/xdg/lab"},
		{"", "", "/home/u", "/home/u/.cache/lab"},
		{"", "relative", "/home/u", "/home/u/.cache/lab"},
	}
	for _, tt := range tests {
		t.Setenv("LAB_CACHE_DIR", tt.labDir)
		t.Setenv("XDG_CACHE_HOME", tt.xdg)
		t.Setenv("HOME", tt.home)
		if got := CacheDir(); got != tt.want {
			t.Errorf("CacheDir() with LAB_CACHE_DIR=%q XDG_CACHE_HOME=%q HOME=%q = %q, want %q", tt.labDir, tt.xdg, tt.home, got, tt.want)
		}
	}
}

func TestPutVerify(t *testing.T) {
	dir := testCache(t)
	content := "hello kernel\n"
	sum := sha256.Sum256([]byte(content))
	want := hex.EncodeToString(sum[:])

	src := filepath.Join(t.TempDir(), "f")
	writeTestFile(t, src, content)
	got, err := PutFile(src)
	if err != nil || got != want {
		t.Fatalf("PutFile() = %q, %v; want %q, nil", got, err, want)
	}
	if p := BlobPath(got); p != filepath.Join(dir, "blobs", "sha256", want) {
		t.Errorf("BlobPath() = %q", p)
	}
	data, err := os.ReadFile(BlobPath(got))
	if err != nil || string(data) != content {
		t.Errorf("blob content = %q, %v; want %q", data, err, content)
	}
	// Storing the same content again is harmless.
	if got2, err := PutReader(strings.NewReader(content)); err != nil || got2 != want {
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
	if err := Verify(got); err != nil {
		t.Errorf("Verify(good) = %v", err)
	}

	// Corrupt it: Verify names the blob and says how to recover.
	if err := os.WriteFile(BlobPath(got), []byte("hello kernal\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = Verify(got)
	for _, w := range []string{BlobPath(got), "corrupted", "make setup", "lab image fetch"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Verify(corrupted) = %v, want an error containing %q", err, w)
		}
	}
	os.Remove(BlobPath(got))
	if err := Verify(got); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Verify(missing) = %v, want a 'missing' error", err)
	}
	if err := Verify("../../etc/passwd"); err == nil {
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

func TestLockCache(t *testing.T) {
	testCache(t)
	ctx := context.Background()
	unlock, err := LockCache(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to open files, so a second open in this process
	// contends just as another process would.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := LockCache(short); err == nil || !strings.Contains(err.Error(), "another lab") {
		t.Errorf("LockCache(while held) = %v, want a timeout naming the other holder", err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := LockCache(ctx)
		if err == nil {
			u()
		}
		got <- err
	}()
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Errorf("LockCache(after release) = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("LockCache did not get the lock after it was released")
	}
}
