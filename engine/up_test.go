package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"lab/images"
)

// TestKernelsToBuild: a matrix builds each missing era kernel once, before
// its cells boot, for the first profile needing it; Debian's kernels
// (fetched) and unknown profiles are not its business.
func TestKernelsToBuild(t *testing.T) {
	t.Parallel()
	r := Roots{Cache: images.Cache(t.TempDir()), Profiles: t.TempDir()}
	kernels, forProfile := KernelsToBuild(r, []string{"celeron-2.4", "p4-2.4-era", "no-such-profile", "celeron-2.4-era", "split-2g2g"}, nil)
	if want := []string{"era-2.4-i386", "split-2g-i386"}; !slices.Equal(kernels, want) {
		t.Errorf("kernels = %v, want %v", kernels, want)
	}
	if want := []string{"p4-2.4-era", "split-2g2g"}; !slices.Equal(forProfile, want) {
		t.Errorf("for profiles %v, want %v", forProfile, want)
	}
}

// TestBuildKernelsStopped: the build's note reaches the observer as a Log
// event, and a stopped build is the matrix's error.
func TestBuildKernelsStopped(t *testing.T) {
	t.Parallel()
	r := Roots{Cache: images.Cache(t.TempDir()), Profiles: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var lines []string
	err := BuildKernels(ctx, r, []string{"p4-2.4-era"}, nil, func(e Event) {
		if l, ok := e.(Log); ok {
			lines = append(lines, l.Line)
		}
	})
	if err == nil || !strings.Contains(err.Error(), "era-2.4-i386") {
		t.Errorf("BuildKernels(stopped) = %v, want an error naming the kernel", err)
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "building kernel era-2.4-i386 for profile p4-2.4-era: first time only") {
		t.Errorf("events %q, want the first-use note first", lines)
	}
}
