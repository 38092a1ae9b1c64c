package images

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Libc is Debian's shared C library for one guest arch, cached so that a
// workload built as the sources built theirs (`gcc -o fork fork.c`:
// dynamically linked) runs in the guest: its dynamic loader and libc.so.6
// at the paths Debian puts them, which the initramfs then holds.
type Libc struct {
	Arch string `json:"arch"`
	// Package and Version are the Debian package they came from.
	Package string `json:"package"`
	Version string `json:"version"`
	// Files are the guest paths and blobs, sorted by path.
	Files []GuestFile `json:"files"`
}

// GuestFile is a file the initramfs holds at Path (no leading slash),
// whose content is the blob SHA256.
type GuestFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// libcFiles are the files of libc6 a dynamically linked C program needs,
// by arch: the loader its PT_INTERP names, and the libc it finds in the
// loader's default directories, with libpthread.so.0, which -pthread
// links (glibc 2.34 and later hold the threads in libc.so.6; it is a
// stub).
var libcFiles = map[string][]string{
	"i386":   {"lib/ld-linux.so.2", "lib/i386-linux-gnu/libc.so.6", "lib/i386-linux-gnu/libpthread.so.0"},
	"x86_64": {"lib64/ld-linux-x86-64.so.2", "lib/x86_64-linux-gnu/libc.so.6", "lib/x86_64-linux-gnu/libpthread.so.0"},
}

func (c Cache) libcManifest(arch string) string {
	return filepath.Join(string(c), "libc", arch+".json")
}

// LoadLibc reads the libc manifest for arch and verifies its files; an
// error wrapping fs.ErrNotExist if it was never fetched.
func (c Cache) LoadLibc(arch string) (*Libc, error) {
	data, err := os.ReadFile(c.libcManifest(arch))
	if err != nil {
		return nil, fmt.Errorf("shared libc for %s: %w", arch, err)
	}
	var l Libc
	if err := json.Unmarshal(data, &l); err != nil {
		return nil, fmt.Errorf("shared libc %s: manifest %s: %w; run 'lab image fetch' again", arch, c.libcManifest(arch), err)
	}
	if l.Arch != arch || !slices.EqualFunc(l.Files, libcFiles[arch], func(f GuestFile, p string) bool { return f.Path == p }) {
		return nil, fmt.Errorf("shared libc %s: manifest %s is not lab's for %s; run 'lab image fetch' again", arch, c.libcManifest(arch), arch)
	}
	for _, f := range l.Files {
		if err := c.Verify(f.SHA256); err != nil {
			return nil, fmt.Errorf("shared libc %s: %s: %w", arch, f.Path, err)
		}
	}
	return &l, nil
}

// FetchLibc makes Debian's libc6 for arch available in the cache
// (downloading libc6:<debian arch>, never installing it) and returns it.
// A cached, verified copy is returned without touching apt.
func (c Cache) FetchLibc(ctx context.Context, arch string, log io.Writer) (*Libc, error) {
	debArch, ok := debArches[arch]
	if !ok {
		return nil, fmt.Errorf("shared libc: arch %q is not one of %s", arch, strings.Join(Arches, ", "))
	}
	if l, err := c.LoadLibc(arch); err == nil {
		return l, nil
	}
	if log == nil {
		log = io.Discard
	}
	unlock, err := c.Lock(ctx)
	if err != nil {
		return nil, fmt.Errorf("shared libc %s: %w", arch, err)
	}
	defer unlock()
	if l, err := c.LoadLibc(arch); err == nil {
		return l, nil
	}
	tmp, err := os.MkdirTemp("", "lab-libc-")
	if err != nil {
		return nil, fmt.Errorf("shared libc %s: %w", arch, err)
	}
	defer os.RemoveAll(tmp)
	l := &Libc{Arch: arch}
	var root string
	if root, l.Package, l.Version, err = (apt{log: log}).unpackDeb(ctx, "libc6", debArch, tmp); err != nil {
		return nil, fmt.Errorf("shared libc %s: %w", arch, err)
	}
	for _, p := range libcFiles[arch] {
		// The loader's path is a symlink into the multiarch directory:
		// the guest gets the file itself.
		real, err := resolveIn(root, p)
		if err != nil {
			return nil, fmt.Errorf("shared libc %s: %s %s: %s: %w", arch, l.Package, l.Version, p, err)
		}
		sha, err := c.PutFile(real)
		if err != nil {
			return nil, fmt.Errorf("shared libc %s: %w", arch, err)
		}
		l.Files = append(l.Files, GuestFile{Path: p, SHA256: sha})
	}
	if err := writeJSONAtomic(c.libcManifest(arch), l); err != nil {
		return nil, fmt.Errorf("shared libc %s: writing manifest: %w", arch, err)
	}
	fmt.Fprintf(log, "shared libc %s: %s %s\n", arch, l.Package, l.Version)
	return l, nil
}

// resolveIn is the regular file path p names inside the tree root,
// following symlinks as the guest would: an absolute target is root's.
func resolveIn(root, p string) (string, error) {
	for range 10 {
		full := filepath.Join(root, p)
		fi, err := os.Lstat(full)
		if err != nil {
			return "", err
		}
		if fi.Mode().IsRegular() {
			return full, nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return "", fmt.Errorf("%s is not a regular file", p)
		}
		target, err := os.Readlink(full)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			p = filepath.Clean(target)
		} else {
			p = filepath.Join(filepath.Dir(p), target)
		}
		if !fs.ValidPath(strings.TrimPrefix(p, "/")) {
			return "", fmt.Errorf("links out of the package, to %s", target)
		}
		p = strings.TrimPrefix(p, "/")
	}
	return "", fmt.Errorf("%s: too many links", p)
}

// guestLibc is arch's cached libc for the initramfs, nil when it was
// never fetched (the guest then runs static workloads only, and a
// dynamically linked one says what to fetch).
func (c Cache) guestLibc(arch string) (*Libc, error) {
	l, err := c.LoadLibc(arch)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return l, err
}
