package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
)

// The cache is laid out as
//
//	blobs/sha256/<hex>       content-addressed files (kernels, modules, busybox)
//	kernels/<id>.json        kernel manifests
//	busybox/<arch>.json      busybox manifests
//	initramfs/<key>.cpio     assembled initramfs images, keyed by their inputs
//	lock                     flock(2) serialising fetches across processes
//
// Every file is written to a temporary file in its final directory, synced,
// then renamed, so a reader never sees half a file and a crash leaves at
// worst a stray temporary file.

// Cache is lab's cache: the directory laid out as above. The CLI finds it
// ($LAB_CACHE_DIR, else $XDG_CACHE_HOME/lab, else ~/.cache/lab) and hands
// it down; this package reads no environment, so tests each use their own.
// The empty Cache is the working directory: every caller names one.
type Cache string

// DefaultCache is where lab's cache is for an environment read through
// getenv (the CLI passes os.Getenv; this package reads none itself):
// $LAB_CACHE_DIR, else $XDG_CACHE_HOME/lab (absolute only), else
// $HOME/.cache/lab, else $TMPDIR (or /tmp)/lab-cache. The CLI and the
// integration tests find the kernels through this one function.
func DefaultCache(getenv func(string) string) Cache {
	if d := getenv("LAB_CACHE_DIR"); d != "" {
		return Cache(d)
	}
	if d := getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return Cache(filepath.Join(d, "lab"))
	}
	if home := getenv("HOME"); home != "" {
		return Cache(filepath.Join(home, ".cache", "lab"))
	}
	tmp := getenv("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	return Cache(filepath.Join(tmp, "lab-cache"))
}

var shaRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// BlobPath is where the blob with this sha256 (lowercase hex) lives. It does
// not check that the blob exists.
func (c Cache) BlobPath(sha string) string {
	return filepath.Join(string(c), "blobs", "sha256", sha)
}

// PutFile copies the file at src into the cache and returns its sha256.
func (c Cache) PutFile(src string) (string, error) {
	f, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	defer f.Close()
	sha, err := c.PutReader(f)
	if err != nil {
		return "", fmt.Errorf("cache: storing %s: %w", src, err)
	}
	return sha, nil
}

// PutReader stores everything r yields as a blob and returns its sha256.
// Storing a blob that is already present is cheap and harmless.
func (c Cache) PutReader(r io.Reader) (string, error) {
	dir := filepath.Join(string(c), "blobs", "sha256")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), r); err != nil {
		tmp.Close()
		return "", fmt.Errorf("cache: writing blob: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	sha := hex.EncodeToString(h.Sum(nil))
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), c.BlobPath(sha)); err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	return sha, syncDir(dir)
}

// Verify re-hashes a blob and fails if it is missing or its content no
// longer matches its name.
func (c Cache) Verify(sha string) error {
	if !shaRE.MatchString(sha) {
		return fmt.Errorf("cache: %q is not a sha256 digest", sha)
	}
	p := c.BlobPath(sha)
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cache: blob %s is missing; run 'make setup' or 'lab image fetch' to fetch it again: %w", p, err)
	}
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("cache: reading blob %s: %w", p, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		return fmt.Errorf("cache: blob %s is corrupted (content hashes to %s); delete it and run 'make setup' or 'lab image fetch'", p, got)
	}
	return nil
}

// WriteFileAtomic writes data to path through a synced temporary file in
// the same directory and a rename.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return writeAtomic(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeAtomic is WriteFileAtomic for content produced by a function.
func writeAtomic(path string, perm os.FileMode, fill func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := fill(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), perm); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// writeJSONAtomic stores v as indented JSON.
func writeJSONAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(data, '\n'), 0o644)
}

// Lock takes the cache-wide lock that serialises fetches between
// processes (two `make setup` runs, parallel test binaries). It waits until
// the lock is free or ctx ends; call the returned function to release it.
func (c Cache) Lock(ctx context.Context) (unlock func(), err error) {
	return lockFile(ctx, filepath.Join(string(c), "lock"), "another lab or make setup is fetching")
}

// tryLockFile takes an exclusive flock(2) on path if it is free: unlock
// is nil when someone else holds it.
func tryLockFile(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, nil
	}
	return func() { f.Close() }, nil
}

// lockFile takes an exclusive flock(2) on path, waiting until it is free
// or ctx ends; who says who may hold it, for the error.
func lockFile(ctx context.Context, path, who string) (unlock func(), err error) {
	if unlock, err := tryLockFile(path); err != nil || unlock != nil {
		return unlock, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	// Someone else holds it: block in flock(2) on a goroutine so ctx can
	// still cancel the wait. If we give up first, the goroutine releases
	// the lock as soon as it gets it.
	got := make(chan error) // unbuffered: a send means the waiter took the lock
	abandoned := make(chan struct{})
	go func() {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		select {
		case got <- err:
		case <-abandoned:
			f.Close()
		}
	}()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("cache: locking %s: %w", path, err)
		}
		return func() { f.Close() }, nil
	case <-ctx.Done():
		close(abandoned)
		return nil, fmt.Errorf("cache: waiting for %s (%s): %w", path, who, ctx.Err())
	}
}
