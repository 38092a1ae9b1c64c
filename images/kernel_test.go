package images

import (
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cavaliergopher/cpio"
)

// fakeBzImage writes a file with just enough of an x86 boot header for
// bzImageRelease.
func fakeBzImage(t *testing.T, version string) string {
	t.Helper()
	img := make([]byte, 0x600)
	copy(img[0x202:], "HdrS")
	off := 0x300 // version string at off+0x200
	img[0x20e], img[0x20f] = byte(off), byte(off>>8)
	copy(img[off+0x200:], version+"\x00")
	p := filepath.Join(t.TempDir(), "vmlinuz")
	if err := os.WriteFile(p, img, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadKernelMissing(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	_, err := cache.LoadKernel("debian-6.1-686")
	want := "kernel debian-6.1-686 not in cache; run 'make setup' or 'lab image fetch debian-6.1-686'"
	if err == nil || err.Error() != want {
		t.Errorf("LoadKernel() = %v, want %q", err, want)
	}
	if _, err := cache.LoadKernel("mine"); err == nil || !strings.Contains(err.Error(), "lab image import") {
		t.Errorf("LoadKernel(unknown) = %v, want a hint to import", err)
	}
	if _, err := cache.LoadBusybox("i386"); err == nil || !strings.Contains(err.Error(), "make setup") {
		t.Errorf("LoadBusybox() = %v, want a hint to run make setup", err)
	}
	if _, err := cache.FetchKernel(context.Background(), "debian-2.4", nil); err == nil || !strings.Contains(err.Error(), "debian-6.1-686") {
		t.Errorf("FetchKernel(unknown id) = %v, want an error listing the known ids", err)
	}
}

func TestImportKernel(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	img := fakeBzImage(t, "2.6.32-lab (root@host) #1 SMP")
	k, err := cache.ImportKernel("my-2.6.32", "i386", img, "")
	if err != nil {
		t.Fatal(err)
	}
	if k.Release != "2.6.32-lab" || len(k.Modules) != 0 || !strings.HasPrefix(k.Source, "import:") {
		t.Errorf("ImportKernel() = %+v, want release 2.6.32-lab, no modules, an import source", k)
	}
	got, err := cache.LoadKernel("my-2.6.32")
	if err != nil {
		t.Fatal(err)
	}
	if got.Vmlinuz != k.Vmlinuz || got.Arch != "i386" {
		t.Errorf("LoadKernel() = %+v, want %+v", got, k)
	}

	// Corrupting the image makes LoadKernel fail, naming the kernel.
	if err := os.WriteFile(cache.BlobPath(got.Vmlinuz), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.LoadKernel("my-2.6.32"); err == nil || !strings.Contains(err.Error(), "my-2.6.32") || !strings.Contains(err.Error(), "corrupted") {
		t.Errorf("LoadKernel(corrupted) = %v, want a corruption error naming the kernel", err)
	}

	tests := []struct {
		name, id, arch, img, mods, want string
	}{
		{"reserved id", "debian-6.1-686", "i386", img, "", "belongs to a kernel lab fetches"},
		{"bad id", "My Kernel", "i386", img, "", "id must match"},
		{"bad arch", "mine", "arm64", img, "", "arch"},
		{"not a bzImage", "mine", "i386", "testdata/good.yaml", "", "not an x86 bzImage"},
		{"modules not a dir", "mine", "i386", img, img, "not a directory"},
	}
	for _, tt := range tests {
		if _, err := cache.ImportKernel(tt.id, tt.arch, tt.img, tt.mods); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: ImportKernel() = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestImportKernelModulesDir(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	// A modules dir whose wanted modules are all built in: the release
	// comes from the directory name, and no module files are needed.
	mods := filepath.Join(t.TempDir(), "lib", "modules", "5.10.0-lab")
	var builtin strings.Builder
	for _, m := range GuestModules {
		builtin.WriteString("kernel/drivers/virtio/" + m + ".ko\n")
	}
	writeTestFile(t, filepath.Join(mods, "modules.builtin"), builtin.String())
	k, err := cache.ImportKernel("mine", "x86_64", "testdata/good.yaml", mods)
	if err != nil {
		t.Fatal(err)
	}
	if k.Release != "5.10.0-lab" || len(k.Modules) != 0 || len(k.Builtin) != len(GuestModules) {
		t.Errorf("ImportKernel() = %+v, want release 5.10.0-lab, no module files, all built in", k)
	}
}

func TestModuleName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"kernel/drivers/char/hw_random/virtio-rng.ko", "virtio_rng"},
		{"virtio_pci.ko.xz", "virtio_pci"},
		{"modules.order", ""},
	}
	for _, tt := range tests {
		if got, _ := moduleName(tt.in); got != tt.want {
			t.Errorf("moduleName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFindBinary(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	writeTestFile(t, filepath.Join(lib, "plugins", "forkbench", "i386", "forkbench"), "x")
	dirs := LibDirs(lib)
	got, err := FindBinary(dirs, "plugins/forkbench/i386/forkbench")
	if want := filepath.Join(lib, "plugins/forkbench/i386/forkbench"); err != nil || got != want {
		t.Errorf("FindBinary() = %q, %v; want %q", got, err, want)
	}
	_, err = FindBinary(dirs, "agent-sparc")
	exe, _ := os.Executable()
	for _, w := range []string{"agent-sparc", lib, filepath.Dir(exe), "make"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("FindBinary(missing) = %v, want an error containing %q", err, w)
		}
	}
	if _, err := FindBinary(dirs, "../etc/passwd"); err == nil {
		t.Errorf("FindBinary(../) = nil error")
	}
}

// TestFetchReal downloads the real kernels and busyboxes with apt into a
// temporary cache, builds an initramfs from them, and checks a second fetch
// does not touch apt.
func TestFetchReal(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads Debian packages; skipped with -short")
	}
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg", "dpkg-deb"} {
		if _, err := execLookPath(tool); err != nil {
			t.Skipf("%s not available: %v", tool, err)
		}
	}
	cache := testCache(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var log strings.Builder

	for _, tt := range []struct{ id, arch, pkgPrefix string }{
		{"debian-6.1-686", "i386", "linux-image-6.1."},
		{"debian-6.1-amd64", "x86_64", "linux-image-6.1."},
	} {
		k, err := cache.FetchKernel(ctx, tt.id, &log)
		if err != nil {
			t.Fatalf("FetchKernel(%s): %v\nlog:\n%s", tt.id, err, log.String())
		}
		t.Logf("%s: %s %s release %s modules %d builtin %v", tt.id, k.Package, k.Version, k.Release, len(k.Modules), k.Builtin)
		if k.Arch != tt.arch || !strings.HasPrefix(k.Package, tt.pkgPrefix) || k.Version == "" || !strings.HasPrefix(k.Release, "6.1.") {
			t.Errorf("FetchKernel(%s) = %+v", tt.id, k)
		}
		names := map[string]int{}
		for i, m := range k.Modules {
			names[m.Name] = i
		}
		for _, want := range []string{"virtio_console", "virtio_pci"} {
			if _, ok := names[want]; !ok && !slices.Contains(k.Builtin, want) {
				t.Errorf("%s: %s neither a module nor built in", tt.id, want)
			}
		}
		if i, ok := names["virtio_console"]; ok {
			if j, ok := names["virtio_ring"]; ok && j > i {
				t.Errorf("%s: virtio_ring (%d) loads after virtio_console (%d)", tt.id, j, i)
			}
		}
		if rel, err := bzImageRelease(cache.BlobPath(k.Vmlinuz)); err != nil || rel != k.Release {
			t.Errorf("%s: image header says release %q (%v), manifest %q", tt.id, rel, err, k.Release)
		}

		bb, err := cache.FetchBusybox(ctx, tt.arch, &log)
		if err != nil {
			t.Fatalf("FetchBusybox(%s): %v\nlog:\n%s", tt.arch, err, log.String())
		}
		t.Logf("busybox %s: %s %s", tt.arch, bb.Package, bb.Version)
		if err := checkELF(cache.BlobPath(bb.SHA256), tt.arch); err != nil {
			t.Errorf("busybox %s: %v", tt.arch, err)
		}

		// The busybox binary stands in for the agent: a real static ELF.
		path, err := cache.BuildInitramfs(k, bb, cache.BlobPath(bb.SHA256), nil)
		if err != nil {
			t.Fatalf("BuildInitramfs(%s): %v", tt.id, err)
		}
		got, _ := readInitramfs(t, path)
		list := strings.Fields(got["lib/modules/lab-modules"].content)
		if len(list) != len(k.Modules) {
			t.Errorf("%s: lab-modules lists %d modules, want %d", tt.id, len(list), len(k.Modules))
		}
		netList := strings.Fields(got["lib/modules/lab-modules-net"].content)
		if len(netList) != len(k.NetModules) || !slices.ContainsFunc(k.NetModules, func(m Module) bool { return m.Name == "virtio_net" }) {
			t.Errorf("%s: lab-modules-net lists %v; want virtio_net among the %d network modules %+v", tt.id, netList, len(k.NetModules), k.NetModules)
		}
		for _, p := range append(list, netList...) {
			if e, ok := got[strings.TrimPrefix(p, "/")]; !ok || e.mode&cpio.ModeType != cpio.TypeReg {
				t.Errorf("%s: %s listed but not in the archive", tt.id, p)
			}
		}
	}

	// Cached now: with no apt on PATH a second fetch still succeeds.
	t.Setenv("PATH", t.TempDir())
	start := time.Now()
	for _, id := range KernelIDs() {
		if _, err := cache.FetchKernel(ctx, id, &log); err != nil {
			t.Errorf("second FetchKernel(%s) = %v, want the cached kernel", id, err)
		}
	}
	for _, arch := range Arches {
		if _, err := cache.FetchBusybox(ctx, arch, &log); err != nil {
			t.Errorf("second FetchBusybox(%s) = %v, want the cached busybox", arch, err)
		}
	}
	t.Logf("cached fetches took %v", time.Since(start))
}

var execLookPath = exec.LookPath

// fakeModule writes a relocatable ELF object with a .modinfo section
// saying depends=deps, enough for resolveModules (which reads nothing
// else). It needs a C compiler, as building lab's workloads does.
func fakeModule(t *testing.T, path, deps string) {
	t.Helper()
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("gcc not available to make fake kernel modules: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	src := `__attribute__((section(".modinfo"), used)) static const char info[] = "name=` + filepath.Base(path) + `\0depends=` + deps + `";` + "\n"
	cmd := exec.Command(cc, "-c", "-x", "c", "-o", path, "-")
	cmd.Stdin = strings.NewReader(src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
}

// TestImportKernelNetModules: virtio_net and what it needs beyond the boot
// modules are stored apart from them, in load order, and are not among
// the modules the agent loads at boot.
func TestImportKernelNetModules(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	mods := filepath.Join(t.TempDir(), "lib", "modules", "6.1.0-99-686")
	for _, m := range []struct{ path, deps string }{
		{"kernel/drivers/virtio/virtio.ko", ""},
		{"kernel/drivers/virtio/virtio_ring.ko", ""},
		{"kernel/drivers/virtio/virtio_pci.ko", "virtio_ring,virtio"},
		{"kernel/drivers/char/virtio_console.ko", "virtio_ring,virtio"},
		{"kernel/net/core/failover.ko", ""},
		{"kernel/drivers/net/net_failover.ko", "failover"},
		{"kernel/drivers/net/virtio_net.ko", "virtio_ring,virtio,net_failover"},
	} {
		fakeModule(t, filepath.Join(mods, m.path), m.deps)
	}
	k, err := cache.ImportKernel("mine", "i386", fakeBzImage(t, "6.1.0-99-686 (x) #1"), mods)
	if err != nil {
		t.Fatal(err)
	}
	names := func(ms []Module) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	if got, want := names(k.Modules), []string{"virtio", "virtio_ring", "virtio_pci", "virtio_console"}; !slices.Equal(got, want) {
		t.Errorf("boot modules %v, want %v", got, want)
	}
	if got, want := names(k.NetModules), []string{"failover", "net_failover", "virtio_net"}; !slices.Equal(got, want) {
		t.Errorf("net modules %v, want %v", got, want)
	}
	got, err := cache.LoadKernel("mine")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.NetModules) != 3 || got.NetModules[2].SHA256 == "" {
		t.Errorf("LoadKernel() net modules = %+v, want the three stored", got.NetModules)
	}
	// A corrupted network module is caught like any other.
	if err := os.WriteFile(cache.BlobPath(got.NetModules[0].SHA256), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.LoadKernel("mine"); err == nil || !strings.Contains(err.Error(), "failover") {
		t.Errorf("LoadKernel(corrupted net module) = %v, want an error naming it", err)
	}
}

// TestFetchKernelOldManifest: a cached kernel whose manifest predates the
// network modules still boots (LoadKernel), but FetchKernel fetches the
// package again for them rather than returning it.
func TestFetchKernelOldManifest(t *testing.T) {
	cache := testCache(t)
	sha, err := cache.PutReader(strings.NewReader("vmlinuz"))
	if err != nil {
		t.Fatal(err)
	}
	old := `{"id": "debian-6.1-686", "arch": "i386", "package": "linux-image-6.1.0-99-686", "version": "1", "source": "debian",
	  "release": "6.1.0-99-686", "vmlinuz": "` + sha + `", "modules": []}`
	writeTestFile(t, filepath.Join(string(cache), "kernels", "debian-6.1-686.json"), old)
	if _, err := cache.LoadKernel("debian-6.1-686"); err != nil {
		t.Fatalf("LoadKernel(old manifest) = %v, want it loaded", err)
	}
	t.Setenv("PATH", t.TempDir()) // no apt: a fetch fails, naming what it ran
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if k, err := cache.FetchKernel(ctx, "debian-6.1-686", nil); err == nil {
		t.Errorf("FetchKernel(old manifest) = %+v, nil; want a fetch (failing here, without apt)", k)
	}
	// A manifest that lists them (even none) is current.
	current := strings.Replace(old, `"modules": []`, `"modules": [], "net_modules": []`, 1)
	writeTestFile(t, filepath.Join(string(cache), "kernels", "debian-6.1-686.json"), current)
	if _, err := cache.FetchKernel(ctx, "debian-6.1-686", nil); err != nil {
		t.Errorf("FetchKernel(current manifest) = %v, want the cached kernel", err)
	}
}

// TestBootImage: a kernel with a PVH vmlinux boots it, unless asked for
// the bzImage or the profile's console is fb (vga= needs the real-mode
// setup the PVH entry skips); a kernel without one boots its bzImage.
func TestBootImage(t *testing.T) {
	pvh := &Kernel{Vmlinuz: "bz", PVH: "elf"}
	plain := &Kernel{Vmlinuz: "bz"}
	serial, fb := Profile{Console: "serial"}, Profile{Console: "fb"}
	for _, c := range []struct {
		k         *Kernel
		p         Profile
		bz        bool
		sha, want string
	}{
		{pvh, serial, false, "elf", EntryPVH},
		{pvh, serial, true, "bz", EntryBzImage},
		{pvh, fb, false, "bz", EntryBzImage},
		{plain, serial, false, "bz", EntryBzImage},
		{plain, fb, true, "bz", EntryBzImage},
	} {
		sha, entry := c.k.BootImage(c.p, c.bz)
		if sha != c.sha || entry != c.want {
			t.Errorf("BootImage(pvh %q, console %s, bzImage %v) = %s, %s; want %s, %s", c.k.PVH, c.p.Console, c.bz, sha, entry, c.sha, c.want)
		}
	}
}

// TestPVHEntry reads the entry from a PVH note (an ELF32 made here with a
// build-id note before it) and names a file without one.
func TestPVHEntry(t *testing.T) {
	le := binary.LittleEndian
	note := func(name string, typ uint32, desc []byte) []byte {
		n := append([]byte(name), 0)
		for len(n)%4 != 0 {
			n = append(n, 0)
		}
		d := append([]byte(nil), desc...)
		for len(d)%4 != 0 {
			d = append(d, 0)
		}
		h := make([]byte, 12)
		le.PutUint32(h[0:], uint32(len(name)+1))
		le.PutUint32(h[4:], uint32(len(desc)))
		le.PutUint32(h[8:], typ)
		return append(append(h, n...), d...)
	}
	entry := make([]byte, 4)
	le.PutUint32(entry, 0x1000370)
	notes := append(note("GNU", 3, []byte{1, 2, 3, 4, 5}), note("Xen", 18, entry)...)
	elf32 := func(notes []byte) []byte {
		const ehsize, phsize = 52, 32
		b := make([]byte, ehsize+phsize)
		copy(b, "\x7fELF\x01\x01\x01")
		le.PutUint16(b[16:], 2) // ET_EXEC
		le.PutUint16(b[18:], 3) // EM_386
		le.PutUint32(b[20:], 1)
		le.PutUint32(b[28:], ehsize) // phoff
		le.PutUint16(b[40:], ehsize)
		le.PutUint16(b[42:], phsize)
		le.PutUint16(b[44:], 1) // phnum
		ph := b[ehsize:]
		le.PutUint32(ph[0:], 4) // PT_NOTE
		le.PutUint32(ph[4:], ehsize+phsize)
		le.PutUint32(ph[16:], uint32(len(notes)))
		le.PutUint32(ph[20:], uint32(len(notes)))
		le.PutUint32(ph[28:], 4)
		return append(b, notes...)
	}
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "vmlinux"), filepath.Join(dir, "other")
	if err := os.WriteFile(good, elf32(notes), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, elf32(note("GNU", 3, []byte{1, 2, 3, 4})), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := PVHEntry(good); err != nil || got != 0x1000370 {
		t.Errorf("PVHEntry = %#x, %v; want 0x1000370", got, err)
	}
	if _, err := PVHEntry(bad); err == nil || !strings.Contains(err.Error(), "other has no PVH entry note") {
		t.Errorf("PVHEntry of an ELF without the note: %v", err)
	}
}
