package engine

import (
	"lab/images"
	"lab/plugins/host"
	"lab/vm"
)

// Roots are the directories a run uses, built once by the caller (the
// CLI, from its flags and the environment) and handed down: the engine
// reads no environment, so tests give each run private roots.
type Roots struct {
	// VMs is where VM state directories live.
	VMs vm.Root
	// Cache is lab's cache (kernels, initramfs images, snapshots).
	Cache images.Cache
	// LibDirs are where lab's guest agents and plugins are looked for.
	LibDirs []string
	// NoSnapshot boots the VMs the engine starts cold, saving no snapshot.
	NoSnapshot bool
	// Plugins is where plugins are looked for.
	Plugins host.SearchPath
	// Profiles is the user's profile directory (images.Lookup).
	Profiles string
	// KernelMirror is a directory of upstream kernel tarballs
	// (images.MirrorEnv) for kernels built on first use.
	KernelMirror string
	// Path is where programs (QEMU) are looked for, in $PATH's form.
	Path string
	// TempDir is where a result goes when its store cannot take it
	// ($TMPDIR); "" is os.TempDir().
	TempDir string
	// OwnerPID, if set, is a process every VM the engine boots ends
	// with (vm.UpOptions.OwnerPID).
	OwnerPID int
}

// Up fills the roots into o: what a boot takes from them.
func (r Roots) Up(o vm.UpOptions) vm.UpOptions {
	o.Root, o.Cache, o.LibDirs, o.NoSnapshot, o.KernelMirror, o.Path, o.OwnerPID = r.VMs, r.Cache, r.LibDirs, r.NoSnapshot, r.KernelMirror, r.Path, r.OwnerPID
	return o
}
