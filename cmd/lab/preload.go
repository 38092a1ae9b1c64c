package main

import (
	"fmt"
	"io"

	"lab/engine"
	"lab/plugins/host"
	"lab/vm"
)

// preloadFor is what a VM of arch preloads into the guest cache of its
// booted snapshot (engine.Preload). Failing to list them only costs the
// first run of each a push, so it is a warning.
func preloadFor(path host.SearchPath, arch string, warn io.Writer) []vm.PreloadFile {
	files, err := engine.Preload(path, arch)
	if err != nil {
		fmt.Fprintf(warn, "warning: listing lab's plugins to preload into the snapshot: %v; their first run will push them\n", err)
		return nil
	}
	return files
}
