package images

import (
	"fmt"
	"strings"
)

// ProfileSummary is one profile as `lab profiles` lists it.
type ProfileSummary struct {
	Name     string `json:"name"`
	Arch     string `json:"arch"`
	CPU      string `json:"cpu"`
	Online   int    `json:"cpus_online"`
	Present  int    `json:"cpus_present"`
	MemoryMB int    `json:"memory_mb"`
	Kernel   string `json:"kernel"`
	StackKB  int    `json:"stack_kb"`
	// Console is the console kind: serial, vga or fb (virtual terminals
	// on an emulated screen with the last two).
	Console     string   `json:"console"`
	Experiments []string `json:"experiments"`
	Source      string   `json:"source"`
	Summary     string   `json:"summary"`
}

// Summaries lists every profile of c, in Profiles' order; the stack is
// the kernel's default (8192 KB) where the profile sets none.
func (c *Catalog) Summaries() []ProfileSummary {
	rows := []ProfileSummary{}
	for _, p := range c.Profiles() {
		stack := p.Guest.StackKB
		if stack == 0 {
			stack = 8192
		}
		rows = append(rows, ProfileSummary{Name: p.Name, Arch: p.Arch, CPU: p.CPU.Identity(),
			Online: p.Topology.OnlineCPUs(), Present: p.Topology.Present(), MemoryMB: p.MemoryMB,
			Kernel: p.Kernel, StackKB: stack, Console: p.ConsoleKind(), Experiments: p.Experiments, Source: c.Source(p.Name), Summary: p.Summary})
	}
	return rows
}

// Identity is the CPU as its guest names it: the brand string (white
// space folded), else the QEMU model, with the CPUID family and model
// where the profile sets them.
func (c CPU) Identity() string {
	id := c.ModelID
	if id == "" {
		id = c.Model
	}
	id = strings.Join(strings.Fields(id), " ")
	if c.Family != 0 {
		id += fmt.Sprintf(" (family %d model %d)", c.Family, c.ModelNumber)
	}
	return id
}
