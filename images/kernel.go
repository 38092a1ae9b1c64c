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
	"sort"
	"strings"
)

// Module is one kernel module the agent loads at boot.
type Module struct {
	// Name is the module name as the kernel knows it (virtio_pci).
	Name string `json:"name"`
	// Path is the file's path under lib/modules/<release>.
	Path string `json:"path"`
	// SHA256 names the module's blob in the cache.
	SHA256 string `json:"sha256"`
}

// Kernel is a cached kernel image and the modules a guest needs from it.
type Kernel struct {
	// ID is how profiles name the kernel (debian-6.1-686).
	ID string `json:"id"`
	// Arch is the guest architecture it boots (i386, x86_64).
	Arch string `json:"arch"`
	// Package and Version are the exact Debian package it came from;
	// empty for imported kernels.
	Package string `json:"package,omitempty"`
	Version string `json:"version,omitempty"`
	// Source says where it came from: "debian" or "import:<path>".
	Source string `json:"source"`
	// Release is the kernel's `uname -r`.
	Release string `json:"release"`
	// Vmlinuz is the sha256 of the bootable image.
	Vmlinuz string `json:"vmlinuz"`
	// PVH is the sha256 of the uncompressed vmlinux of a kernel lab built
	// with a PVH entry point (CONFIG_PVH): an ELF that QEMU's -kernel
	// enters directly in 32-bit protected mode, with no real-mode setup
	// and nothing to decompress. Empty for other kernels.
	PVH string `json:"pvh,omitempty"`
	// Modules are in load order: every module after its dependencies.
	Modules []Module `json:"modules"`
	// Builtin lists the wanted modules compiled into the kernel.
	Builtin []string `json:"builtin,omitempty"`
	// NetModules are NetModules' files and what they need beyond Modules,
	// in load order: in the initramfs, but not loaded at boot. nil in a
	// manifest written before lab knew them (FetchKernel fetches such a
	// kernel again); empty when the kernel has virtio_net built in or
	// has none.
	NetModules []Module `json:"net_modules"`
	// Config is the sha256 of the full .config of a kernel lab built
	// (`lab image build`), and Notable its options that matter most to
	// benchmarks (NotableOptions); empty for other kernels.
	Config  string            `json:"config,omitempty"`
	Notable map[string]string `json:"notable,omitempty"`
	// Link is how the host-guest link reaches this kernel (LinkPort,
	// LinkHVC, LinkUART); "" is LinkPort.
	Link string `json:"link,omitempty"`
}

// Links: the device the host-guest link runs over.
const (
	// LinkPort is a virtio-serial port named link.PortName (multiport
	// virtio consoles: Linux 2.6.35 and later).
	LinkPort = "port"
	// LinkHVC is the virtio console's single port, /dev/hvc0: 2.6.32's
	// virtio_console has no named ports.
	LinkHVC = "hvc"
	// LinkUART is the second 16550 UART, /dev/ttyS1.
	LinkUART = "uart"
)

// LinkOf is the link kernel k takes.
func (k *Kernel) LinkOf() string {
	if k.Link == "" {
		return LinkPort
	}
	return k.Link
}

// Boot entries: how QEMU starts a kernel.
const (
	EntryBzImage = "bzimage" // the compressed image through the Linux boot protocol
	EntryPVH     = "pvh"     // the uncompressed vmlinux through its PVH entry
)

// BootImage is the image a boot of profile p hands QEMU and how it is
// entered: the vmlinux through its PVH entry where the kernel has one,
// which is the quicker boot, else the bzImage. bzImage asks for the
// bzImage anyway, and so does an fb console: the PVH entry skips the
// real-mode setup, which is what sets the VESA mode vga= asks for.
func (k *Kernel) BootImage(p Profile, bzImage bool) (sha256, entry string) {
	if k.PVH != "" && !bzImage && p.Console != "fb" {
		return k.PVH, EntryPVH
	}
	return k.Vmlinuz, EntryBzImage
}

// GuestModules are the modules the agent needs (the link runs over
// virtio-serial, entropy comes from virtio-rng), plus whatever they depend
// on. Names missing from a kernel are skipped: built in, or not split out
// in that version.
var GuestModules = []string{
	"virtio", "virtio_ring", "virtio_pci", "virtio_pci_modern_dev",
	"virtio_pci_legacy_dev", "virtio_console", "virtio_rng",
}

// NetModules drive the NIC a guest gets when a run joins it to a peer
// guest (vm/nic.go): virtio-net, with its dependencies (net_failover,
// failover). They are not loaded at boot, so that a run without a peer
// sees the same machine as before; the host loads them when it attaches
// the NIC and unloads them when it takes it away.
var NetModules = []string{"virtio_net"}

type kernelSource struct {
	Arch    string // guest arch
	DebArch string // Debian architecture
	Meta    string // metapackage to resolve
	Prefix  string // what the versioned package's name starts with
}

var kernelSources = map[string]kernelSource{
	"debian-6.1-686":   {Arch: "i386", DebArch: "i386", Meta: "linux-image-686:i386", Prefix: "linux-image-6.1."},
	"debian-6.1-amd64": {Arch: "x86_64", DebArch: "amd64", Meta: "linux-image-amd64", Prefix: "linux-image-6.1."},
}

// KernelIDs lists the kernels FetchKernel knows how to get.
func KernelIDs() []string {
	ids := make([]string, 0, len(kernelSources))
	for id := range kernelSources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// kernelIDs lists the kernels with a manifest in the cache (fetched,
// imported or built), sorted.
func (c Cache) kernelIDs() []string {
	m, _ := filepath.Glob(filepath.Join(string(c), "kernels", "*.json"))
	var ids []string
	for _, p := range m {
		if id := strings.TrimSuffix(filepath.Base(p), ".json"); idRE.MatchString(id) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func (c Cache) kernelManifest(id string) string {
	return filepath.Join(string(c), "kernels", id+".json")
}

// LoadKernel reads a kernel's manifest from the cache and verifies every
// blob it names.
func (c Cache) LoadKernel(id string) (*Kernel, error) {
	if !idRE.MatchString(id) {
		return nil, fmt.Errorf("kernel %q: not a kernel id", id)
	}
	k, err := c.readKernel(id)
	if errors.Is(err, fs.ErrNotExist) {
		if _, ok := kernelSources[id]; ok {
			return nil, fmt.Errorf("kernel %s not in cache; run 'make setup' or 'lab image fetch %s'", id, id)
		}
		if _, ok := Recipes[id]; ok {
			return nil, fmt.Errorf("kernel %s not in cache; run 'make setup-all' or 'lab image build %s' (minutes, once)", id, id)
		}
		return nil, fmt.Errorf("kernel %s not in cache; import it with 'lab image import' (lab can fetch %s)", id, strings.Join(KernelIDs(), ", "))
	}
	if err != nil {
		return nil, err
	}
	if k.ID != id {
		return nil, fmt.Errorf("kernel %s: manifest %s is for %q", id, c.kernelManifest(id), k.ID)
	}
	if k.PVH != "" {
		if err := c.Verify(k.PVH); err != nil {
			return nil, fmt.Errorf("kernel %s: its vmlinux: %w", id, err)
		}
	}
	if err := c.Verify(k.Vmlinuz); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	for _, m := range slices.Concat(k.Modules, k.NetModules) {
		if err := c.Verify(m.SHA256); err != nil {
			return nil, fmt.Errorf("kernel %s: module %s: %w", id, m.Name, err)
		}
	}
	return k, nil
}

// readKernel reads kernel id's manifest without verifying the blobs it
// names (LoadKernel does; RemoveKernel must not need them).
func (c Cache) readKernel(id string) (*Kernel, error) {
	data, err := os.ReadFile(c.kernelManifest(id))
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	var k Kernel
	if err := json.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("kernel %s: manifest %s: %w; run 'lab image fetch %s' again", id, c.kernelManifest(id), err, id)
	}
	return &k, nil
}

// FetchKernel makes kernel id available in the cache and returns it. If it
// is already there and verifies, apt is not touched, unless its manifest
// predates NetModules (the package is fetched again for them). Otherwise the
// versioned Debian package is resolved, downloaded (not installed),
// unpacked, and its image and guest modules stored. Progress goes to log.
func (c Cache) FetchKernel(ctx context.Context, id string, log io.Writer) (*Kernel, error) {
	src, ok := kernelSources[id]
	if !ok {
		return nil, fmt.Errorf("kernel %q: lab cannot fetch it (known: %s); use 'lab image import' for your own", id, strings.Join(KernelIDs(), ", "))
	}
	if k, err := c.LoadKernel(id); err == nil && k.NetModules != nil {
		return k, nil
	}
	if log == nil {
		log = io.Discard
	}
	unlock, err := c.Lock(ctx)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	defer unlock()
	if k, err := c.LoadKernel(id); err == nil && k.NetModules != nil {
		return k, nil // another process fetched it while we waited
	}

	a := apt{log: log}
	if err := a.ensureForeignArch(ctx, src.DebArch); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	pkg, err := a.resolve(ctx, src.Meta, src.Prefix)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	tmp, err := os.MkdirTemp("", "lab-kernel-")
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	defer os.RemoveAll(tmp)
	deb, err := a.download(ctx, pkg, tmp)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	name, err := a.debField(ctx, deb, "Package")
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	version, err := a.debField(ctx, deb, "Version")
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	root := filepath.Join(tmp, "root")
	fmt.Fprintf(log, "unpacking %s %s ...\n", name, version)
	if err := a.extract(ctx, deb, root); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	vmlinuz, release, err := findVmlinuz(root)
	if err != nil {
		return nil, fmt.Errorf("kernel %s from %s %s: %w", id, name, version, err)
	}
	modDir := ""
	for _, d := range []string{"lib/modules", "usr/lib/modules"} {
		if fi, err := os.Stat(filepath.Join(root, d, release)); err == nil && fi.IsDir() {
			modDir = filepath.Join(root, d, release)
			break
		}
	}
	if modDir == "" {
		return nil, fmt.Errorf("kernel %s from %s %s: no lib/modules/%s in the package", id, name, version, release)
	}
	k := &Kernel{ID: id, Arch: src.Arch, Package: name, Version: version, Source: "debian", Release: release}
	if err := c.storeKernel(k, vmlinuz, modDir, true, log); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	fmt.Fprintf(log, "kernel %s: %s %s (release %s), %d modules, %d network modules\n", id, name, version, release, len(k.Modules), len(k.NetModules))
	return k, nil
}

// ImportKernel stores a user's own kernel image under id. modulesDir is its
// lib/modules/<release> directory; it may be "" for a kernel with virtio
// built in, in which case the release is read from the image header.
func (c Cache) ImportKernel(id, arch, vmlinuzPath, modulesDir string) (*Kernel, error) {
	if !idRE.MatchString(id) {
		return nil, fmt.Errorf("kernel %q: id must match %s", id, idRE)
	}
	if _, ok := kernelSources[id]; ok {
		return nil, fmt.Errorf("kernel %s: that id belongs to a kernel lab fetches; choose another id for your own", id)
	}
	if !slices.Contains(Arches, arch) {
		return nil, fmt.Errorf("kernel %s: arch %q is not one of %s", id, arch, strings.Join(Arches, ", "))
	}
	release, err := bzImageRelease(vmlinuzPath)
	if err != nil && modulesDir == "" {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	if modulesDir != "" {
		fi, err := os.Stat(modulesDir)
		if err != nil {
			return nil, fmt.Errorf("kernel %s: modules: %w", id, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("kernel %s: modules: %s is not a directory (want lib/modules/<release>)", id, modulesDir)
		}
		release = filepath.Base(filepath.Clean(modulesDir))
	}
	abs, err := filepath.Abs(vmlinuzPath)
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	k := &Kernel{ID: id, Arch: arch, Source: "import:" + abs, Release: release}
	if err := c.storeKernel(k, vmlinuzPath, modulesDir, false, io.Discard); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", id, err)
	}
	return k, nil
}

// storeKernel puts k's image and the guest modules found in modDir into the
// cache and writes the manifest last, so a manifest only ever names blobs
// that exist. With needBuiltin, a wanted module must be either a file or
// listed in modules.builtin.
func (c Cache) storeKernel(k *Kernel, vmlinuz, modDir string, needBuiltin bool, log io.Writer) error {
	sha, err := c.PutFile(vmlinuz)
	if err != nil {
		return err
	}
	k.Vmlinuz = sha
	k.Modules, k.NetModules = nil, nil
	if modDir != "" {
		files, builtin, err := resolveModules(modDir, GuestModules)
		if err != nil {
			return err
		}
		for _, want := range GuestModules {
			if slices.Contains(builtin, want) || slices.ContainsFunc(files, func(m Module) bool { return m.Name == want }) {
				continue
			}
			if needBuiltin {
				fmt.Fprintf(log, "module %s: not in %s, skipped\n", want, k.Release)
			}
		}
		for _, m := range files {
			sha, err := c.PutFile(filepath.Join(modDir, m.Path))
			if err != nil {
				return err
			}
			m.SHA256 = sha
			k.Modules = append(k.Modules, m)
		}
		k.Builtin = builtin
		net, netBuiltin, err := resolveModules(modDir, NetModules)
		if err != nil {
			return err
		}
		k.Builtin = append(k.Builtin, netBuiltin...)
		for _, m := range net {
			if slices.ContainsFunc(k.Modules, func(b Module) bool { return b.Name == m.Name }) {
				continue // loaded at boot already (virtio, virtio_ring)
			}
			sha, err := c.PutFile(filepath.Join(modDir, m.Path))
			if err != nil {
				return err
			}
			m.SHA256 = sha
			k.NetModules = append(k.NetModules, m)
		}
	}
	if k.Modules == nil {
		k.Modules = []Module{}
	}
	if k.NetModules == nil {
		k.NetModules = []Module{}
	}
	if err := writeJSONAtomic(c.kernelManifest(k.ID), k); err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	return nil
}

// findVmlinuz finds boot/vmlinuz-<release> in an unpacked kernel package.
func findVmlinuz(root string) (path, release string, err error) {
	m, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
	if len(m) != 1 {
		return "", "", fmt.Errorf("want one boot/vmlinuz-* in the package, found %d", len(m))
	}
	return m[0], strings.TrimPrefix(filepath.Base(m[0]), "vmlinuz-"), nil
}

// moduleName is the kernel's name for a module file: the base name without
// .ko (and a compression suffix), with '-' read as '_' as the kernel does.
func moduleName(file string) (string, bool) {
	base := filepath.Base(file)
	for _, suf := range []string{".ko", ".ko.xz", ".ko.zst", ".ko.gz"} {
		if n, ok := strings.CutSuffix(base, suf); ok {
			return strings.ReplaceAll(n, "-", "_"), true
		}
	}
	return "", false
}

// resolveModules finds the wanted modules under modDir and everything they
// depend on, in load order. Dependencies are read from each module's
// .modinfo section ("depends="), because a kernel package ships no
// modules.dep (depmod writes it at install time, and lab installs nothing).
// Wanted names listed in modules.builtin are returned in builtin; names
// that are neither are left out.
func resolveModules(modDir string, wanted []string) (files []Module, builtin []string, err error) {
	builtinSet := map[string]bool{}
	if data, err := os.ReadFile(filepath.Join(modDir, "modules.builtin")); err == nil {
		for _, line := range strings.Fields(string(data)) {
			if n, ok := moduleName(line); ok {
				builtinSet[n] = true
			}
		}
	}
	index := map[string]string{} // name -> path relative to modDir
	err = filepath.WalkDir(modDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if n, ok := moduleName(p); ok {
			rel, err := filepath.Rel(modDir, p)
			if err != nil {
				return err
			}
			if _, dup := index[n]; !dup {
				index[n] = filepath.ToSlash(rel)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("modules: %w", err)
	}

	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name, from string) error
	visit = func(name, from string) error {
		switch state[name] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("modules: dependency cycle through %s", name)
		}
		rel, ok := index[name]
		if !ok {
			return fmt.Errorf("modules: %s needs %s, which is not in %s", from, name, modDir)
		}
		state[name] = 1
		deps, err := moduleDepends(filepath.Join(modDir, rel))
		if err != nil {
			return err
		}
		for _, d := range deps {
			if builtinSet[d] {
				continue
			}
			if err := visit(d, name); err != nil {
				return err
			}
		}
		state[name] = 2
		files = append(files, Module{Name: name, Path: rel})
		return nil
	}
	for _, w := range wanted {
		switch {
		case builtinSet[w]:
			builtin = append(builtin, w)
		case index[w] != "":
			if err := visit(w, w); err != nil {
				return nil, nil, err
			}
		}
	}
	return files, builtin, nil
}

// moduleDepends reads the depends= entry of a module's .modinfo section.
func moduleDepends(path string) ([]string, error) {
	if !strings.HasSuffix(path, ".ko") {
		return nil, fmt.Errorf("module %s is compressed; lab reads dependencies from plain .ko files only", path)
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", path, err)
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return nil, fmt.Errorf("module %s has no .modinfo section", path)
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", path, err)
	}
	for _, kv := range strings.Split(string(data), "\x00") {
		if v, ok := strings.CutPrefix(kv, "depends="); ok {
			var deps []string
			for _, d := range strings.Split(v, ",") {
				if d = strings.TrimSpace(d); d != "" {
					deps = append(deps, strings.ReplaceAll(d, "-", "_"))
				}
			}
			return deps, nil
		}
	}
	return nil, nil
}

// bzImageRelease reads the kernel version string from an x86 bzImage's
// setup header (the "HdrS" boot protocol): its first word is `uname -r`.
func bzImageRelease(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("kernel image: %w", err)
	}
	defer f.Close()
	hdr := make([]byte, 0x210)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return "", fmt.Errorf("kernel image %s is not an x86 bzImage (too short); give its modules directory so lab knows the release", path)
	}
	if string(hdr[0x202:0x206]) != "HdrS" {
		return "", fmt.Errorf("kernel image %s is not an x86 bzImage (no HdrS header); give its modules directory so lab knows the release", path)
	}
	off := int64(hdr[0x20e]) | int64(hdr[0x20f])<<8
	if off == 0 {
		return "", fmt.Errorf("kernel image %s has no version string; give its modules directory", path)
	}
	buf := make([]byte, 256)
	n, err := f.ReadAt(buf, off+0x200)
	if n == 0 {
		return "", fmt.Errorf("kernel image %s: reading version string: %w", path, err)
	}
	s := string(buf[:n])
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return "", fmt.Errorf("kernel image %s: empty version string", path)
	}
	return fields[0], nil
}

// CachedKernel is a kernel manifest in the cache, and whether what it
// names is there and intact.
type CachedKernel struct {
	*Kernel
	// Status is "ok", "corrupt" (a blob no longer hashes to its name),
	// "incomplete" (a blob is missing) or "unreadable" (the manifest).
	Status string `json:"status"`
	// Problem says what is wrong and what to do; empty when ok.
	Problem string `json:"problem,omitempty"`
}

// Kernels lists every kernel in the cache, verified as LoadKernel
// verifies it, bad ones included: a corrupt kernel is listed as such,
// not left out.
func (c Cache) Kernels() []CachedKernel {
	var out []CachedKernel
	for _, id := range c.kernelIDs() {
		k, err := c.LoadKernel(id)
		if err == nil {
			out = append(out, CachedKernel{Kernel: k, Status: "ok"})
			continue
		}
		ck := CachedKernel{Kernel: &Kernel{ID: id}, Status: "corrupt"}
		if rk, rerr := c.readKernel(id); rerr != nil {
			ck.Status = "unreadable"
		} else {
			ck.Kernel = rk
			if errors.Is(err, fs.ErrNotExist) {
				ck.Status = "incomplete"
			}
		}
		ck.Problem = fmt.Sprintf("%v; %s", err, kernelRemedy(id))
		out = append(out, ck)
	}
	return out
}

// kernelRemedy says how to get a good copy of kernel id again.
func kernelRemedy(id string) string {
	if _, ok := kernelSources[id]; ok {
		return fmt.Sprintf("run 'lab image fetch %s' to fetch it again", id)
	}
	if _, ok := Recipes[id]; ok {
		return fmt.Sprintf("run 'lab image rm %s', then 'lab image build %s'", id, id)
	}
	return fmt.Sprintf("run 'lab image rm %s' and import it again", id)
}

// CheckKernelKnown says why id names no kernel this cache could boot: it
// is none lab fetches, builds or holds already (imported). A profile
// naming it would only fail at `lab up`.
func (c Cache) CheckKernelKnown(id string) error {
	if _, ok := kernelSources[id]; ok {
		return nil
	}
	if _, ok := Recipes[id]; ok {
		return nil
	}
	if slices.Contains(c.kernelIDs(), id) {
		return nil
	}
	recipes := make([]string, 0, len(Recipes))
	for r := range Recipes {
		recipes = append(recipes, r)
	}
	sort.Strings(recipes)
	return fmt.Errorf("kernel: %q is no kernel lab fetches (%s), builds (%s) or holds (imported with `lab image import`, see `lab image list`)",
		id, strings.Join(KernelIDs(), ", "), strings.Join(recipes, ", "))
}
