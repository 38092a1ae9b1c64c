package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"lab/engine"
	"lab/vm"
)

// TestIntegrationPreload: the cold boot that saves a booted snapshot puts
// lab's own plugins into the guest's cache first, so the first run of
// forkbench after a restore sends no file; a user plugin is sent on its
// first run in each boot and not on the second; the agent gives back the
// memory the transfers took.
func TestIntegrationPreload(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itTestPlugins(t)
	itBootEnv(t, p)

	// A configuration of its own (256 MB is the profile's; 255 is this
	// test's), so its snapshot can be removed without costing anyone
	// else a cold boot: the first boot here must be the one that saves.
	up := func() *vm.State { return itUp(t, p.Name, "pre", "--memory", "255") }
	st := up()
	if st.Boot != "cold, snapshot saved" {
		itMust(t, itCallTimeout, nil, "down", "pre")
		os.Remove(st.Snapshot)
		os.Remove(st.Snapshot + ".console")
		st = up()
	}
	if st.Boot != "cold, snapshot saved" {
		t.Fatalf("boot %q with no snapshot of the configuration, want cold, snapshot saved", st.Boot)
	}
	snapshot := st.Snapshot
	t.Cleanup(func() { // 80 MB that nothing else uses
		os.Remove(snapshot)
		os.Remove(snapshot + ".console")
	})
	itMust(t, itCallTimeout, nil, "down", "pre")

	st = up()
	if st.Boot != "restored from snapshot" || st.Snapshot != snapshot {
		t.Fatalf("second boot: %q from %s, want restored from snapshot %s", st.Boot, st.Snapshot, snapshot)
	}
	// The restored guest holds the preloaded blobs and nothing installed,
	// and its agent does not keep the preload's buffers.
	g := itMust(t, itCallTimeout, nil, "exec", "--", "sh", "-c",
		"ls /var/lib/lab/blobs | wc -l; ls /var/lib/lab/plugins 2>/dev/null | wc -l; grep VmRSS /proc/1/status").stdout
	// Every built-in plugin's files for the arch, each content once.
	blobs := map[string]bool{}
	files, err := engine.Preload(testRoots(t).plugins, p.Arch)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		blobs[f.SHA256] = true
	}
	f := strings.Fields(g)
	if len(f) < 4 || f[0] != strconv.Itoa(len(blobs)) || f[1] != "0" {
		t.Errorf("restored guest: blobs, installed bundles, agent RSS = %q; want the built-in plugins' %d blobs, no bundle", g, len(blobs))
	} else if rss, _ := strconv.Atoi(f[3]); rss > 10<<10 {
		t.Errorf("agent RSS %d kB in the restored guest: the preload's transfer buffers were not given back", rss)
	}

	res, _ := itRunJSON(t, 0, "forkbench", "-p", "n=50")
	// forkbench is its binary and 3 workloads in 4 builds each.
	const forkbenchFiles = 1 + 3*4
	if h := res.Harness; h == nil || h.FilesSent != 0 || h.FilesCached != forkbenchFiles {
		t.Errorf("first forkbench run after a restore: harness %+v, want 0 files sent, %d cached", h, forkbenchFiles)
	}

	// A user plugin: not preloaded, sent once in this boot.
	first, _ := itRunJSON(t, 0, "labtest", "-e", "ok")
	if h := first.Harness; h == nil || h.FilesSent == 0 {
		t.Fatalf("first run of the user plugin labtest: harness %+v, want its files sent", h)
	}
	n := first.Harness.FilesSent + first.Harness.FilesCached
	second, _ := itRunJSON(t, 0, "labtest", "-e", "ok")
	if h := second.Harness; h == nil || h.FilesSent != 0 || h.FilesCached != n {
		t.Errorf("second run of labtest in the same boot: harness %+v, want 0 sent, %d cached", h, n)
	}
	if g := itMust(t, itCallTimeout, nil, "exec", "--", "grep", "VmRSS", "/proc/1/status").stdout; len(strings.Fields(g)) > 1 {
		if rss, _ := strconv.Atoi(strings.Fields(g)[1]); rss > 12<<10 {
			t.Errorf("agent RSS %d kB after the pushes: their buffers were not given back", rss)
		}
	}
	itMust(t, itCallTimeout, nil, "down", "pre")

	// The next boot restores the same snapshot: forkbench still sends
	// nothing, labtest is sent again (once per boot).
	st = up()
	if st.Boot != "restored from snapshot" {
		t.Fatalf("third boot: %q, want restored from snapshot", st.Boot)
	}
	again, _ := itRunJSON(t, 0, "labtest", "-e", "ok")
	if h := again.Harness; h == nil || h.FilesSent != first.Harness.FilesSent {
		t.Errorf("first labtest run of a new boot: harness %+v, want %d files sent as in the first boot", h, first.Harness.FilesSent)
	}
	res, _ = itRunJSON(t, 0, "forkbench", "-p", "n=50")
	if h := res.Harness; h == nil || h.FilesSent != 0 {
		t.Errorf("forkbench after another restore: harness %+v, want 0 files sent", h)
	}
}

// TestIntegrationPreloadColdBootPushes: a boot that saves no snapshot
// (--cold) preloads nothing: the first run pushes, as before.
func TestIntegrationPreloadColdBootPushes(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itBootEnv(t, p)
	st := itUp(t, p.Name, "precold", "--cold")
	if st.Boot != "cold" {
		t.Fatalf("--cold: boot %q", st.Boot)
	}
	res, _ := itRunJSON(t, 0, "forkbench", "-p", "n=50")
	if h := res.Harness; h == nil || h.FilesSent != 1+3*4 {
		t.Errorf("first run on a --cold boot: harness %+v, want forkbench's 13 files sent (its binary, 3 workloads in 4 builds)", h)
	}
}
