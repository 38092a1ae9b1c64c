package main

import (
	"fmt"
	"io"

	"lab/plugins/host"
	"lab/vm"
)

// preloadFor is what a VM of arch preloads into the guest cache of its
// booted snapshot: lab's own plugins (path.Builtin) built for that arch
// (see vm/preload.go).
// Failing to list them only costs the first run of each a push, so it is a
// warning.
func preloadFor(path host.SearchPath, arch string, warn io.Writer) []vm.PreloadFile {
	files, err := host.BuiltinPreload(path.Builtin, arch)
	if err != nil {
		fmt.Fprintf(warn, "warning: listing lab's plugins to preload into the snapshot: %v; their first run will push them\n", err)
		return nil
	}
	out := make([]vm.PreloadFile, len(files))
	for i, f := range files {
		out[i] = vm.PreloadFile{Path: f.Path, SHA256: f.SHA256, Mode: uint32(f.Mode.Perm())}
	}
	return out
}
