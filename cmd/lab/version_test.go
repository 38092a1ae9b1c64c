package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"lab/internal/labtest"
)

func TestVersionFlag(t *testing.T) {
	cliEnv(t)
	r := cliRun(t, "--version")
	// The test binary has no -ldflags and no VCS stamp.
	wantOutput(t, r, "--version", 0, "stdout", "lab version ", "(commit ")
	if want := "lab version " + versionString(buildVersion()) + "\n"; r.stdout != want {
		t.Errorf("lab --version = %q, want %q", r.stdout, want)
	}
}

func TestVersionString(t *testing.T) {
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20260102-abcdef"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}
	tests := []struct {
		name string
		ld   buildInfo // what -ldflags set
		info *debug.BuildInfo
		want string
	}{
		{"ldflags", buildInfo{version: "v1.2.0", commit: "0123abc"}, stamped, "v1.2.0 (commit 0123abc)"},
		{"ldflags dirty describe", buildInfo{version: "a91e54d-dirty", commit: "a91e54d0"}, &debug.BuildInfo{}, "a91e54d-dirty (commit a91e54d0)"},
		{"vcs stamp fallback", buildInfo{}, stamped, "v0.0.0-20260102-abcdef (commit abcdef0123-dirty)"},
		{"clean vcs stamp", buildInfo{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "ff00"}, {Key: "vcs.modified", Value: "false"}}}, "dev (commit ff00)"},
		{"nothing known", buildInfo{}, &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev (commit unknown)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionString(fromBuildInfo(tt.ld, tt.info)); got != tt.want {
				t.Errorf("version = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVersionBuilt builds lab the way the Makefile does (-ldflags -X) and
// without flags but with the VCS stamp, and runs --version on each.
func TestVersionBuilt(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	root, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	dir := t.TempDir()
	build := func(name string, args ...string) string {
		t.Helper()
		out := filepath.Join(dir, name)
		cmd := exec.Command(goBin, append(append([]string{"build"}, args...), "-o", out, "./cmd/lab")...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOFLAGS=")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", args, err, b)
		}
		v, err := exec.Command(out, "--version").Output()
		if err != nil {
			t.Fatalf("%s --version: %v", name, err)
		}
		return string(v)
	}
	if got, want := build("ld", "-ldflags", "-X main.version=v9.9.9 -X main.commit=c0ffee"), "lab version v9.9.9 (commit c0ffee)\n"; got != want {
		t.Errorf("with -ldflags: %q, want %q", got, want)
	}
	got := build("vcs", "-buildvcs=true")
	if !strings.HasPrefix(got, "lab version ") || !strings.Contains(got, "(commit "+strings.TrimSpace(string(head))) {
		t.Errorf("with the VCS stamp only: %q, want commit %s", got, head)
	}
}
