package engine

import (
	"fmt"

	"lab/images"
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
