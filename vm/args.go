// Package vm runs one QEMU machine on the host: the pure Args builder, the
// process lifecycle, QMP control through digitalocean/go-qemu, the
// accelerator probe, console log and panic detection, and the per-VM
// supervisor with its state directory.
package vm

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"lab/images"
	"lab/vm/link"
)

// Clock is how guest time relates to host time (images.Clock, the one
// clock type).
type Clock = images.Clock

// ParseClock parses "host", "icount" (shift 0) or "icount:SHIFT", the same
// syntax as a profile's clock field.
func ParseClock(s string) (Clock, error) { return images.ParseClock(s) }

// CheckClock refuses clocks the profile cannot boot with, before anything
// expensive happens.
func CheckClock(p images.Profile, accel string, c Clock) error {
	if !c.ICount() {
		return nil
	}
	if accel == "kvm" {
		return fmt.Errorf("clock icount needs the tcg accelerator, not kvm")
	}
	if p.Topology.OnlineCPUs() != 1 {
		return fmt.Errorf("clock icount needs exactly one online CPU; profile %s brings %d online (under icount QEMU 7.2 hangs SMP bring-up, and one instruction counter for all CPUs could show no speedup: docs/icount-smp.md); use --clock host", p.Name, p.Topology.OnlineCPUs())
	}
	return nil
}

// Options are the inputs of Args: plain data.
type Options struct {
	Profile images.Profile
	// Kernel and Initrd are host paths.
	Kernel, Initrd string
	// StateDir holds the sockets and the console log.
	StateDir string
	// Accel is "kvm" or "tcg" (already decided: see ProbeKVM).
	Accel string
	Clock Clock
	// MemoryMB overrides the profile's memory when non-zero.
	MemoryMB int
	// Link is the device the host-guest link runs over (images.LinkPort,
	// LinkHVC, LinkUART; "" is LinkPort): the kernel's (Kernel.LinkOf).
	Link string
}

// linkDevices are the QEMU arguments that carry the link's chardev into
// the guest, and the guest device it appears as ("" for a named
// virtio-serial port, which the agent finds by name).
func linkDevices(kind string) (args []string, guestDev string, err error) {
	switch kind {
	case "", images.LinkPort:
		return []string{"-device", "virtio-serial-pci", "-device", "virtserialport,chardev=link,name=" + link.PortName}, "", nil
	case images.LinkHVC:
		// A virtconsole takes port 0, the one port a driver without
		// multiport (2.6.32) sees: /dev/hvc0.
		return []string{"-device", "virtio-serial-pci", "-device", "virtconsole,chardev=link"}, "hvc0", nil
	case images.LinkUART:
		return []string{"-serial", "chardev:link"}, "ttyS1", nil
	}
	return nil, "", fmt.Errorf("link %q: want %s, %s or %s", kind, images.LinkPort, images.LinkHVC, images.LinkUART)
}

// Binary returns the QEMU system emulator for arch.
func Binary(arch string) string {
	if arch == "i386" {
		return "qemu-system-i386"
	}
	return "qemu-system-x86_64"
}

// CPUArg renders the -cpu value: base model, CPUID identity and flag
// changes. A comma inside model-id is escaped as ",,".
func CPUArg(c images.CPU) string {
	parts := []string{c.Model}
	if c.Vendor != "" {
		parts = append(parts, "vendor="+c.Vendor)
	}
	if c.Family != 0 {
		parts = append(parts, "family="+strconv.Itoa(c.Family))
	}
	if c.ModelNumber != 0 {
		parts = append(parts, "model="+strconv.Itoa(c.ModelNumber))
	}
	if c.Stepping != 0 {
		parts = append(parts, "stepping="+strconv.Itoa(c.Stepping))
	}
	if c.ModelID != "" {
		parts = append(parts, "model-id="+strings.ReplaceAll(c.ModelID, ",", ",,"))
		if noBrandLeaves[c.Model] {
			// The brand string lives in CPUID leaves 0x80000002-4, which
			// these models do not expose: without them the guest would
			// show the kernel's own name instead of model-id.
			parts = append(parts, "xlevel=0x80000004")
		}
	}
	for _, f := range c.Add {
		parts = append(parts, "+"+f)
	}
	for _, f := range c.Drop {
		parts = append(parts, "-"+f)
	}
	return strings.Join(parts, ",")
}

// noBrandLeaves are QEMU CPU models without extended CPUID leaves.
var noBrandLeaves = map[string]bool{"486": true, "pentium": true, "pentium2": true, "pentium3": true}

// Cmdline is the kernel command line for a profile.
func Cmdline(p images.Profile) string {
	args := []string{
		"console=ttyS0,115200",
		"panic=-1",   // reboot at once on panic; -no-reboot turns that into exit
		"oops=panic", // an oops in PID 1's path is as fatal as a panic
		"loglevel=4", // the console is emulated: printing costs boot time
		"noisapnp",   // ISA PnP probing costs ~0.35 s under TCG
		// The crypto API's self-tests at boot take ~2.8 s of emulated
		// time (measured with initcall_debug); they test the kernel's
		// ciphers, nothing a benchmark here measures.
		"cryptomgr.notests=1",
		"rdinit=/init",
		// The guest's plugins learn what machine they run on from these
		// (printfbench names the profile when its VTs show nothing); the
		// agent ignores lab.* keys it does not apply.
		"lab.profile=" + p.Name,
		"lab.console=" + p.ConsoleKind(),
	}
	if p.ConsoleKind() == "fb" {
		// QEMU's loader hands vga= to the kernel's real-mode setup, which
		// sets the VESA mode through SeaBIOS's VGA BIOS before the kernel
		// starts; vesafb then takes the mode and fbcon draws the VTs on it.
		args = append(args, "vga="+images.FBMode)
	}
	if p.Topology.OnlineCPUs() < p.Topology.Present() {
		args = append(args, "maxcpus="+strconv.Itoa(p.Topology.OnlineCPUs()))
	}
	if p.Guest.StackKB > 0 {
		args = append(args, "lab.stack="+strconv.Itoa(p.Guest.StackKB))
	}
	if len(p.Guest.OfflineCPUs) > 0 {
		var cpus []string
		for _, c := range p.Guest.OfflineCPUs {
			cpus = append(cpus, strconv.Itoa(c))
		}
		args = append(args, "lab.offline="+strings.Join(cpus, ","))
	}
	for _, k := range slices.Sorted(maps.Keys(p.Guest.Sysctls)) {
		args = append(args, "lab.sysctl="+k+"="+p.Guest.Sysctls[k])
	}
	if p.Cmdline != "" {
		args = append(args, p.Cmdline)
	}
	return strings.Join(args, " ")
}

// Args returns the QEMU argv (binary first) for o. It has no side effects.
func Args(o Options) ([]string, error) {
	p := o.Profile
	if o.Accel != "kvm" && o.Accel != "tcg" {
		return nil, fmt.Errorf("accelerator %q: want kvm or tcg", o.Accel)
	}
	if err := CheckClock(p, o.Accel, o.Clock); err != nil {
		return nil, err
	}
	mem := p.MemoryMB
	if o.MemoryMB > 0 {
		mem = o.MemoryMB
	}
	machine := p.Machine
	if machine == "" {
		machine = "pc"
	}
	accel := "kvm"
	if o.Accel == "tcg" {
		accel = "tcg,thread=multi"
		if o.Clock.ICount() || p.Topology.Present() == 1 {
			accel = "tcg,thread=single"
		}
	}
	t := p.Topology
	argv := []string{
		Binary(p.Arch),
		"-name", p.Name,
		"-machine", machine,
		"-accel", accel,
		"-cpu", CPUArg(p.CPU),
		"-smp", fmt.Sprintf("cpus=%d,sockets=%d,cores=%d,threads=%d", t.Present(), t.Sockets, t.Cores, t.Threads),
		"-m", strconv.Itoa(mem),
		"-nodefaults", "-no-reboot", "-no-user-config",
		"-display", "none",
	}
	if o.Clock.ICount() {
		argv = append(argv, "-icount", fmt.Sprintf("shift=%d,sleep=off", o.Clock.Shift))
	}
	if images.HasVTs(p.ConsoleKind()) {
		// An emulated VGA card with no window: the guest's tty1..tty6 are
		// drawn on it (text mode, or the VESA mode of console fb), one
		// shown at a time, while the serial port stays the kernel console.
		argv = append(argv, "-vga", "std")
	}
	linkArgs, linkDev, err := linkDevices(o.Link)
	if err != nil {
		return nil, err
	}
	cmdline := Cmdline(p)
	if linkDev != "" {
		cmdline += " lab.link=" + linkDev
	}
	argv = append(argv,
		"-kernel", o.Kernel,
		"-initrd", o.Initrd,
		"-append", cmdline,
		"-chardev", "file,id=con,path="+filepath.Join(o.StateDir, ConsoleLog)+",append=on",
		"-serial", "chardev:con",
		"-chardev", "socket,id=link,path="+filepath.Join(o.StateDir, LinkSock)+",server=on,wait=off",
	)
	argv = append(argv, linkArgs...)
	argv = append(argv,
		"-qmp", "unix:"+filepath.Join(o.StateDir, QMPSock)+",server=on,wait=off",
	)
	return argv, nil
}

// Files in a VM's state directory.
const (
	ConsoleLog = "console.log"
	// StalledConsoleLog is the console of a cold boot that stalled and
	// was booted again (stall.go).
	StalledConsoleLog = "console.stalled.log"
	LinkSock          = "link.sock"
	QMPSock           = "qmp.sock"
	CtlSock           = "ctl.sock"
	StateFile         = "state.json"
	ConfigFile        = "config.json"
	SupervisorLog     = "supervisor.log"
)

// CheckCPUModel says why QEMU for arch (looked for in path, $PATH's
// form) has no CPU model named model (`qemu-system-ARCH -cpu help`), nil
// if it has one or QEMU cannot be asked (`lab up` then says QEMU is
// missing).
func CheckCPUModel(path, arch, model string) error {
	qemu, err := LookQEMU(path, arch)
	if err != nil {
		return nil
	}
	out, err := exec.Command(qemu, "-cpu", "help").Output()
	if err != nil {
		return nil
	}
	models := parseCPUHelp(string(out))
	if len(models) == 0 || slices.Contains(models, model) {
		return nil
	}
	return fmt.Errorf("cpu.model: %s has no CPU model %q (`%s -cpu help` lists its %d: %s ...)", Binary(arch), model, Binary(arch), len(models), strings.Join(models[:min(8, len(models))], ", "))
}

// parseCPUHelp reads the model names of `qemu-system-x86 -cpu help`:
// lines "x86 NAME  (description)" up to the flags list.
func parseCPUHelp(out string) []string {
	var models []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "x86" {
			models = append(models, f[1])
		}
	}
	return models
}
