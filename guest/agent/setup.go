package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"lab/internal/rlimit"
)

// agent holds the guest-wide state.
type agent struct {
	started      time.Time
	uptimeAtInit float64
	procs        *reaper
	// blobDir keeps pushed content by hash (see put); pluginDir holds the
	// bundles installed from it. Both are RAM, bounded by cacheBudget
	// bytes (0: unbounded) under cacheMu (see cache.go).
	blobDir     string
	pluginDir   string
	cacheBudget int64
	cacheMu     sync.Mutex
	// known is what each blob's file looked like when the agent last
	// stored, checked or used it (see verifyBlob), under cacheMu; hashes
	// counts the blobs re-hashed because they no longer did.
	known  map[string]blobStat
	hashes int
	// runningPaths lists the exe and cwd of running programs (tests
	// replace it); nil reads /proc.
	runningPaths func() []string
	// statfs is the free space of the filesystem holding a path (tests
	// replace it); nil: statSpace.
	statfs func(path string) (fsSpace, error)
	// releaseTimer returns the heap of large puts to the kernel (see
	// releaseSoon).
	releaseMu    sync.Mutex
	releaseTimer *time.Timer
	// powerOff ends the guest (tests replace it).
	powerOff func()

	mu            sync.Mutex // guards what sessions change, below
	uptimeAtReady float64
	sessionID     string
	sessions      int
}

// defaultPath is the PATH of everything the agent starts.
const defaultPath = "/bin:/sbin:/usr/bin:/usr/sbin"

func (a *agent) setup() error {
	mounts := []struct{ src, dst, fs, data string }{
		{"proc", "/proc", "proc", ""},
		{"sysfs", "/sys", "sysfs", ""},
		{"devtmpfs", "/dev", "devtmpfs", ""},
		{"devpts", "/dev/pts", "devpts", "ptmxmode=0666"},
		{"tmpfs", "/tmp", "tmpfs", "mode=1777"},
		{"tmpfs", "/run", "tmpfs", "mode=0755"},
		{"tmpfs", "/dev/shm", "tmpfs", "mode=1777"},
	}
	for _, m := range mounts {
		if err := os.MkdirAll(m.dst, 0o755); err != nil {
			return err
		}
		if err := unix.Mount(m.src, m.dst, m.fs, 0, m.data); err != nil && err != unix.EBUSY {
			return fmt.Errorf("mount %s on %s: %w", m.fs, m.dst, err)
		}
	}
	// /proc is there now: the guest uptime less the time spent so far is
	// when the kernel handed over to /init.
	a.uptimeAtInit = uptime() - time.Since(a.started).Seconds()
	os.Setenv("PATH", defaultPath)
	os.Setenv("HOME", "/root")
	// Before the reaper starts: exec.Cmd waits for its own child, which the
	// reaper's wait4(-1) would otherwise steal.
	if out, err := exec.Command("/bin/busybox", "--install", "-s").CombinedOutput(); err != nil {
		logf("busybox --install: %v: %s", err, out) // a shell is a convenience, not a must
	}
	a.procs = newReaper()
	go a.procs.run()
	t := time.Now()
	if err := loadModules("/lib/modules/lab-modules"); err != nil {
		return err
	}
	if d := time.Since(t); d > 500*time.Millisecond {
		logf("loading modules took %v", d.Round(time.Millisecond))
	}
	if err := loopbackUp(); err != nil {
		logf("lo: %v", err)
	}
	_ = unix.Sethostname([]byte("lab"))
	return applySettings(cmdline())
}

// loadModules loads the kernel modules listed (in dependency order) in the
// file the initramfs builder wrote.
func loadModules(list string) error {
	b, err := os.ReadFile(list)
	if os.IsNotExist(err) {
		return nil // a kernel with everything built in
	}
	if err != nil {
		return err
	}
	for _, path := range strings.Fields(string(b)) {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("module %s: %w", path, err)
		}
		err = unix.FinitModule(int(f.Fd()), "", 0)
		f.Close()
		if err != nil && err != unix.EEXIST {
			return fmt.Errorf("loading module %s: %w", filepath.Base(path), err)
		}
	}
	return nil
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

func cmdline() []string {
	b, _ := os.ReadFile("/proc/cmdline")
	return strings.Fields(string(b))
}

// applySettings applies the lab.* kernel command line parameters the host
// derives from the profile:
//
//	lab.stack=KB          soft RLIMIT_STACK inherited by everything started
//	lab.offline=1,2       CPUs taken offline
//	lab.sysctl=key=value  written under /proc/sys (repeatable)
func applySettings(args []string) error {
	for _, arg := range args {
		key, val, ok := strings.Cut(arg, "=")
		if !ok || !strings.HasPrefix(key, "lab.") {
			continue
		}
		switch key {
		case "lab.stack":
			kb, err := strconv.ParseUint(val, 10, 64)
			if err != nil {
				return fmt.Errorf("lab.stack=%q: %w", val, err)
			}
			var lim unix.Rlimit
			if err := rlimit.Get(unix.RLIMIT_STACK, &lim); err != nil {
				return err
			}
			lim.Cur = kb * 1024
			if lim.Max != unix.RLIM_INFINITY && lim.Max < lim.Cur {
				lim.Max = lim.Cur
			}
			if err := rlimit.Set(unix.RLIMIT_STACK, &lim); err != nil {
				return fmt.Errorf("setting stack limit to %d KB: %w", kb, err)
			}
		case "lab.offline":
			for _, cpu := range strings.Split(val, ",") {
				p := "/sys/devices/system/cpu/cpu" + cpu + "/online"
				if err := os.WriteFile(p, []byte("0"), 0o644); err != nil {
					return fmt.Errorf("taking cpu%s offline: %w", cpu, err)
				}
			}
		case "lab.sysctl":
			k, v, ok := strings.Cut(val, "=")
			if !ok {
				return fmt.Errorf("lab.sysctl=%q: want key=value", val)
			}
			p := "/proc/sys/" + strings.ReplaceAll(k, ".", "/")
			if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
				return fmt.Errorf("sysctl %s=%s: %w", k, v, err)
			}
		}
	}
	return nil
}

func uptime() float64 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}

// cpuinfo returns the first processor's fields from /proc/cpuinfo.
func cpuinfo() map[string]string {
	m := map[string]string{}
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return m
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		line := s.Text()
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

// countCPUs counts the CPUs in a list such as "0-1,3".
func countCPUs(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		if err1 != nil {
			continue
		}
		if !isRange {
			n++
			continue
		}
		b, err2 := strconv.Atoi(hi)
		if err2 == nil && b >= a {
			n += b - a + 1
		}
	}
	return n
}

func memTotalKB() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "MemTotal:"); ok {
			v, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return v
		}
	}
	return 0
}
