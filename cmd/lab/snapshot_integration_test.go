package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestIntegrationSnapshot: a boot restores the booted snapshot of its
// configuration (made by an earlier boot if there is none), the restored
// guest is the profile's machine with a fresh clock and RNG, and a corrupt
// snapshot costs a cold boot, never a failure.
func TestIntegrationSnapshot(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)

	// Make sure the snapshot exists (the first boot of a configuration
	// saves it), then boot again: that one must restore it.
	st := itUp(t, p.Name, "snap")
	if st.Snapshot == "" {
		t.Fatal("state names no snapshot file")
	}
	itMust(t, itCallTimeout, nil, "down", "snap")
	if _, err := os.Stat(st.Snapshot); err != nil {
		t.Fatalf("no snapshot after a boot: %v", err)
	}
	st = itUp(t, p.Name, "snap")
	if st.Boot != "restored from snapshot" {
		t.Errorf("boot %q, want restored from snapshot", st.Boot)
	}
	g := itMust(t, itCallTimeout, nil, "exec", "--", "sh", "-c", "grep -m1 'model name' /proc/cpuinfo; ulimit -s; date +%s; head -c 16 /dev/urandom | od -An -x").stdout
	lines := strings.Split(strings.TrimSpace(g), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], p.CPU.ModelID) || lines[1] != "8192" {
		t.Fatalf("restored guest: %q", g)
	}
	var guestNow int64
	if _, err := fmtSscan(lines[2], &guestNow); err != nil || abs(time.Now().Unix()-guestNow) > 5 {
		t.Errorf("restored guest clock %q, host %d: not set from the host", lines[2], time.Now().Unix())
	}
	first := lines[3]
	itMust(t, itCallTimeout, nil, "down", "snap")

	st = itUp(t, p.Name, "snap")
	again := itMust(t, itCallTimeout, nil, "exec", "--", "sh", "-c", "head -c 16 /dev/urandom | od -An -x").stdout
	if strings.TrimSpace(again) == first {
		t.Errorf("two restores of one snapshot gave the same random bytes %q: the RNG was not reseeded", first)
	}
	if c := itMust(t, itCallTimeout, nil, "console", "snap").stdout; !strings.Contains(c, "restored from snapshot") || !strings.Contains(c, "lab-agent: ready") {
		t.Errorf("console of a restored VM should show the original boot and the restore:\n%s", c)
	}
	itMust(t, itCallTimeout, nil, "down", "snap")

	// A corrupt snapshot: the boot falls back to cold and saves a new one.
	if err := os.Truncate(st.Snapshot, 4096); err != nil {
		t.Fatal(err)
	}
	st = itUp(t, p.Name, "snap")
	if st.Boot != "cold, snapshot saved" {
		t.Errorf("boot after corrupting the snapshot: %q, want cold, snapshot saved", st.Boot)
	}
	if fi, err := os.Stat(st.Snapshot); err != nil || fi.Size() <= 4096 {
		t.Errorf("snapshot not saved anew: %v", err)
	}
	itMust(t, itCallTimeout, nil, "down", "snap")

	// --cold neither restores nor saves.
	st = itUp(t, p.Name, "snap", "--cold")
	if st.Boot != "cold" || st.Snapshot != "" {
		t.Errorf("--cold: boot %q snapshot %q", st.Boot, st.Snapshot)
	}
}

// TestIntegrationAccelKVM: where KVM does not work (these machines), asking
// for it fails in seconds with a clear error and leaves nothing behind.
func TestIntegrationAccelKVM(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	root := itBootEnv(t, p)
	if _, err := os.Stat("/dev/kvm"); err != nil {
		t.Skip("no /dev/kvm here: the probe is not reached")
	}
	r := itLab(t, time.Minute, nil, "up", "--accel", "kvm", p.Name)
	if r.code == 0 {
		t.Skipf("KVM works on this host (booted in %.1fs)", r.took.Seconds())
	}
	if !strings.Contains(r.stderr, "KVM does not work") || !strings.Contains(r.stderr, "--accel tcg") {
		t.Errorf("error %q should say KVM does not work and what to use instead", r.stderr)
	}
	if r.took > 20*time.Second {
		t.Errorf("--accel kvm took %v to fail", r.took)
	}
	itNoneLeft(t, root, p.Name)
}

func fmtSscan(s string, v *int64) (int, error) { return fmt.Sscan(s, v) }

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestIntegrationImagePrune: prune keeps what a VM up uses and removes the
// rest; the next boot rebuilds what it needs.
func TestIntegrationImagePrune(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)
	cache := envCache(t)
	st := itUp(t, p.Name, "prune")
	itMust(t, itCallTimeout, nil, "image", "prune")
	for _, f := range []string{st.Snapshot, st.Initrd} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("prune removed %s, which vm prune uses: %v", f, err)
		}
	}
	itMust(t, itCallTimeout, nil, "down", "prune")
	// What a stopped kernel build leaves goes too (and the unpacked
	// source trees, which a later build unpacks again).
	dead := filepath.Join(string(cache), "build", "out-labprunetest")
	if err := os.MkdirAll(filepath.Join(dead, "kernel"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, "kernel", "fork.o"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := itMust(t, itCallTimeout, nil, "image", "prune")
	// (A build running beside the tests keeps all of build/, and says so.)
	if !strings.Contains(r.stderr, "a kernel build is running") {
		if _, err := os.Stat(dead); !os.IsNotExist(err) {
			t.Errorf("prune kept a dead build's objects in %s (%v)", dead, err)
		}
		if trees, _ := filepath.Glob(filepath.Join(string(cache), "build", "src-*")); len(trees) > 0 {
			t.Errorf("prune kept the unpacked kernel source %v", trees)
		}
	}
	if !strings.Contains(r.stdout, "removed") {
		t.Errorf("prune output %q", r.stdout)
	}
	for _, f := range []string{st.Snapshot, st.Initrd} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("prune kept %s with no VM up", f)
		}
	}
	st = itUp(t, p.Name, "prune")
	if st.Boot != "cold, snapshot saved" {
		t.Errorf("boot after prune: %q, want cold, snapshot saved", st.Boot)
	}
	itMust(t, itCallTimeout, nil, "exec", "--", "true")
}

// TestIntegrationImageRm: a kernel imported under another id (the era
// kernel's bzImage, so the two share a blob) boots a profile of its own;
// `lab image rm` refuses it while that VM is up, then removes it and
// nothing the era kernel still uses.
func TestIntegrationImageRm(t *testing.T) {
	era := itProfile(t, "celeron-2.4-era")
	itBootEnv(t, era)
	cache := envCache(t)
	k, err := cache.LoadKernel(era.Kernel)
	if err != nil {
		t.Fatal(err)
	}
	const id = "it-rm-kernel"
	t.Cleanup(func() { cache.RemoveKernel(id) })
	itMust(t, itCallTimeout, nil, "image", "import", id, "--arch", "i386", "--kernel", cache.BlobPath(k.Vmlinuz))
	file := filepath.Join(t.TempDir(), "it-rm.yaml")
	prof := "name: it-rm\nsummary: celeron-2.4's machine on an imported copy of the era kernel\narch: i386\nmachine: pc\n" +
		"cpu: {model: qemu32}\ntopology: {sockets: 1, cores: 1, threads: 1}\nmemory_mb: 256\nkernel: " + id + "\n"
	if err := os.WriteFile(file, []byte(prof), 0o644); err != nil {
		t.Fatal(err)
	}
	itUp(t, "it-rm", "rm", "--cold", "--profile-file", file)
	r := itLab(t, itCallTimeout, nil, "image", "rm", id)
	if r.code == 0 || !strings.Contains(r.stderr, "vm rm is up on it; `lab down rm` first (nothing was removed)") {
		t.Fatalf("lab image rm of a kernel a VM is up on: exit %d, %s", r.code, r.stderr)
	}
	if _, err := cache.LoadKernel(id); err != nil {
		t.Fatalf("the refused rm removed something: %v", err)
	}
	itMust(t, itCallTimeout, nil, "down", "rm")
	r = itMust(t, itCallTimeout, nil, "image", "rm", id)
	if !strings.Contains(r.stdout, "removed kernel "+id) {
		t.Errorf("lab image rm: %q", r.stdout)
	}
	if list := itMust(t, itCallTimeout, nil, "image", "list").stdout; strings.Contains(list, id) {
		t.Errorf("lab image list still shows %s:\n%s", id, list)
	}
	if _, err := cache.LoadKernel(era.Kernel); err != nil {
		t.Errorf("removing %s broke %s, which shares its image: %v", id, era.Kernel, err)
	}
	r = itLab(t, itCallTimeout, nil, "image", "rm", id)
	if r.code == 0 || !strings.Contains(r.stderr, "kernel "+id+" is not in the cache") {
		t.Errorf("lab image rm of a kernel not in the cache: exit %d, %s", r.code, r.stderr)
	}
}
