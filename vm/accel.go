package vm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"lab/images"
)

// KVMProbe is the cached result of proving KVM on this host (not a
// claim's verdict: results.Verdict).
type KVMProbe struct {
	BootID string    `json:"boot_id"`
	KVM    bool      `json:"kvm"`
	Reason string    `json:"reason"`
	When   time.Time `json:"when"`
}

// RunProbe proves that accel runs a real guest: it boots kernel with no
// root filesystem, so a working machine panics ("VFS: Unable to mount
// root fs") and, with panic=-1 and -no-reboot, QEMU exits on its own. On
// these hosts /dev/kvm exists and even runs a few real-mode instructions,
// but a real kernel stops with a KVM emulation failure and QEMU hangs with
// the CPU busy, so nothing short of a kernel boot proves KVM.
func RunProbe(ctx context.Context, qemu, accel, kernel string, timeout time.Duration) error {
	dir, err := os.MkdirTemp("", "lab-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	logPath := filepath.Join(dir, "console.log")
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, qemu, "-accel", accel, "-M", "pc", "-m", "64",
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-kernel", kernel, "-append", "console=ttyS0 panic=-1 loglevel=1 root=/dev/lab-probe",
		"-serial", "file:"+logPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("a %s guest did not finish a kernel boot within %v (hung)", accel, timeout)
	}
	if err != nil {
		return fmt.Errorf("%s probe failed: %v: %s", accel, err, firstLine(string(out)))
	}
	log, _ := os.ReadFile(logPath)
	if !strings.Contains(string(log), "Kernel panic") {
		return fmt.Errorf("%s probe: the kernel stopped before the end of its boot", accel)
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// probeTimeout bounds the KVM probe: a working KVM boots to the panic in
// about a second; TCG needs several.
const probeTimeout = 8 * time.Second

func bootID() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}

// ChooseAccel turns --accel auto|kvm|tcg into the accelerator to use.
// auto proves KVM with the probe ROM (cached in cacheDir until the host
// reboots) and falls back to TCG; note is non-empty when the caller should
// tell the user about a fallback (once per verdict).
func ChooseAccel(ctx context.Context, want, qemu, kernel, cacheDir string) (accel, note string, err error) {
	switch want {
	case "tcg":
		return "tcg", "", nil
	case "kvm":
		if _, err := os.Stat("/dev/kvm"); err != nil {
			return "", "", fmt.Errorf("--accel kvm: /dev/kvm is not available (%v); use --accel tcg or auto", err)
		}
		if err := RunProbe(ctx, qemu, "kvm", kernel, probeTimeout); err != nil {
			return "", "", fmt.Errorf("--accel kvm: KVM does not work on this host: %w; use --accel tcg or auto", err)
		}
		return "kvm", "", nil
	case "auto", "":
	default:
		return "", "", fmt.Errorf("--accel %q: want auto, kvm or tcg", want)
	}
	path := filepath.Join(cacheDir, "accel.json")
	var v KVMProbe
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &v) == nil && v.BootID == bootID() {
		if v.KVM {
			return "kvm", "", nil
		}
		return "tcg", "", nil
	}
	v = KVMProbe{BootID: bootID(), When: time.Now()}
	if _, err := os.Stat("/dev/kvm"); err != nil {
		v.Reason = "/dev/kvm is not available"
	} else if err := RunProbe(ctx, qemu, "kvm", kernel, probeTimeout); err != nil {
		v.Reason = err.Error()
	} else {
		v.KVM = true
	}
	if ctx.Err() != nil {
		return "", "", ctx.Err()
	}
	if b, err := json.Marshal(v); err == nil {
		_ = os.MkdirAll(cacheDir, 0o755)
		_ = writeFileAtomic(path, b, 0o644)
	}
	if v.KVM {
		return "kvm", "", nil
	}
	return "tcg", fmt.Sprintf("KVM unusable (%s); using TCG software emulation (verdict cached until the host reboots)", v.Reason), nil
}

// writeFileAtomic writes via a synced temp file and rename: never a
// half-written file.
var writeFileAtomic = images.WriteFileAtomic
