package images

import (
	"context"
	"debug/elf"
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

// Busybox is a cached static busybox for one guest arch, so users have a
// shell in the guest.
type Busybox struct {
	Arch string `json:"arch"`
	// Package and Version are the Debian package it came from.
	Package string `json:"package"`
	Version string `json:"version"`
	// SHA256 names the binary's blob in the cache.
	SHA256 string `json:"sha256"`
}

var debArches = map[string]string{"i386": "i386", "x86_64": "amd64"}

var elfMachines = map[string]elf.Machine{"i386": elf.EM_386, "x86_64": elf.EM_X86_64}

func (c Cache) busyboxManifest(arch string) string {
	return filepath.Join(string(c), "busybox", arch+".json")
}

// LoadBusybox reads the busybox manifest for arch and verifies the binary.
func (c Cache) LoadBusybox(arch string) (*Busybox, error) {
	if !slices.Contains(Arches, arch) {
		return nil, fmt.Errorf("busybox: arch %q is not one of %s", arch, strings.Join(Arches, ", "))
	}
	data, err := os.ReadFile(c.busyboxManifest(arch))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("busybox for %s not in cache; run 'make setup' or 'lab image fetch'", arch)
	}
	if err != nil {
		return nil, fmt.Errorf("busybox %s: %w", arch, err)
	}
	var b Busybox
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("busybox %s: manifest %s: %w; run 'lab image fetch' again", arch, c.busyboxManifest(arch), err)
	}
	if b.Arch != arch {
		return nil, fmt.Errorf("busybox %s: manifest %s is for %q", arch, c.busyboxManifest(arch), b.Arch)
	}
	if err := c.Verify(b.SHA256); err != nil {
		return nil, fmt.Errorf("busybox %s: %w", arch, err)
	}
	return &b, nil
}

// Fetch makes the kernels ids (every one KernelIDs lists if none), and
// busybox and the shared libc for each of their arches, available in the
// cache (FetchKernel, FetchBusybox, FetchLibc), calling kernel and busybox
// with each as it is ready.
func (c Cache) Fetch(ctx context.Context, ids []string, log io.Writer, kernel func(*Kernel), busybox func(arch string, b *Busybox)) error {
	if len(ids) == 0 {
		ids = KernelIDs()
	}
	arches := map[string]bool{}
	for _, id := range ids {
		k, err := c.FetchKernel(ctx, id, log)
		if err != nil {
			return err
		}
		arches[k.Arch] = true
		kernel(k)
	}
	for _, arch := range Arches {
		if !arches[arch] {
			continue
		}
		b, err := c.FetchBusybox(ctx, arch, log)
		if err != nil {
			return err
		}
		busybox(arch, b)
		if _, err := c.FetchLibc(ctx, arch, log); err != nil {
			return err
		}
	}
	return nil
}

// FetchBusybox makes Debian's static busybox for arch available in the
// cache (downloading busybox-static:<debian arch>, never installing it) and
// returns it. A cached, verified copy is returned without touching apt.
func (c Cache) FetchBusybox(ctx context.Context, arch string, log io.Writer) (*Busybox, error) {
	debArch, ok := debArches[arch]
	if !ok {
		return nil, fmt.Errorf("busybox: arch %q is not one of %s", arch, strings.Join(Arches, ", "))
	}
	if b, err := c.LoadBusybox(arch); err == nil {
		return b, nil
	}
	if log == nil {
		log = io.Discard
	}
	unlock, err := c.Lock(ctx)
	if err != nil {
		return nil, fmt.Errorf("busybox %s: %w", arch, err)
	}
	defer unlock()
	if b, err := c.LoadBusybox(arch); err == nil {
		return b, nil
	}

	tmp, err := os.MkdirTemp("", "lab-busybox-")
	if err != nil {
		return nil, fmt.Errorf("busybox %s: %w", arch, err)
	}
	defer os.RemoveAll(tmp)
	b := &Busybox{Arch: arch}
	var root string
	if root, b.Package, b.Version, err = (apt{log: log}).unpackDeb(ctx, "busybox-static", debArch, tmp); err != nil {
		return nil, fmt.Errorf("busybox %s: %w", arch, err)
	}
	bin := ""
	for _, p := range []string{"bin/busybox", "usr/bin/busybox"} {
		if fi, err := os.Stat(filepath.Join(root, p)); err == nil && fi.Mode().IsRegular() {
			bin = filepath.Join(root, p)
			break
		}
	}
	if bin == "" {
		return nil, fmt.Errorf("busybox %s: %s %s has no bin/busybox", arch, b.Package, b.Version)
	}
	if err := checkELF(bin, arch); err != nil {
		return nil, fmt.Errorf("busybox %s: %w", arch, err)
	}
	if b.SHA256, err = c.PutFile(bin); err != nil {
		return nil, fmt.Errorf("busybox %s: %w", arch, err)
	}
	if err := writeJSONAtomic(c.busyboxManifest(arch), b); err != nil {
		return nil, fmt.Errorf("busybox %s: writing manifest: %w", arch, err)
	}
	fmt.Fprintf(log, "busybox %s: %s %s\n", arch, b.Package, b.Version)
	return b, nil
}

// checkELF makes sure a guest binary is built for arch and static (the
// initramfs has no libc).
func checkELF(path, arch string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	if want := elfMachines[arch]; f.Machine != want {
		return fmt.Errorf("%s is built for %v, not %s", path, f.Machine, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; the guest needs a static binary", path)
		}
	}
	return nil
}
