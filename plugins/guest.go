//go:build linux

package plugins

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"lab/internal/rlimit"
)

// WorkloadDir returns the directory holding the plugin's workload binaries:
// $LAB_WORKLOAD_DIR if set, else "workload" next to the plugin executable
// (the layout of bin/plugins/NAME/ARCH/).
func WorkloadDir() (string, error) {
	if d := os.Getenv(WorkloadDirEnv); d != "" {
		return d, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find workload dir: %w; set %s", err, WorkloadDirEnv)
	}
	return filepath.Join(filepath.Dir(exe), "workload"), nil
}

// CollectEnv reports what the guest looks like from inside. It never fails:
// what cannot be read stays zero. Libc is left for the caller, who learns
// it from a workload (see WorkloadResult.Libc).
func CollectEnv() GuestEnv {
	env := collectEnvFS(os.DirFS("/"))
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		s := func(b []byte) string { return unix.ByteSliceToString(b) }
		env.KernelRelease = s(u.Release[:])
		env.Uname = strings.Join([]string{s(u.Sysname[:]), s(u.Release[:]), s(u.Version[:]), s(u.Machine[:])}, " ")
	}
	var rl unix.Rlimit
	if err := rlimit.Get(unix.RLIMIT_STACK, &rl); err == nil {
		env.StackKB = -1
		if rl.Cur != unix.RLIM_INFINITY {
			env.StackKB = int64(rl.Cur / 1024)
		}
	}
	return env
}

// collectEnvFS reads the /proc and /sys parts of the environment from root.
func collectEnvFS(root fs.FS) GuestEnv {
	var env GuestEnv
	if b, err := fs.ReadFile(root, "proc/cpuinfo"); err == nil {
		env.CPUModel, env.CPUFamily, env.CPUModelNum = parseCPUInfo(b)
	}
	if b, err := fs.ReadFile(root, "sys/devices/system/cpu/online"); err == nil {
		env.OnlineCPUs, _ = countCPUList(string(b))
	}
	if b, err := fs.ReadFile(root, "sys/devices/system/cpu/present"); err == nil {
		env.PresentCPUs, _ = countCPUList(string(b))
	}
	if b, err := fs.ReadFile(root, "proc/meminfo"); err == nil {
		env.MemTotalKB = parseMemTotal(b)
	}
	return env
}

// parseCPUInfo returns the first processor's model name, family and model.
func parseCPUInfo(b []byte) (name string, family, model int) {
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if seen[k] {
			continue // a later processor
		}
		seen[k] = true
		switch k {
		case "model name":
			name = v
		case "cpu family":
			family, _ = strconv.Atoi(v)
		case "model":
			model, _ = strconv.Atoi(v)
		}
	}
	return name, family, model
}

// countCPUList counts the CPUs in a kernel CPU list such as "0-3,5,7-8".
func countCPUList(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n := 0
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0, fmt.Errorf("cpu list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return 0, fmt.Errorf("cpu list %q: %w", s, err)
			}
		}
		if b < a {
			return 0, fmt.Errorf("cpu list %q: bad range %q", s, part)
		}
		n += b - a + 1
	}
	return n, nil
}

func parseMemTotal(b []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}

// WorkloadValue is one `key value [unit]` line a workload printed.
type WorkloadValue struct {
	Text string // the value as printed
	Unit string // may be empty
}

// WorkloadResult is what one run of a workload produced.
type WorkloadResult struct {
	// Name is the workload's file name, for error messages.
	Name string
	// Values are the workload's `key value [unit]` output lines by key.
	Values map[string]WorkloadValue
	Stdout string
	Stderr string
	// RealS is the workload's own measurement of its run time (its
	// `real_s` line, CLOCK_MONOTONIC inside the guest), or WallS if it
	// printed none.
	RealS float64
	// WallS is the wall time we saw from start to wait, process start-up
	// and exit included.
	WallS float64
	// UserS and SysS are CPU times from wait4's rusage, children included
	// once waited for (as `time` prints them).
	UserS, SysS float64
	MaxRSSKB    int64
}

// Float returns the value of key as a finite number: NaN and ±Inf are
// refused (JSON cannot carry them, and a measurement that came out as one
// is a bug in the workload, not data).
func (r *WorkloadResult) Float(key string) (float64, error) {
	who := "workload"
	if r.Name != "" {
		who += " " + r.Name
	}
	v, ok := r.Values[key]
	if !ok {
		return 0, fmt.Errorf("%s printed no %q line", who, key)
	}
	f, err := strconv.ParseFloat(v.Text, 64)
	switch {
	case nonFiniteText(v.Text):
		return 0, fmt.Errorf("%s: metric %q is %q, not a finite number; fix the workload", who, key, v.Text)
	case err != nil:
		return 0, fmt.Errorf("%s line %q: value %q is not a number", who, key, v.Text)
	}
	return f, nil
}

// Libc returns what the workload said it was linked with ("glibc-2.36"),
// from its `libc` line.
func (r *WorkloadResult) Libc() string { return r.Values["libc"].Text }

// stderrTailBytes bounds the stderr quoted in errors.
const stderrTailBytes = 2048

// RunWorkload runs the workload binary at path as a separate process in its
// own process group and parses what it prints. When ctx is cancelled, the
// whole group (the workload and any children it forked) is killed. A
// non-zero exit or a death by signal is an error quoting the end of its
// stderr; the result is returned with the error so the caller can keep
// what the workload printed.
func RunWorkload(ctx context.Context, path string, args ...string) (*WorkloadResult, error) {
	name := filepath.Base(path)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid: true,
		// If the plugin dies (the agent kills the plugin's group, which
		// does not hold ours), the workload goes too. The signal follows
		// the thread that started the child, hence LockOSThread below.
		Pdeathsig: syscall.SIGKILL,
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second

	kills := oomKills()
	runtime.LockOSThread()
	start := time.Now()
	err := cmd.Start()
	if err == nil {
		// It inherited the plugin's protection (protectFromOOM); a
		// workload runs as any program would.
		_ = os.WriteFile(fmt.Sprintf("/proc/%d/oom_score_adj", cmd.Process.Pid), []byte("0"), 0)
		err = cmd.Wait()
	}
	wall := time.Since(start)
	runtime.UnlockOSThread()
	var oom error
	if k := oomKills(); kills >= 0 && k > kills {
		oom = fmt.Errorf("the guest ran out of memory during workload %s: the kernel's OOM killer killed %d process(es) (see `lab exec VM -- dmesg`)", name, k-kills)
	}

	res := &WorkloadResult{Name: name, Stdout: stdout.String(), Stderr: stderr.String(), WallS: wall.Seconds()}
	res.RealS = res.WallS
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			res.UserS = tvSeconds(ru.Utime)
			res.SysS = tvSeconds(ru.Stime)
			res.MaxRSSKB = int64(ru.Maxrss)
		}
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("workload %s: %w", name, context.Cause(ctx))
	}
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			ws := exit.Sys().(syscall.WaitStatus)
			what := fmt.Sprintf("exited with status %d", ws.ExitStatus())
			if ws.Signaled() {
				what = fmt.Sprintf("killed by signal %s", unix.SignalName(ws.Signal()))
			}
			if oom != nil {
				return res, fmt.Errorf("workload %s %s: %w", name, what, oom)
			}
			return res, fmt.Errorf("workload %s %s: %s", name, what, tail(res.Stderr))
		}
		return res, fmt.Errorf("workload %s: %w", name, err)
	}
	if oom != nil {
		// The workload may not have noticed a process of its own killed:
		// its figures are not of the run asked for.
		return res, oom
	}
	values, err := parseWorkloadOutput(res.Stdout)
	if err != nil {
		return res, fmt.Errorf("workload %s: %w", name, err)
	}
	res.Values = values
	if _, ok := values["real_s"]; ok {
		if res.RealS, err = res.Float("real_s"); err != nil {
			return res, err
		}
	}
	return res, nil
}

// parseWorkloadOutput parses `key value [unit]` lines; blank lines and
// lines starting with # are skipped, anything else is an error. A value
// that reads as a number must be finite: "nan", "inf" (and overflows such
// as 1e999) are refused here, naming the metric, rather than breaking the
// JSON of the run's messages and result later.
func parseWorkloadOutput(out string) (map[string]WorkloadValue, error) {
	values := map[string]WorkloadValue{}
	for i, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || len(f) > 3 {
			return nil, fmt.Errorf("output line %d %q: want `key value [unit]`", i+1, line)
		}
		if _, dup := values[f[0]]; dup {
			return nil, fmt.Errorf("output line %d: key %q printed twice", i+1, f[0])
		}
		if nonFiniteText(f[1]) {
			return nil, fmt.Errorf("output line %d: metric %q is %q, not a finite number; fix the workload", i+1, f[0], f[1])
		}
		v := WorkloadValue{Text: f[1]}
		if len(f) == 3 {
			v.Unit = f[2]
		}
		values[f[0]] = v
	}
	return values, nil
}

// nonFiniteText says whether s reads as NaN or an infinity ("nan", "inf",
// "+Infinity", or a number too large for a float64 such as 1e999).
func nonFiniteText(s string) bool {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return false // not a number at all: text such as "glibc-2.36"
	}
	return math.IsNaN(x) || math.IsInf(x, 0)
}

func tvSeconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

// tail returns the last stderrTailBytes of s, from a line start, or a note
// that s is empty.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "(no stderr)"
	}
	if len(s) > stderrTailBytes {
		s = s[len(s)-stderrTailBytes:]
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
		s = "..." + s
	}
	return s
}

// vmstatPath is where oomKills reads the kernel's count of OOM kills.
var vmstatPath = "/proc/vmstat"

// oomKills is the kernel's count of OOM kills since boot, or -1 if it
// cannot be read.
func oomKills() int64 {
	b, err := os.ReadFile(vmstatPath)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// protectFromOOM makes the plugin the OOM killer's last choice: a
// workload that exhausts the guest's memory (E1's 1000 processes in 256
// MB) must lose a process of its own, not the plugin that reports it.
// Workloads are set back to 0 when they start. Needs root (the guest's
// plugins run as root); elsewhere it does nothing.
func protectFromOOM() {
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("-900"), 0)
}
