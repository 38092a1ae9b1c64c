package engine

import (
	"context"
	"fmt"

	"lab/images"
	"lab/plugins/host"
	"lab/results/matrix"
	"lab/vm"
)

// UpProfile resolves what `lab up` boots: the profile name names (files
// are extra profile files), the clock it boots with (ResolveClock) and the
// memory override memoryMB (0: the profile's), checked against the arch.
func UpProfile(r Roots, name string, files []string, clock string, memoryMB int) (images.Profile, vm.Clock, error) {
	p, err := images.Lookup(r.Profiles, name, files...)
	if err != nil {
		return p, vm.Clock{}, err
	}
	c, err := ResolveClock(clock, p)
	if err != nil {
		return p, c, err
	}
	if memoryMB < 0 {
		return p, c, fmt.Errorf("--memory %d: must be a positive number of MB", memoryMB)
	}
	if memoryMB > 0 {
		if err := images.CheckMemory(p.Arch, memoryMB); err != nil {
			return p, c, fmt.Errorf("--memory %d: %w MB; give a size in that range, or leave --memory out for the profile's %d MB", memoryMB, err, p.MemoryMB)
		}
	}
	return p, c, nil
}

// Up boots a VM: `lab up`'s and a run's throwaway VM's one path. o is
// filled in from the roots, lab's plugins of the profile's arch are
// preloaded into its booted snapshot (unless o has its own), and what
// the boot writes goes to opts as Log events. Then the certificates lab
// speaks to the VM's plugins with are made, on the host (milliseconds),
// so that no plugin makes keys in the guest; failing that is a warning
// and nil TLS (the run makes them again, and says why if it cannot).
func Up(ctx context.Context, r Roots, o vm.UpOptions, opts Options) (*vm.State, *host.VMTLS, error) {
	if o.Preload == nil {
		o.Preload = opts.preload(r.Plugins, o.Profile.Arch)
	}
	if o.Exe == "" {
		o.Exe = opts.Exe
	}
	o.Log = &logWriter{opts: opts}
	st, err := vm.Up(ctx, r.Up(o))
	if err != nil {
		return nil, nil, err
	}
	tls, err := host.EnsureTLS(r.VMs.Dir(o.Name), o.Name)
	if err != nil {
		opts.emit(Warning{Text: fmt.Sprintf("%v; `lab run` will try again", err)})
	}
	return st, tls, nil
}

// KernelsToBuild lists, in order and once each, the kernels the named
// profiles boot that are built on first use and not built yet
// (images.Cache.NeedsBuild), with the first profile needing each. A
// profile that does not resolve is left to fail where it is run.
func KernelsToBuild(r Roots, profiles, files []string) (kernels, forProfile []string) {
	seen := map[string]bool{}
	for _, name := range profiles {
		p, err := images.Lookup(r.Profiles, name, files...)
		if err != nil || seen[p.Kernel] || !r.Cache.NeedsBuild(p.Kernel) {
			continue
		}
		seen[p.Kernel] = true
		kernels, forProfile = append(kernels, p.Kernel), append(forProfile, p.Name)
	}
	return kernels, forProfile
}

// BuildKernels builds, one at a time before anything boots, the kernels
// KernelsToBuild lists, their notes and progress as Log events to
// observe: runs in parallel (a matrix's cells) would otherwise each wait
// for the one build, its progress in one run's log.
func BuildKernels(ctx context.Context, r Roots, profiles, files []string, observe func(Event)) error {
	kernels, forProfile := KernelsToBuild(r, profiles, files)
	for i, id := range kernels {
		if _, err := r.Cache.EnsureKernel(ctx, id, forProfile[i], images.SourceOptions{Mirror: r.KernelMirror}, &logWriter{opts: Options{Observe: observe}}); err != nil {
			return err
		}
	}
	return nil
}

// pendingProfiles are the profiles of the cells not done, in order.
func pendingProfiles(cells []matrix.CellState) []string {
	var names []string
	for _, c := range cells {
		if !c.Done() {
			names = append(names, c.Profile)
		}
	}
	return names
}
