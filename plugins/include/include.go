// Package include holds the headers lab gives every plugin's C workloads:
// lab.h (`#include <lab.h>`: prog, die, now, parse_long, tv_s,
// flush_results, finish). This directory is itself an include directory
// (`-I plugins/include` in lab's tree); `lab plugin build` writes the
// embedded copy into a temporary one with Write, so a plugin outside lab's
// tree gets the headers of the lab that builds it. Plugins do not link
// this package: it is the builder's.
package include

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
)

//go:embed *.h
var headers embed.FS

// Write writes the headers into dir, to be passed to a C compiler as -I dir.
func Write(dir string) error {
	names, err := headers.ReadDir(".")
	if err != nil {
		return err
	}
	for _, e := range names {
		b, err := headers.ReadFile(e.Name())
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			return fmt.Errorf("writing workload header %s: %w", e.Name(), err)
		}
	}
	return nil
}
