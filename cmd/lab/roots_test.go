package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lab/images"
	"lab/internal/labtest"
	"lab/vm"
)

// getenv reads a fixed environment.
func getenv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// envCache is the cache a command run now uses: the one this test's
// environment names.
func envCache(t testing.TB) images.Cache { return readRoots(getenvFor(t)).cache }

func TestRootsVM(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lab, xdg, home string
		want           vm.Root
	}{
		{"/l", "/x", "/h", "/l"},
		{"", "/x", "/h", "/x/lab/vms"},
		{"", "", "/h", "/h/.local/state/lab/vms"},
	}
	for _, tt := range tests {
		r := readRoots(getenv(map[string]string{"LAB_STATE_DIR": tt.lab, "XDG_STATE_HOME": tt.xdg, "HOME": tt.home}))
		if r.vm != tt.want {
			t.Errorf("vm root with LAB_STATE_DIR=%q XDG_STATE_HOME=%q HOME=%q = %q, want %q", tt.lab, tt.xdg, tt.home, r.vm, tt.want)
		}
	}
}

func TestRootsResults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, labDir, xdg, home, want string
	}{
		{"explicit", "/r", "/x", "/h", "/r"},
		{"xdg", "", "/x", "/h", "/x/lab/results"},
		{"home", "", "", "/h", "/h/.local/share/lab/results"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := readRoots(getenv(map[string]string{"LAB_RESULTS_DIR": tt.labDir, "XDG_DATA_HOME": tt.xdg, "HOME": tt.home}))
			got, err := r.resultsDir()
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("resultsDir() = %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := readRoots(getenv(nil)).resultsDir(); err == nil {
		t.Errorf("resultsDir() without LAB_RESULTS_DIR, XDG_DATA_HOME or HOME = nil error")
	}
}

func TestRootsProfiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, xdg, home, want string
	}{
		{"XDG_CONFIG_HOME", "/c", "/h", "/c/lab/profiles"},
		{"HOME fallback", "", "/h", "/h/.config/lab/profiles"},
		{"relative XDG_CONFIG_HOME ignored", "rel", "/h", "/h/.config/lab/profiles"},
		{"neither", "", "", ""},
	}
	for _, tt := range tests {
		r := readRoots(getenv(map[string]string{"XDG_CONFIG_HOME": tt.xdg, "HOME": tt.home}))
		if r.profiles != tt.want {
			t.Errorf("%s: profiles = %q, want %q", tt.name, r.profiles, tt.want)
		}
	}
}

func TestRootsPlugins(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	if err := os.MkdirAll(filepath.Join(lib, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := readRoots(getenv(map[string]string{"LAB_LIBDIR": lib, "XDG_DATA_HOME": "/d", "HOME": "/h", "LAB_PLUGIN_PATH": "/p1::/p2"}))
	want := []string{filepath.Join(lib, "plugins"), "/d/lab/plugins", "/p1", "/p2"}
	if got := r.plugins.Dirs(); !slices.Equal(got, want) {
		t.Errorf("plugin search path = %q, want %q", got, want)
	}
	if r.libDirs[0] != lib {
		t.Errorf("libDirs = %q, want %s first", r.libDirs, lib)
	}
	r = readRoots(getenv(map[string]string{"HOME": "/h"}))
	if r.plugins.User != "/h/.local/share/lab/plugins" {
		t.Errorf("user plugin dir = %q, want /h/.local/share/lab/plugins", r.plugins.User)
	}
}

func TestRootsCache(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lab, xdg, home, want string
	}{
		{"/l", "/x", "/h", "/l"},
		{"", "/x", "/h", "/x/lab"},
		{"", "rel", "/h", "/h/.cache/lab"},
		{"", "", "/h", "/h/.cache/lab"},
		{"", "", "", "/tmp/lab-cache"},
	}
	for _, tt := range tests {
		r := readRoots(getenv(map[string]string{"LAB_CACHE_DIR": tt.lab, "XDG_CACHE_HOME": tt.xdg, "HOME": tt.home}))
		if string(r.cache) != tt.want {
			t.Errorf("cache with LAB_CACHE_DIR=%q XDG_CACHE_HOME=%q HOME=%q = %q, want %q", tt.lab, tt.xdg, tt.home, r.cache, tt.want)
		}
	}
}

// TestRootsCacheLabtest: the integration tests look for kernels where the
// CLI does (labtest cannot import this package, so it has a copy).
func TestRootsCacheLabtest(t *testing.T) {
	t.Parallel()
	if got, want := readRoots(getenvFor(t)).cache, labtest.Cache(); got != want {
		t.Errorf("roots cache %q, labtest.Cache() %q", got, want)
	}
}

func TestRootsSwitches(t *testing.T) {
	t.Parallel()
	r := readRoots(getenv(map[string]string{"LAB_NO_SNAPSHOT": "1", "LAB_SUPERVISOR_EXE": "/s", peerMemoryEnv: "64"}))
	if !r.noSnapshot || r.supervisorExe != "/s" || r.peerMemory != "64" {
		t.Errorf("roots = %+v, want noSnapshot, supervisor /s, peer memory 64", r)
	}
	o := r.engine().Up(vm.UpOptions{Name: "x"})
	if o.Root != r.vm || o.Cache != r.cache || !o.NoSnapshot || !slices.Equal(o.LibDirs, r.libDirs) || o.Name != "x" {
		t.Errorf("the engine's roots fill in %+v, want the CLI's roots", o)
	}
	if exe, _ := r.supervisor(); exe != "/s" {
		t.Errorf("supervisor() = %q, want /s", exe)
	}
	if o.OwnerPID != 0 {
		t.Errorf("no $LAB_OWNER_PID: VMs owned by %d", o.OwnerPID)
	}
	r = readRoots(getenv(map[string]string{ownerEnv: "4242"}))
	if o := r.engine().Up(vm.UpOptions{}); o.OwnerPID != 4242 {
		t.Errorf("$LAB_OWNER_PID=4242: VMs owned by %d", o.OwnerPID)
	}
	for _, bad := range []string{"me", "0", "-3"} {
		r = readRoots(getenv(map[string]string{ownerEnv: bad}))
		if _, err := r.supervisor(); err == nil || !strings.Contains(err.Error(), "$LAB_OWNER_PID") {
			t.Errorf("$LAB_OWNER_PID=%s: supervisor() = %v, want it refused", bad, err)
		}
	}
}
