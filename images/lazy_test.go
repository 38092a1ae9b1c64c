package images

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNeedsBuild: a profile's kernel is built on first use only when lab
// has a recipe for it and the cache has no kernel of that id; a kernel
// lab fetches (or one a user imports) is never built behind their back.
func TestNeedsBuild(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	img := fakeBzImage(t, "6.1.0-lab (root@host) #1")
	if _, err := cache.ImportKernel("split-1g-i386", "i386", img, ""); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"era-2.4-i386", true},     // a recipe, not built
		{"split-1g-i386", false},   // a recipe's id, already in the cache
		{"debian-6.1-686", false},  // fetched, not built
		{"my-own-kernel", false},   // no recipe: imported by the user
		{"../era-2.4-i386", false}, // not a kernel id
	} {
		if got := cache.NeedsBuild(tc.id); got != tc.want {
			t.Errorf("NeedsBuild(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

// TestBuildEstimate: the estimate is this machine's own figure (the
// median of the builds recorded in its cache) when it has one, else the
// figure measured on the 2-core development host, saying which.
func TestBuildEstimate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		recorded []float64
		want     time.Duration
		source   string
	}{
		{"none recorded", nil, 7 * time.Minute, "measured on an idle 2-core host"},
		{"one", []float64{300}, 5 * time.Minute, "the build recorded in this cache"},
		{"median of odd", []float64{908, 400, 1243}, 908 * time.Second, "the median of 3 builds recorded in this cache"},
		{"median of even", []float64{400, 500, 1000, 1300}, 750 * time.Second, "the median of 4 builds recorded in this cache"},
		{"cache hits ignored", []float64{0.1, 0.2}, 7 * time.Minute, "measured on an idle 2-core host"},
	} {
		got := buildEstimate(tc.recorded)
		if got.Typical != tc.want || !strings.Contains(got.Source, tc.source) || got.Local != (tc.want != defaultBuildTime) {
			t.Errorf("%s: buildEstimate(%v) = %+v; want %v from %q", tc.name, tc.recorded, got, tc.want, tc.source)
		}
	}
}

// TestBuildEstimateFromCache reads the seconds of the build records in
// the cache.
func TestBuildEstimateFromCache(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	if got := cache.BuildEstimate(false).Typical; got != defaultBuildTime {
		t.Errorf("empty cache: BuildEstimate() = %v, want %v", got, defaultBuildTime)
	}
	for i, s := range []float64{600, 240, 1200} {
		b := &Build{Key: strings.Repeat(string(rune('a'+i)), 64), Seconds: s}
		if err := writeJSONAtomic(cache.buildManifest(b.Key), b); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(string(cache), "builds", "junk.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := cache.BuildEstimate(false).Typical; got != 10*time.Minute {
		t.Errorf("BuildEstimate() = %v, want 10m0s (the median of 240, 600, 1200 s)", got)
	}
	// An upstream 2.6.32 build takes a fraction of a 6.1 one: its
	// estimate is from upstream builds only, else the figure measured.
	if got := cache.BuildEstimate(true); got.Typical != defaultUpstreamBuildTime || got.Local {
		t.Errorf("no upstream build recorded: BuildEstimate(upstream) = %+v, want %v, not local", got, defaultUpstreamBuildTime)
	}
	b := &Build{Key: strings.Repeat("u", 64), Seconds: 150, Source: Source{Package: "linux", Tree: "ac28e4adaded7a44f9ec43955bb750b321ff27c6"}}
	if err := writeJSONAtomic(cache.buildManifest(b.Key), b); err != nil {
		t.Fatal(err)
	}
	if got := cache.BuildEstimate(true).Typical; got != 150*time.Second {
		t.Errorf("BuildEstimate(upstream) = %v, want 2m30s (the one upstream build)", got)
	}
	if got := cache.BuildEstimate(false).Typical; got != 10*time.Minute {
		t.Errorf("BuildEstimate(6.1) = %v after an upstream build, want still 10m0s", got)
	}
}

func TestLazyBuildMessage(t *testing.T) {
	t.Parallel()
	got := lazyBuildMessage("era-2.4-i386", "p4-2.4-era", BuildTime{908 * time.Second, true, "the median of 3 builds recorded in this cache"}, true)
	want := "building kernel era-2.4-i386 for profile p4-2.4-era: first time only, about 15 min on this machine " +
		"(the median of 3 builds recorded in this cache; niced; Ctrl-C stops it, `make setup-all` builds every era kernel ahead)"
	if got != want {
		t.Errorf("lazyBuildMessage() =\n%s\nwant\n%s", got, want)
	}
	got = lazyBuildMessage("era-2.6-i386", "xeon5130-1core-era", buildEstimate(nil), false)
	for _, want := range []string{"about 7 min on a 2-core host plus downloading the kernel source once", "403-440 s"} {
		if !strings.Contains(got, want) {
			t.Errorf("lazyBuildMessage() = %q, want it to contain %q", got, want)
		}
	}
	if got := lazyBuildMessage("k", "p", BuildTime{20 * time.Second, true, "x"}, true); !strings.Contains(got, "about 1 min") {
		t.Errorf("a build under a minute: %q, want about 1 min", got)
	}
}

// TestEnsureKernelRefusesWithoutRecipe: a kernel lab cannot build is the
// same "not in cache" error as before, and nothing is built.
func TestEnsureKernelNoRecipe(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	var log strings.Builder
	_, err := cache.EnsureKernel(context.Background(), "debian-6.1-686", "celeron-2.4", SourceOptions{}, &log)
	want := "kernel debian-6.1-686 not in cache; run 'make setup' or 'lab image fetch debian-6.1-686'"
	if err == nil || err.Error() != want {
		t.Errorf("EnsureKernel() = %v, want %q", err, want)
	}
	if log.Len() != 0 {
		t.Errorf("EnsureKernel wrote %q for a kernel it does not build", log.String())
	}
}

// TestEnsureKernelStopped: a first-use build says what it is doing before
// it starts, and a build stopped (Ctrl-C: the context ends) fails naming
// the profile, registering nothing.
func TestEnsureKernelStopped(t *testing.T) {
	t.Parallel()
	cache := testCache(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var log strings.Builder
	_, err := cache.EnsureKernel(ctx, "era-2.4-i386", "p4-2.4-era", SourceOptions{}, &log)
	if err == nil || !strings.Contains(err.Error(), "profile p4-2.4-era boots kernel era-2.4-i386") {
		t.Errorf("EnsureKernel(stopped) = %v, want an error naming the profile and the kernel", err)
	}
	if !strings.HasPrefix(log.String(), "building kernel era-2.4-i386 for profile p4-2.4-era: first time only, about ") {
		t.Errorf("EnsureKernel wrote %q, want the first-use note first", log.String())
	}
	if !cache.NeedsBuild("era-2.4-i386") {
		t.Error("a stopped build registered the kernel")
	}
}

func TestNiced(t *testing.T) {
	t.Parallel()
	name, args := niced(19, "make", []string{"-C", "tree", "bzImage"})
	if got := name + " " + strings.Join(args, " "); got != "nice -n 19 make -C tree bzImage" {
		t.Errorf("niced(19) = %q", got)
	}
	if name, args := niced(0, "tar", []string{"-xf", "t"}); name != "tar" || strings.Join(args, " ") != "-xf t" {
		t.Errorf("niced(0) = %q %q, want the command as it is", name, args)
	}
}

// TestHeartbeat: a line a tick while the build runs, none after stop.
func TestHeartbeat(t *testing.T) {
	t.Parallel()
	var w lockedWriter
	var buf strings.Builder
	w.w = &buf
	stop := heartbeat(&w, "era-2.4-i386", 7*time.Minute, 10*time.Millisecond)
	time.Sleep(35 * time.Millisecond)
	stop()
	w.mu.Lock()
	got := buf.String()
	w.mu.Unlock()
	if !strings.HasPrefix(got, "kernel era-2.4-i386: still building, 0 min so far (about 7 expected)\n") {
		t.Errorf("heartbeat wrote %q", got)
	}
	n := strings.Count(got, "\n")
	time.Sleep(30 * time.Millisecond)
	if after := strings.Count(buf.String(), "\n"); after != n {
		t.Errorf("heartbeat wrote %d lines after stop", after-n)
	}
}
