package main

import (
	"fmt"
	"io"

	"lab/engine"
	"lab/vm"
)

// preloadFor is what a VM of arch preloads into the guest cache of its
// booted snapshot (engine.Preload). Failing to list them only costs the
// first run of each a push, so it is a warning.
func preloadFor(arch string, warn io.Writer) []vm.PreloadFile {
	files, err := engine.Preload(arch)
	if err != nil {
		fmt.Fprintf(warn, "warning: listing lab's plugins to preload into the snapshot: %v; their first run will push them\n", err)
		return nil
	}
	return files
}
