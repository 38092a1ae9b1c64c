package images

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cavaliergopher/cpio"
)

// entry is what the tests check about one archive member.
type entry struct {
	mode       cpio.FileMode
	rmaj, rmin int64
	content    string
}

// readInitramfs lists an archive back with the cpio reader. The device
// numbers, which the reader does not decode, are read from the raw header.
func readInitramfs(t *testing.T, path string) (map[string]entry, []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rdevs := rawRdevs(t, data)
	r := cpio.NewReader(bytes.NewReader(data))
	got := map[string]entry{}
	var order []string
	for {
		h, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		e := entry{mode: h.Mode, rmaj: rdevs[h.Name][0], rmin: rdevs[h.Name][1]}
		if h.Mode.IsRegular() {
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			e.content = string(b)
		}
		got[h.Name] = e
		order = append(order, h.Name)
	}
	return got, order
}

// rawRdevs walks the newc headers and returns rdevmajor/rdevminor by name.
func rawRdevs(t *testing.T, data []byte) map[string][2]int64 {
	t.Helper()
	out := map[string][2]int64{}
	hex := func(b []byte) int64 {
		v, err := strconv.ParseInt(string(b), 16, 64)
		if err != nil {
			t.Fatalf("bad hex %q in cpio header", b)
		}
		return v
	}
	pad4 := func(n int) int { return (n + 3) &^ 3 }
	for off := 0; off+110 <= len(data); {
		h := data[off : off+110]
		if string(h[:6]) != "070701" {
			t.Fatalf("no newc magic at offset %d", off)
		}
		size := int(hex(h[54:62]))
		nameLen := int(hex(h[94:102]))
		name := string(data[off+110 : off+110+nameLen-1])
		if name == "TRAILER!!!" {
			break
		}
		out[name] = [2]int64{hex(h[78:86]), hex(h[86:94])}
		off = pad4(off+110+nameLen) + pad4(size)
	}
	return out
}

// fakeImages stores a fake kernel with two modules and a fake busybox in
// cache.
func fakeImages(t *testing.T, cache Cache) (*Kernel, *Busybox, string) {
	t.Helper()
	put := func(s string) string {
		sha, err := cache.PutReader(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	k := &Kernel{
		ID: "fake-kernel", Arch: "i386", Release: "6.1.0-99-686", Vmlinuz: put("vmlinuz"),
		Modules: []Module{
			{Name: "virtio", Path: "kernel/drivers/virtio/virtio.ko", SHA256: put("virtio.ko")},
			{Name: "virtio_rng", Path: "kernel/drivers/char/hw_random/virtio-rng.ko", SHA256: put("virtio-rng.ko")},
		},
		NetModules: []Module{
			{Name: "failover", Path: "kernel/net/core/failover.ko", SHA256: put("failover.ko")},
			{Name: "virtio_net", Path: "kernel/drivers/net/virtio_net.ko", SHA256: put("virtio_net.ko")},
		},
	}
	bb := &Busybox{Arch: "i386", Package: "busybox-static", Version: "1", SHA256: put("busybox binary")}
	agent := filepath.Join(t.TempDir(), "agent-i386")
	writeTestFile(t, agent, "#!agent\n")
	return k, bb, agent
}

func TestBuildInitramfs(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	k, bb, agent := fakeImages(t, cache)

	path, err := cache.BuildInitramfs(k, bb, agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	if dir := filepath.Join(string(cache), "initramfs"); filepath.Dir(path) != dir || !strings.HasSuffix(path, ".cpio") {
		t.Errorf("BuildInitramfs() = %q, want a .cpio under %s", path, dir)
	}
	got, order := readInitramfs(t, path)

	files := map[string]struct {
		mode    cpio.FileMode
		content string
	}{
		"init":        {cpio.TypeReg | 0o755, "#!agent\n"},
		"bin/busybox": {cpio.TypeReg | 0o755, "busybox binary"},
		"etc/passwd":  {cpio.TypeReg | 0o644, "root:x:0:0:root:/root:/bin/sh\n"},
		"etc/group":   {cpio.TypeReg | 0o644, "root:x:0:\n"},
		"lib/modules/6.1.0-99-686/kernel/drivers/virtio/virtio.ko":             {cpio.TypeReg | 0o644, "virtio.ko"},
		"lib/modules/6.1.0-99-686/kernel/drivers/char/hw_random/virtio-rng.ko": {cpio.TypeReg | 0o644, "virtio-rng.ko"},
		"lib/modules/lab-modules": {cpio.TypeReg | 0o644,
			"/lib/modules/6.1.0-99-686/kernel/drivers/virtio/virtio.ko\n" +
				"/lib/modules/6.1.0-99-686/kernel/drivers/char/hw_random/virtio-rng.ko\n"},
		// In the archive, listed apart: not loaded at boot.
		"lib/modules/6.1.0-99-686/kernel/net/core/failover.ko":      {cpio.TypeReg | 0o644, "failover.ko"},
		"lib/modules/6.1.0-99-686/kernel/drivers/net/virtio_net.ko": {cpio.TypeReg | 0o644, "virtio_net.ko"},
		"lib/modules/lab-modules-net": {cpio.TypeReg | 0o644,
			"/lib/modules/6.1.0-99-686/kernel/net/core/failover.ko\n" +
				"/lib/modules/6.1.0-99-686/kernel/drivers/net/virtio_net.ko\n"},
	}
	for name, want := range files {
		e, ok := got[name]
		if !ok {
			t.Errorf("%s missing from the archive", name)
			continue
		}
		if e.mode != want.mode || e.content != want.content {
			t.Errorf("%s: mode %o content %q, want mode %o content %q", name, e.mode, e.content, want.mode, want.content)
		}
	}
	for _, d := range []string{"dev", "proc", "sys", "tmp", "run", "root", "etc", "var", "bin", "sbin", "usr/bin", "usr/sbin", "lib/modules",
		"lib/modules/6.1.0-99-686/kernel/drivers/char/hw_random"} {
		if e, ok := got[d]; !ok || !e.mode.IsDir() {
			t.Errorf("directory %s missing (got %+v)", d, e)
		}
	}
	if got["tmp"].mode&cpio.ModeSticky == 0 {
		t.Errorf("tmp mode %o, want the sticky bit", got["tmp"].mode)
	}
	devs := map[string][2]int64{"dev/console": {5, 1}, "dev/null": {1, 3}}
	for name, want := range devs {
		e := got[name]
		if e.mode&cpio.ModeType != cpio.TypeChar || e.rmaj != want[0] || e.rmin != want[1] {
			t.Errorf("%s: mode %o rdev %d,%d; want a char device %d,%d", name, e.mode, e.rmaj, e.rmin, want[0], want[1])
		}
	}
	for name := range got {
		if strings.HasPrefix(name, "bin/") && name != "bin/busybox" || strings.HasPrefix(name, "/") {
			t.Errorf("unexpected entry %q (no applet links, no absolute names)", name)
		}
	}
	// Every parent directory comes before what is in it.
	seen := map[string]bool{}
	for _, name := range order {
		if dir := filepath.Dir(name); dir != "." && !seen[dir] {
			t.Errorf("%s comes before its directory %s", name, dir)
		}
		seen[name] = true
	}

	// Same inputs: the same file, not rebuilt.
	st1, _ := os.Stat(path)
	path2, err := cache.BuildInitramfs(k, bb, agent, nil)
	if err != nil || path2 != path {
		t.Errorf("second BuildInitramfs() = %q, %v; want %q", path2, err, path)
	}
	if st2, _ := os.Stat(path); !st2.ModTime().Equal(st1.ModTime()) {
		t.Errorf("second BuildInitramfs() rewrote the archive")
	}

	// A different agent: a different image.
	writeTestFile(t, agent, "#!agent v2\n")
	path3, err := cache.BuildInitramfs(k, bb, agent, nil)
	if err != nil || path3 == path {
		t.Errorf("BuildInitramfs(new agent) = %q, %v; want a new path", path3, err)
	}
	if got, _ := readInitramfs(t, path3); got["init"].content != "#!agent v2\n" {
		t.Errorf("new image's /init = %q", got["init"].content)
	}

	// Other network modules: a different image.
	k2 := *k
	k2.NetModules = k.NetModules[:1]
	if path4, err := cache.BuildInitramfs(&k2, bb, agent, nil); err != nil || path4 == path3 {
		t.Errorf("BuildInitramfs(other net modules) = %q, %v; want a new path", path4, err)
	}
}

func TestBuildInitramfsErrors(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	k, bb, agent := fakeImages(t, cache)
	tests := []struct {
		name  string
		setup func() (*Kernel, *Busybox, string)
		want  string
	}{
		{"arch mismatch", func() (*Kernel, *Busybox, string) {
			b := *bb
			b.Arch = "x86_64"
			return k, &b, agent
		}, "busybox is x86_64"},
		{"missing agent", func() (*Kernel, *Busybox, string) { return k, bb, agent + ".nope" }, "agent"},
		{"wrong-arch ELF agent", func() (*Kernel, *Busybox, string) {
			exe, err := os.Executable() // the x86_64 test binary
			if err != nil {
				t.Skip(err)
			}
			return k, bb, exe
		}, "not i386"},
		{"bad module path", func() (*Kernel, *Busybox, string) {
			k2 := *k
			k2.Modules = []Module{{Name: "evil", Path: "../../etc/evil.ko", SHA256: k.Modules[0].SHA256}}
			return &k2, bb, agent
		}, "bad path"},
		{"bad net module path", func() (*Kernel, *Busybox, string) {
			k2 := *k
			k2.NetModules = []Module{{Name: "evil", Path: "/etc/evil.ko", SHA256: k.Modules[0].SHA256}}
			return &k2, bb, agent
		}, "bad path"},
	}
	for _, tt := range tests {
		kk, bbb, a := tt.setup()
		_, err := cache.BuildInitramfs(kk, bbb, a, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: BuildInitramfs() = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestRdevWriterOnlyPatchesOneHeader(t *testing.T) {
	var buf bytes.Buffer
	rw := &rdevWriter{w: &buf, major: 5, minor: 1, armed: true}
	body := []byte(strings.Repeat("0", 110))
	rw.Write(body) // not a header: no magic
	hdr := append([]byte("070701"), bytes.Repeat([]byte("0"), 104)...)
	rw.Write(hdr)
	rw.Write(hdr)
	out := buf.Bytes()
	if got := string(out[110+78 : 110+94]); got != fmt.Sprintf("%08X%08X", 5, 1) {
		t.Errorf("first header rdev = %q", got)
	}
	if got := string(out[220+78 : 220+94]); got != strings.Repeat("0", 16) {
		t.Errorf("second header rdev = %q, want zeros", got)
	}
	if !bytes.Equal(hdr[78:94], bytes.Repeat([]byte("0"), 16)) {
		t.Errorf("rdevWriter modified the caller's buffer")
	}
}

// TestBuildInitramfsVerifiesCached: a cached archive that no longer is
// what was built (truncated: every cold boot then panics "No working init
// found") is rebuilt, saying so; an intact one is used as it is.
func TestBuildInitramfsVerifiesCached(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	k, bb, agent := fakeImages(t, cache)
	var log bytes.Buffer
	path, err := cache.BuildInitramfs(k, bb, agent, &log)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		change func() error
	}{
		{"truncated", func() error { return os.Truncate(path, int64(len(want)/2)) }},
		{"a byte changed", func() error {
			b := bytes.Clone(want)
			b[len(b)/2] ^= 0xff
			return os.WriteFile(path, b, 0o644)
		}},
	} {
		if err := c.change(); err != nil {
			t.Fatal(err)
		}
		log.Reset()
		got, err := cache.BuildInitramfs(k, bb, agent, &log)
		if err != nil || got != path {
			t.Fatalf("%s: BuildInitramfs() = %q, %v; want %q", c.name, got, err, path)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, want) {
			t.Errorf("%s: the cached initramfs was used as it is (%d bytes), want it rebuilt (%d)", c.name, len(b), len(want))
		}
		if !strings.Contains(log.String(), "rebuilt") || !strings.Contains(log.String(), filepath.Base(path)) {
			t.Errorf("%s: said %q, want a note naming the archive and saying it was rebuilt", c.name, log.String())
		}
	}
	log.Reset()
	st1, _ := os.Stat(path)
	if _, err := cache.BuildInitramfs(k, bb, agent, &log); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(path); !st2.ModTime().Equal(st1.ModTime()) || log.Len() != 0 {
		t.Errorf("an intact cached initramfs was rebuilt (said %q)", log.String())
	}
}

// TestInitramfsLibc: once the shared libc is in the cache (lab image
// fetch), the initramfs holds it where Debian puts it, for the workloads
// built dynamically, and its key changes with it; without it, none.
func TestInitramfsLibc(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	k, bb, agent := fakeImages(t, cache)
	without, err := cache.BuildInitramfs(k, bb, agent, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := readInitramfs(t, without); got["lib/ld-linux.so.2"].content != "" {
		t.Errorf("an initramfs without a fetched libc holds lib/ld-linux.so.2")
	}
	l := &Libc{Arch: "i386", Package: "libc6", Version: "2.36"}
	for _, p := range libcFiles["i386"] {
		sha, err := cache.PutReader(strings.NewReader("contents of " + p))
		if err != nil {
			t.Fatal(err)
		}
		l.Files = append(l.Files, GuestFile{Path: p, SHA256: sha})
	}
	if err := writeJSONAtomic(cache.libcManifest("i386"), l); err != nil {
		t.Fatal(err)
	}
	with, err := cache.BuildInitramfs(k, bb, agent, nil)
	if err != nil || with == without {
		t.Fatalf("BuildInitramfs with a libc = %q, %v; want a new archive", with, err)
	}
	got, _ := readInitramfs(t, with)
	for _, p := range libcFiles["i386"] {
		if e := got[p]; e.content != "contents of "+p || e.mode != cpio.TypeReg|0o755 {
			t.Errorf("%s: %+v, want the libc file, mode 0755", p, e)
		}
	}
	// A manifest that is not lab's is refused, not booted.
	l.Files = l.Files[:1]
	if err := writeJSONAtomic(cache.libcManifest("i386"), l); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.BuildInitramfs(k, bb, agent, nil); err == nil || !strings.Contains(err.Error(), "lab image fetch") {
		t.Errorf("BuildInitramfs with a bad libc manifest: %v, want an error saying to fetch again", err)
	}
}
