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

// TestUpProfile: what lab up boots, and each refusal before it boots.
func TestUpProfile(t *testing.T) {
	r := Roots{Profiles: t.TempDir()}
	p, c, err := UpProfile(r, "celeron-2.4", nil, "icount:1", 0)
	if err != nil || p.Name != "celeron-2.4" || c.String() != "icount:1" {
		t.Fatalf("UpProfile = %s, %v, %v", p.Name, c, err)
	}
	if _, _, err := UpProfile(r, "celeron-2.4", nil, "", 512); err != nil {
		t.Errorf("--memory 512: %v", err)
	}
	for _, tt := range []struct {
		name, clock string
		memory      int
		want        string
	}{
		{"pdp-11", "", 0, "pdp-11"},
		{"celeron-2.4", "sundial", 0, "sundial"},
		{"celeron-2.4", "", -1, "--memory -1: must be a positive number of MB"},
		{"celeron-2.4", "", 1 << 20, "--memory 1048576: "},
	} {
		if _, _, err := UpProfile(r, tt.name, nil, tt.clock, tt.memory); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("UpProfile(%s, clock %q, memory %d) = %v, want %q", tt.name, tt.clock, tt.memory, err, tt.want)
		}
	}
}
