// Package images owns what a guest is made of: profiles (the embedded
// catalog plus user files), kernels (fetched from Debian packages or
// imported), the initramfs, and the content-addressed cache they live in.
package images

import "lab/plugins/contract"

// Profile describes one emulated historical machine. It is plain data: the
// embedded catalog and user profile files share this schema, and unknown
// fields are rejected when a profile is loaded.
type Profile struct {
	// Name is how users refer to the profile (`lab up NAME`).
	Name string `yaml:"name" json:"name"`
	// Summary is one line saying what machine this stands for.
	Summary string `yaml:"summary" json:"summary"`
	// Experiments lists the experiments of SEEDS.md it reproduces (E1..E5).
	Experiments []string `yaml:"experiments" json:"experiments"`
	// Original describes the machine and OS the experiment really ran on,
	// so reports can put the substitution next to the result.
	Original Original `yaml:"original" json:"original"`
	// Arch is the guest architecture: "i386" or "x86_64".
	Arch string `yaml:"arch" json:"arch"`
	// Machine is the QEMU machine type (e.g. "pc").
	Machine string `yaml:"machine" json:"machine"`
	// CPU is the emulated CPU model and the CPUID identity it reports.
	CPU CPU `yaml:"cpu" json:"cpu"`
	// Topology is the CPU layout and how many CPUs are brought online.
	Topology Topology `yaml:"topology" json:"topology"`
	// MemoryMB is the guest RAM in MiB.
	MemoryMB int `yaml:"memory_mb" json:"memory_mb"`
	// Kernel is the id of the kernel image in the cache (e.g. "debian-6.1-686").
	Kernel string `yaml:"kernel" json:"kernel"`
	// Cmdline is appended to the kernel command line lab builds.
	Cmdline string `yaml:"cmdline,omitempty" json:"cmdline,omitempty"`
	// Guest holds settings the agent applies before anything runs.
	Guest Guest `yaml:"guest" json:"guest"`
	// Console is the guest's console kind (see Consoles): "serial"
	// (default: the serial port only, no display, so the kernel's virtual
	// terminals have nothing to draw on), "vga" (an emulated VGA card in
	// text mode: tty1..tty6, one of them shown) or "fb" (the same card in
	// a VESA graphics mode set at boot, drawn by vesafb and fbcon). The
	// serial port and ptys are there with every kind.
	Console string `yaml:"console,omitempty" json:"console,omitempty"`
	// Clock is "host" (default) or "icount" / "icount:SHIFT".
	Clock string `yaml:"clock,omitempty" json:"clock,omitempty"`
	// VariantOf names the profile whose machine this is, on another
	// kernel (the era profiles: celeron-2.4-era is celeron-2.4 on
	// era-2.4-i386). That profile's published figures and claims apply
	// to runs on this one; results say which kernel ran. Everything but
	// the kernel, the name, the summary and the original's differences
	// must be the same (CheckVariant).
	VariantOf string `yaml:"variant_of,omitempty" json:"variant_of,omitempty"`
	// Calibration is the speed of the machine the profile stands for,
	// for absolute times under icount (docs/claims.md, "Calibration");
	// nil: absolute times on this profile are never comparable. A
	// variant inherits its base profile's: it may not write its own
	// (CheckVariant), and LoadCatalog gives it the base's.
	Calibration *Calibration `yaml:"calibration,omitempty" json:"calibration,omitempty"`
}

// Calibration is an interval of guest instructions per ns that the
// original machine plausibly ran the measured (kernel) code at: its clock
// times a plausible IPC, with where that comes from (Basis) and one of
// Confidences. It is the contract's, the one calibration type: a claim
// may carry its own, and the judge reads either.
type Calibration = contract.Calibration

// Confidences are the confidence levels a calibration states.
var Confidences = []string{"low", "medium", "high"}

// Original is the historical machine a profile stands for.
type Original struct {
	CPU    string `yaml:"cpu" json:"cpu"`
	Memory string `yaml:"memory" json:"memory"`
	OS     string `yaml:"os" json:"os"`
	Kernel string `yaml:"kernel" json:"kernel"`
	// Differences lists what lab cannot reproduce (kernel, clock speed...).
	Differences []string `yaml:"differences,omitempty" json:"differences,omitempty"`
}

// CPU is the QEMU CPU model and the identity the guest sees in CPUID.
type CPU struct {
	// Model is the QEMU -cpu base model (qemu32, pentium3, core2duo, max...).
	Model string `yaml:"model" json:"model"`
	// ModelID is the brand string shown as "model name" in /proc/cpuinfo.
	ModelID string `yaml:"model_id,omitempty" json:"model_id,omitempty"`
	// Vendor is the CPUID vendor string (GenuineIntel...).
	Vendor string `yaml:"vendor,omitempty" json:"vendor,omitempty"`
	// Family, ModelNumber and Stepping are the CPUID signature; 0 keeps the
	// base model's value.
	Family      int `yaml:"family,omitempty" json:"family,omitempty"`
	ModelNumber int `yaml:"model_number,omitempty" json:"model_number,omitempty"`
	Stepping    int `yaml:"stepping,omitempty" json:"stepping,omitempty"`
	// Drop lists CPUID feature flags the real CPU lacked (e.g. pni, hypervisor).
	Drop []string `yaml:"drop,omitempty" json:"drop,omitempty"`
	// Add lists CPUID feature flags to force on.
	Add []string `yaml:"add,omitempty" json:"add,omitempty"`
}

// Topology is the emulated CPU layout.
type Topology struct {
	Sockets int `yaml:"sockets" json:"sockets"`
	Cores   int `yaml:"cores" json:"cores"`
	Threads int `yaml:"threads" json:"threads"`
	// Online is how many CPUs the kernel brings up (maxcpus=); 0 means all.
	Online int `yaml:"online,omitempty" json:"online,omitempty"`
}

// Present is the number of CPUs the machine has.
func (t Topology) Present() int { return t.Sockets * t.Cores * t.Threads }

// OnlineCPUs is the number of CPUs brought online at boot.
func (t Topology) OnlineCPUs() int {
	if t.Online == 0 {
		return t.Present()
	}
	return t.Online
}

// Guest holds settings the agent applies to everything it starts.
type Guest struct {
	// StackKB is the soft RLIMIT_STACK in KiB (`ulimit -s`); 0 keeps the
	// kernel default (8192).
	StackKB int `yaml:"stack_kb,omitempty" json:"stack_kb,omitempty"`
	// OfflineCPUs are taken offline by the agent at boot.
	OfflineCPUs []int `yaml:"offline_cpus,omitempty" json:"offline_cpus,omitempty"`
	// Sysctls are written under /proc/sys (key in dotted form).
	Sysctls map[string]string `yaml:"sysctls,omitempty" json:"sysctls,omitempty"`
}
