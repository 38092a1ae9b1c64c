package images

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Limits a profile must respect.
const (
	// MinMemoryMB is the least RAM a guest boots the 6.1 kernels with.
	MinMemoryMB = 16
	// MaxMemoryMBi386 caps i386 guests: the non-PAE 686 kernel addresses
	// 4 GiB physical, part of which is the PCI hole; 3 GiB is what the
	// historical 32-bit machines could ever have used.
	MaxMemoryMBi386 = 3072
	// MaxMemoryMBx86_64 keeps a guest from eating a CI host.
	MaxMemoryMBx86_64 = 16384
	// MaxICountShift is the largest accepted icount shift (2^10 ns per
	// guest instruction is already a ~1 MHz machine).
	MaxICountShift = 10
	// maxModelIDLen is the CPUID brand string size (leaves 0x80000002-4).
	maxModelIDLen = 48
)

var (
	// Arches are the guest architectures lab boots.
	Arches = []string{"i386", "x86_64"}
	// Machines are the QEMU machine types a profile may use.
	Machines = []string{"pc", "q35"}
	// Consoles are the accepted console kinds: the serial port only; a
	// VGA text console; a VESA framebuffer console (see FBMode).
	Consoles = []string{"serial", "vga", "fb"}
	// Experiments are the experiments a profile may name: the list in
	// experiments.yaml.
	Experiments = mustExperiments()

	// nameRE admits '_' because the built-in modern-x86_64 needs it.
	nameRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	idRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	flagRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)
	sysctlRE = regexp.MustCompile(`^[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_*:-]+)+$`)
)

// Clock is how guest time relates to host time: a parsed Profile.Clock
// or --clock, and what a VM's state records. It is the one clock type
// (vm.Clock is this one).
type Clock struct {
	// Mode is ClockHost (wall time) or ClockICount (-icount: one guest
	// instruction = 2^Shift ns, deterministic; TCG only, one online CPU
	// only).
	Mode  string `json:"mode"`
	Shift int    `json:"shift,omitempty"`
}

// Clock modes.
const (
	ClockHost   = "host"
	ClockICount = "icount"
)

// ICount says whether c is an icount clock.
func (c Clock) ICount() bool { return c.Mode == ClockICount }

// String renders the clock as --clock takes it: "host" or "icount:N".
func (c Clock) String() string {
	if c.ICount() {
		return fmt.Sprintf("%s:%d", ClockICount, c.Shift)
	}
	return ClockHost
}

// ParseClock parses "host" (or ""), "icount" (shift 0: 1 ns per
// instruction) or "icount:N" with 0 <= N <= MaxICountShift.
func ParseClock(s string) (Clock, error) {
	switch {
	case s == "" || s == ClockHost:
		return Clock{Mode: ClockHost}, nil
	case s == ClockICount:
		return Clock{Mode: ClockICount}, nil
	case strings.HasPrefix(s, ClockICount+":"):
		n, err := strconv.Atoi(strings.TrimPrefix(s, ClockICount+":"))
		if err != nil || n < 0 || n > MaxICountShift {
			return Clock{}, fmt.Errorf("clock: %q has a bad shift; want icount:N with 0 <= N <= %d", s, MaxICountShift)
		}
		return Clock{Mode: ClockICount, Shift: n}, nil
	}
	return Clock{}, fmt.Errorf("clock: %q is not one of host, icount, icount:N (0 <= N <= %d)", s, MaxICountShift)
}

// FBMode is the VESA mode a console "fb" guest boots in (`vga=0x317`:
// 1024x768, 16 bits per pixel, 128x48 characters of 8x16), which the
// kernel's boot code sets through the VGA BIOS and vesafb and fbcon (built
// into Debian's 686 kernel) then draw on.
const FBMode = "0x317"

// HasVTs says whether the console kind shows virtual terminals on an
// emulated screen. With "serial" the kernel's VTs exist too, but nothing
// shows them: there is no display device, and vgacon, finding no EGA/VGA
// reported by the BIOS, binds as "*CGA" and writes into memory that no
// device is behind.
func HasVTs(kind string) bool { return kind == "vga" || kind == "fb" }

// ConsoleKind is the profile's console with the default applied.
func (p Profile) ConsoleKind() string {
	if p.Console == "" {
		return "serial"
	}
	return p.Console
}

// Validate checks every field and reports all problems at once, each naming
// the field (as spelled in profile files) and what is allowed.
//
// CPU model ids may contain commas: the profile holds the string the guest
// should see, and the VM builder doubles commas for QEMU's option syntax.
// Writing ",," here is therefore refused, as it would show up doubled.
func (p Profile) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}

	if !nameRE.MatchString(p.Name) {
		bad("name", "%q must match %s (lowercase letters, digits, '.', '_', '-')", p.Name, nameRE)
	}
	for _, e := range p.Experiments {
		if !slices.Contains(Experiments, e) {
			bad("experiments", "%q is not one of %s", e, strings.Join(Experiments, ", "))
		}
	}
	if !slices.Contains(Arches, p.Arch) {
		bad("arch", "%q is not one of %s", p.Arch, strings.Join(Arches, ", "))
	}
	if !slices.Contains(Machines, p.Machine) {
		bad("machine", "%q is not one of %s", p.Machine, strings.Join(Machines, ", "))
	}

	// CPU identity.
	c := p.CPU
	if c.Model == "" {
		bad("cpu.model", "must name a QEMU CPU model (qemu32, pentium3, core2duo, max...)")
	} else if !flagRE.MatchString(c.Model) {
		bad("cpu.model", "%q is not a QEMU CPU model name", c.Model)
	}
	if len(c.ModelID) > maxModelIDLen {
		bad("cpu.model_id", "%q is %d bytes; CPUID brand strings hold at most %d", c.ModelID, len(c.ModelID), maxModelIDLen)
	}
	if strings.Contains(c.ModelID, ",,") {
		bad("cpu.model_id", "%q contains ',,': write a comma once, lab escapes it for QEMU", c.ModelID)
	}
	for _, r := range c.ModelID {
		if r < 0x20 || r > 0x7e {
			bad("cpu.model_id", "%q must be printable ASCII", c.ModelID)
			break
		}
	}
	if c.Vendor != "" && len(c.Vendor) != 12 {
		bad("cpu.vendor", "%q must be exactly 12 characters (GenuineIntel, AuthenticAMD...)", c.Vendor)
	}
	if c.Family < 0 || c.Family > 0xff+0xf {
		bad("cpu.family", "%d out of range 0..%d (0 keeps the model's)", c.Family, 0xff+0xf)
	}
	if c.ModelNumber < 0 || c.ModelNumber > 0xff {
		bad("cpu.model_number", "%d out of range 0..255 (0 keeps the model's)", c.ModelNumber)
	}
	if c.Stepping < 0 || c.Stepping > 0xf {
		bad("cpu.stepping", "%d out of range 0..15 (0 keeps the model's)", c.Stepping)
	}
	for _, list := range []struct {
		field string
		flags []string
	}{{"cpu.drop", c.Drop}, {"cpu.add", c.Add}} {
		for _, f := range list.flags {
			if !flagRE.MatchString(f) {
				bad(list.field, "%q is not a CPUID flag name (lowercase, as QEMU spells them)", f)
			}
		}
	}
	for _, f := range c.Drop {
		if slices.Contains(c.Add, f) {
			bad("cpu.add", "%q is also in cpu.drop", f)
		}
	}

	// Topology.
	t := p.Topology
	countsOK := true
	for _, n := range []struct {
		field string
		v     int
	}{{"topology.sockets", t.Sockets}, {"topology.cores", t.Cores}, {"topology.threads", t.Threads}} {
		if n.v < 1 {
			bad(n.field, "%d must be at least 1", n.v)
			countsOK = false
		}
	}
	if countsOK {
		if t.Online < 0 || t.Online > t.Present() {
			bad("topology.online", "%d out of range 0..%d (0 means all %d present CPUs)", t.Online, t.Present(), t.Present())
		}
	}

	// Memory.
	if err := CheckMemory(p.Arch, p.MemoryMB); err != nil {
		bad("memory_mb", "%v", err)
	}

	// Kernel.
	if p.Kernel == "" {
		bad("kernel", "must name a kernel id (%s, or one imported with 'lab image import')", strings.Join(KernelIDs(), ", "))
	} else if !idRE.MatchString(p.Kernel) {
		bad("kernel", "%q is not a kernel id", p.Kernel)
	} else if src, ok := kernelSources[p.Kernel]; ok && slices.Contains(Arches, p.Arch) && src.Arch != p.Arch {
		bad("kernel", "%s is an %s kernel but arch is %s", p.Kernel, src.Arch, p.Arch)
	} else if r, ok := Recipes[p.Kernel]; ok && slices.Contains(Arches, p.Arch) && r.Arch != p.Arch {
		bad("kernel", "%s is an %s kernel but arch is %s", p.Kernel, r.Arch, p.Arch)
	}
	if strings.ContainsAny(p.Cmdline, "\n\r\x00") {
		bad("cmdline", "must be one line")
	}

	// Guest settings.
	g := p.Guest
	if g.StackKB < 0 {
		bad("guest.stack_kb", "%d must be >= 0 (0 keeps the kernel default, 8192)", g.StackKB)
	}
	if countsOK {
		online := t.OnlineCPUs()
		seen := map[int]bool{}
		for _, cpu := range g.OfflineCPUs {
			switch {
			case cpu == 0:
				bad("guest.offline_cpus", "cpu 0 cannot be taken offline (the x86 kernel keeps the boot CPU); use topology.online to boot fewer CPUs")
			case cpu < 0 || cpu >= online:
				bad("guest.offline_cpus", "cpu %d out of range 1..%d (the CPUs brought online)", cpu, online-1)
			case seen[cpu]:
				bad("guest.offline_cpus", "cpu %d listed twice", cpu)
			}
			seen[cpu] = true
		}
		if len(seen) >= online && len(seen) > 0 {
			bad("guest.offline_cpus", "would take all %d online CPUs offline; at least one must stay", online)
		}
	}
	for k := range g.Sysctls {
		if !sysctlRE.MatchString(k) || strings.Contains(k, "..") {
			bad("guest.sysctls", "%q is not a dotted sysctl key (kernel.threads-max...)", k)
		}
	}

	// Console and clock.
	if p.Console != "" && !slices.Contains(Consoles, p.Console) {
		bad("console", "%q is not one of %s", p.Console, strings.Join(Consoles, ", "))
	}
	if clk, err := ParseClock(p.Clock); err != nil {
		errs = append(errs, err)
	} else if clk.ICount() && countsOK && t.OnlineCPUs() != 1 {
		// Measured: QEMU's icount runs all vCPUs on one thread and the
		// 6.1 kernel hangs at "Booting SMP configuration" with two online.
		bad("clock", "%q needs exactly one online CPU (topology.online: 1), this profile brings %d online: with icount a multi-CPU guest hangs at SMP bring-up", p.Clock, t.OnlineCPUs())
	}

	// Calibration.
	if k := p.Calibration; k != nil {
		if !(k.InstrPerNsLo > 0 && k.InstrPerNsLo <= k.InstrPerNsHi) || math.IsInf(k.InstrPerNsHi, 0) {
			bad("calibration.instr_per_ns_lo", "%v..%v: want 0 < instr_per_ns_lo <= instr_per_ns_hi, finite (instructions per ns of the original machine)",
				k.InstrPerNsLo, k.InstrPerNsHi)
		}
		if strings.TrimSpace(k.Basis) == "" {
			bad("calibration.basis", "must say where the interval comes from (clock x IPC, and the source of the IPC)")
		}
		if !slices.Contains(Confidences, k.Confidence) {
			bad("calibration.confidence", "%q is not one of %s", k.Confidence, strings.Join(Confidences, ", "))
		}
	}

	if len(errs) == 0 {
		return nil
	}
	name := p.Name
	if name == "" {
		name = "(unnamed)"
	}
	return fmt.Errorf("profile %s: %w", name, errors.Join(errs...))
}

// CheckMemory says whether a guest of arch can have mb MB of RAM: at least
// MinMemoryMB, at most what its kernel addresses (i386) or a CI host
// spares (x86_64).
func CheckMemory(arch string, mb int) error {
	maxMem := MaxMemoryMBx86_64
	if arch == "i386" {
		maxMem = MaxMemoryMBi386
	}
	if mb < MinMemoryMB || mb > maxMem {
		return fmt.Errorf("%d out of range %d..%d for arch %s", mb, MinMemoryMB, maxMem, arch)
	}
	return nil
}

//go:embed experiments.yaml
var experimentsYAML []byte

func mustExperiments() []string {
	var ids []string
	if err := yaml.Unmarshal(experimentsYAML, &ids); err != nil || len(ids) == 0 {
		panic(fmt.Sprintf("images: embedded experiments.yaml: %v (%d ids)", err, len(ids)))
	}
	return ids
}
