// Package labtest holds helpers shared by the integration tests that boot
// real QEMU guests: finding the built guest agents, deciding whether a test
// can run here (skip with a clear message, but fail when $CI is set), a
// cross-process lock so at most one guest boots at a time across the whole
// `go test` run, a short per-test state root, and clean-up of any QEMU or
// supervisor a failed test left behind.
package labtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lab/images"
)

// InCI says whether missing prerequisites must fail rather than skip.
func InCI() bool { return os.Getenv("CI") != "" }

// Unavailable skips t with msg, or fails it when running in CI (where
// `.ci/run` installs everything the integration tests need).
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("%s (CI is set: integration tests must not be skipped)", msg)
	}
	t.Skip(msg)
}

// RepoRoot walks up from the working directory to the directory holding
// the `lab` module's go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "module lab\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod of module lab not found above the working directory")
		}
		dir = parent
	}
}

// SetLibDir makes sure $LAB_LIBDIR names the directory with the built guest
// agents: if unset, the repository's bin/ is used. Call it from TestMain (it
// sets the process environment, which supervisors inherit). It returns the
// directory.
func SetLibDir() (string, error) {
	if d := os.Getenv("LAB_LIBDIR"); d != "" {
		return d, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	d := filepath.Join(root, "bin")
	return d, os.Setenv("LAB_LIBDIR", d)
}

// LibDir is $LAB_LIBDIR, or the repository's bin/.
func LibDir() string {
	if d := os.Getenv("LAB_LIBDIR"); d != "" {
		return d
	}
	if root, err := RepoRoot(); err == nil {
		return filepath.Join(root, "bin")
	}
	return "bin"
}

// Cache is the cache the integration tests boot from: the one lab uses and
// `make setup` fills ($LAB_CACHE_DIR, else $XDG_CACHE_HOME/lab, else
// ~/.cache/lab). The CLI resolves it in cmd/lab/roots.go, which a test
// here cannot import; cmd/lab's TestRootsCacheLabtest checks the two
// agree.
func Cache() images.Cache { return images.DefaultCache(os.Getenv) }

// RequireBoot checks that t can boot guests of the given archs: not -short,
// QEMU installed, the guest agent built, the profiles' kernels and the
// busybox binaries in the cache (Cache). Otherwise it skips (fails in CI)
// saying what is missing and how to get it.
func RequireBoot(t testing.TB, profiles ...images.Profile) {
	t.Helper()
	if testing.Short() {
		t.Skip("boots QEMU guests under TCG (~10-15 s each); skipped with -short")
	}
	seen := map[string]bool{}
	for _, p := range profiles {
		if !seen["qemu-"+p.Arch] {
			seen["qemu-"+p.Arch] = true
			bin := "qemu-system-i386"
			if p.Arch != "i386" {
				bin = "qemu-system-x86_64"
			}
			if _, err := exec.LookPath(bin); err != nil {
				Unavailable(t, "%s not installed: run `make setup` (apt-get install qemu-system-x86)", bin)
			}
		}
		if !seen["agent-"+p.Arch] {
			seen["agent-"+p.Arch] = true
			a := filepath.Join(LibDir(), "agent-"+p.Arch)
			if _, err := os.Stat(a); err != nil {
				Unavailable(t, "guest agent %s missing: run `make build` (or set LAB_LIBDIR to the directory holding agent-%s)", a, p.Arch)
			}
		}
		if !seen["kernel-"+p.Kernel] {
			seen["kernel-"+p.Kernel] = true
			if _, err := Cache().LoadKernel(p.Kernel); err != nil {
				Unavailable(t, "profile %s: %v (run `make setup-all`)", p.Name, err)
			}
		}
		if !seen["busybox-"+p.Arch] {
			seen["busybox-"+p.Arch] = true
			if _, err := Cache().LoadBusybox(p.Arch); err != nil {
				Unavailable(t, "profile %s: %v (run `make setup`)", p.Name, err)
			}
		}
	}
}

// LockBoots takes a lock shared by every test process on this machine and
// holds it until t ends, so at most one test guest runs at a time: two TCG
// guests booting at once on 2 cores can starve each other's timer
// calibration and hang a boot.
func LockBoots(t testing.TB) {
	t.Helper()
	path := filepath.Join(os.TempDir(), "lab-test-boot.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatalf("boot lock: %v", err)
	}
	start := time.Now()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("boot lock %s: %v", path, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Logf("waited %v for the boot lock %s", d.Round(time.Millisecond), path)
	}
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}

// TempRoot makes a short, private state root (unix socket paths must stay
// under 108 bytes, which t.TempDir's long names can break) and on clean-up
// kills any process whose command line still names it, then removes it.
func TempRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "labt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if pids := KillProcs(dir); len(pids) > 0 {
			t.Errorf("processes naming %s were still running at the end of the test and were killed: %v", dir, pids)
		}
		os.RemoveAll(dir)
	})
	return dir
}

// Proc is a running process.
type Proc struct {
	PID     int
	Cmdline string
}

func (p Proc) String() string { return fmt.Sprintf("%d %q", p.PID, p.Cmdline) }

// Procs lists the processes (other than this one) whose command line
// contains substr.
func Procs(substr string) []Proc {
	des, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []Proc
	for _, de := range des {
		pid, err := strconv.Atoi(de.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + de.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue // gone, or a zombie / kernel thread
		}
		cmd := strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " ")
		if strings.Contains(cmd, substr) {
			out = append(out, Proc{PID: pid, Cmdline: cmd})
		}
	}
	return out
}

// KillProcs SIGKILLs every process whose command line contains substr and
// returns them.
func KillProcs(substr string) []Proc {
	procs := Procs(substr)
	for _, p := range procs {
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
	}
	return procs
}

// WaitNoProcs waits up to d for no process naming substr to remain and
// returns those still there.
func WaitNoProcs(substr string, d time.Duration) []Proc {
	deadline := time.Now().Add(d)
	for {
		procs := Procs(substr)
		if len(procs) == 0 || time.Now().After(deadline) {
			return procs
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// PIDAlive says whether pid exists and is not a zombie.
func PIDAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// state is the field after the parenthesised command name
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	return s[i+2] != 'Z'
}
