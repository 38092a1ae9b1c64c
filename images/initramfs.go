package images

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cavaliergopher/cpio"
)

// The initramfs is an uncompressed cpio "newc" archive: the kernel would
// have to decompress a compressed one, which is slow under TCG emulation
// (xz alone costs seconds there), and the archive is small (agent, busybox,
// a handful of modules), so there is little to save.

// ModulesListPath is the file in the initramfs that lists the modules the
// agent loads, one absolute path per line, in load order.
const ModulesListPath = "/lib/modules/lab-modules"

// NetModulesListPath lists the kernel's NetModules the same way: in the
// archive but not loaded at boot; the host loads them when it gives the
// guest a NIC (vm/nic.go). Empty when the kernel has none to load.
const NetModulesListPath = "/lib/modules/lab-modules-net"

// initramfsFormat versions the archive layout: bump it when the contents
// change so old cached images are not reused. v2: NetModulesListPath.
const initramfsFormat = "lab-initramfs-v2"

var initramfsDirs = []struct {
	name string
	mode cpio.FileMode
}{
	{"bin", 0o755}, {"dev", 0o755}, {"etc", 0o755}, {"lib", 0o755},
	{"lib/modules", 0o755}, {"proc", 0o555}, {"root", 0o700}, {"run", 0o755},
	{"sbin", 0o755}, {"sys", 0o555}, {"tmp", 0o777 | cpio.ModeSticky},
	{"usr", 0o755}, {"usr/bin", 0o755}, {"usr/sbin", 0o755}, {"var", 0o755},
}

var initramfsDevices = []struct {
	name         string
	major, minor int64
	mode         cpio.FileMode
}{
	// The kernel opens /dev/console for init's stdio before running it.
	{"dev/console", 5, 1, 0o600},
	{"dev/null", 1, 3, 0o666},
}

const (
	etcPasswd = "root:x:0:0:root:/root:/bin/sh\n"
	etcGroup  = "root:x:0:\n"
)

// BuildInitramfs assembles the guest's initramfs from the agent (as
// /init), busybox (as /bin/busybox, without applet links: the agent runs
// `busybox --install -s` at boot) and the kernel's modules (those the agent
// loads at boot, and the network modules it does not), and returns its
// path in the cache. The image is named by a hash of its inputs, so a
// second call with the same inputs returns the cached file, once its
// content is checked against the digest recorded when it was built (one
// that does not match is rebuilt, with a note to log if not nil).
func (c Cache) BuildInitramfs(k *Kernel, bb *Busybox, agentPath string, log io.Writer) (string, error) {
	if k == nil || bb == nil {
		return "", errors.New("initramfs: need a kernel and a busybox")
	}
	if k.Arch != bb.Arch {
		return "", fmt.Errorf("initramfs: kernel %s is %s but busybox is %s", k.ID, k.Arch, bb.Arch)
	}
	agentSHA, err := fileSHA256(agentPath)
	if err != nil {
		return "", fmt.Errorf("initramfs: agent: %w", err)
	}
	if err := checkAgent(agentPath, k.Arch); err != nil {
		return "", fmt.Errorf("initramfs: agent: %w", err)
	}
	for _, m := range append(slices.Clip(k.Modules), k.NetModules...) {
		if !fs.ValidPath(m.Path) {
			return "", fmt.Errorf("initramfs: kernel %s: module %s has a bad path %q", k.ID, m.Name, m.Path)
		}
	}

	libc, err := c.guestLibc(k.Arch)
	if err != nil {
		return "", fmt.Errorf("initramfs: %w", err)
	}
	key := initramfsKey(k, bb, agentSHA, libc)
	out := filepath.Join(string(c), "initramfs", key+".cpio")
	if fi, err := os.Stat(out); err == nil && fi.Mode().IsRegular() {
		why := verifyInitramfs(out)
		if why == nil {
			return out, nil
		}
		if log != nil && !errors.Is(why, errNoDigest) {
			fmt.Fprintf(log, "note: the cached initramfs %s %v; rebuilt\n", filepath.Base(out), why)
		}
	}
	// The digest first: an archive is never there without one. The
	// archive is the same bytes for the same key, so two builds racing
	// write the same digest.
	var data bytes.Buffer
	if err := c.writeInitramfs(&data, k, bb, agentPath, libc); err != nil {
		return "", fmt.Errorf("initramfs for kernel %s: %w", k.ID, err)
	}
	h := sha256.Sum256(data.Bytes())
	if err := WriteFileAtomic(out+".sha256", []byte(hex.EncodeToString(h[:])+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("initramfs for kernel %s: %w", k.ID, err)
	}
	if err := WriteFileAtomic(out, data.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("initramfs for kernel %s: %w", k.ID, err)
	}
	return out, nil
}

// errNoDigest: an archive built by a lab that recorded no digest.
var errNoDigest = errors.New("has no recorded digest")

// verifyInitramfs says how the cached archive at path differs from what
// was built (the digest recorded beside it), or nil. The archive is named
// by its inputs, not its content, so a truncated one would otherwise be
// booted, and every cold boot would panic "No working init found". It
// costs a read and a hash of about 5 MB: 5 ms.
func verifyInitramfs(path string) error {
	b, err := os.ReadFile(path + ".sha256")
	if err != nil {
		return errNoDigest
	}
	want := strings.TrimSpace(string(b))
	got, err := fileSHA256(path)
	if err != nil {
		return fmt.Errorf("cannot be read (%w)", err)
	}
	if got != want {
		return fmt.Errorf("is corrupt (sha256 %.12s, built as %.12s)", got, want)
	}
	return nil
}

// initramfsKey hashes everything the archive is made of.
func initramfsKey(k *Kernel, bb *Busybox, agentSHA string, libc *Libc) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\narch %s\nrelease %s\nagent %s\nbusybox %s\n", initramfsFormat, k.Arch, k.Release, agentSHA, bb.SHA256)
	if libc != nil {
		for _, f := range libc.Files {
			fmt.Fprintf(h, "libc %s %s\n", f.Path, f.SHA256)
		}
	}
	for _, m := range k.Modules {
		fmt.Fprintf(h, "module %s %s\n", m.Path, m.SHA256)
	}
	for _, m := range k.NetModules {
		fmt.Fprintf(h, "net module %s %s\n", m.Path, m.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c Cache) writeInitramfs(w io.Writer, k *Kernel, bb *Busybox, agentPath string, libc *Libc) error {
	rw := &rdevWriter{w: w}
	cw := cpio.NewWriter(rw)
	dirs := map[string]bool{}
	mkdir := func(name string, mode cpio.FileMode) error {
		if dirs[name] {
			return nil
		}
		dirs[name] = true
		return cw.WriteHeader(&cpio.Header{Name: name, Mode: cpio.TypeDir | mode, Links: 2})
	}
	// mkdirAll adds the parents of a file, so the kernel can create it.
	mkdirAll := func(file string) error {
		dir := path.Dir(file)
		if dir == "." {
			return nil
		}
		var parts []string
		for d := dir; d != "."; d = path.Dir(d) {
			parts = append([]string{d}, parts...)
		}
		for _, d := range parts {
			if err := mkdir(d, 0o755); err != nil {
				return err
			}
		}
		return nil
	}
	addBytes := func(name string, mode cpio.FileMode, data []byte) error {
		if err := mkdirAll(name); err != nil {
			return err
		}
		if err := cw.WriteHeader(&cpio.Header{Name: name, Mode: cpio.TypeReg | mode, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err := cw.Write(data)
		return err
	}
	addFile := func(name string, mode cpio.FileMode, src string) error {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if err := mkdirAll(name); err != nil {
			return err
		}
		if err := cw.WriteHeader(&cpio.Header{Name: name, Mode: cpio.TypeReg | mode, Size: fi.Size()}); err != nil {
			return err
		}
		if _, err := io.Copy(cw, f); err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		return nil
	}

	for _, d := range initramfsDirs {
		if err := mkdir(d.name, d.mode); err != nil {
			return err
		}
	}
	for _, d := range initramfsDevices {
		rw.major, rw.minor, rw.armed = d.major, d.minor, true
		if err := cw.WriteHeader(&cpio.Header{Name: d.name, Mode: cpio.TypeChar | d.mode, Links: 1}); err != nil {
			return err
		}
		if rw.armed {
			return fmt.Errorf("device node %s: the cpio header was not seen", d.name)
		}
	}
	if err := addFile("init", 0o755, agentPath); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if err := addFile("bin/busybox", 0o755, c.BlobPath(bb.SHA256)); err != nil {
		return fmt.Errorf("busybox: %w", err)
	}
	if libc != nil {
		for _, f := range libc.Files {
			if err := addFile(f.Path, 0o755, c.BlobPath(f.SHA256)); err != nil {
				return fmt.Errorf("shared libc: %w", err)
			}
		}
	}
	if err := addBytes("etc/passwd", 0o644, []byte(etcPasswd)); err != nil {
		return err
	}
	if err := addBytes("etc/group", 0o644, []byte(etcGroup)); err != nil {
		return err
	}
	for _, l := range []struct {
		path    string
		modules []Module
	}{{ModulesListPath, k.Modules}, {NetModulesListPath, k.NetModules}} {
		var list strings.Builder
		for _, m := range l.modules {
			name := path.Join("lib/modules", k.Release, m.Path)
			if err := addFile(name, 0o644, c.BlobPath(m.SHA256)); err != nil {
				return fmt.Errorf("module %s: %w", m.Name, err)
			}
			list.WriteString("/" + name + "\n")
		}
		if err := addBytes(strings.TrimPrefix(l.path, "/"), 0o644, []byte(list.String())); err != nil {
			return err
		}
	}
	return cw.Close()
}

// rdevWriter fills in the rdevmajor/rdevminor fields of the next newc
// header written through it. cavaliergopher/cpio (v1.0.1) writes every
// header in one Write call but leaves those fields zero, so it cannot
// express device nodes by itself; this keeps the library for the rest of
// the format.
type rdevWriter struct {
	w            io.Writer
	major, minor int64
	armed        bool
}

const (
	newcHeaderLen = 110
	newcRdevMajor = 78 // offsets of the 8-hex-digit fields
	newcRdevMinor = 86
)

func (r *rdevWriter) Write(p []byte) (int, error) {
	if r.armed && len(p) == newcHeaderLen && bytes.HasPrefix(p, []byte("070701")) {
		q := bytes.Clone(p)
		copy(q[newcRdevMajor:], fmt.Sprintf("%08X", r.major))
		copy(q[newcRdevMinor:], fmt.Sprintf("%08X", r.minor))
		r.armed = false
		return r.w.Write(q)
	}
	return r.w.Write(p)
}

// checkAgent refuses an ELF /init built for another architecture (the
// kernel would only say "init failed (error -8)"). A non-ELF /init (a
// script, a test fixture) is left alone.
func checkAgent(p, arch string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	magic := make([]byte, 4)
	_, err = io.ReadFull(f, magic)
	f.Close()
	if err != nil || string(magic) != "\x7fELF" {
		return nil
	}
	return checkELF(p, arch)
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
