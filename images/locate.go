package images

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LibDirs are the directories searched for lab's build artefacts: first
// (the CLI passes $LAB_LIBDIR) unless "", the executable's directory, and
// <exe dir>/../lib/lab (the layout of `make install PREFIX=...`).
func LibDirs(first string) []string {
	var dirs []string
	if first != "" {
		dirs = append(dirs, first)
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dir := filepath.Dir(exe)
		dirs = append(dirs, dir, filepath.Join(dir, "..", "lib", "lab"))
	}
	return dirs
}

// FindBinary finds a guest or build artefact by its relative name
// ("agent-i386", "plugins/forkbench/i386/forkbench") in the first of dirs
// (see LibDirs) that has it, and names every place it looked if the file
// is in none of them.
func FindBinary(dirs []string, name string) (string, error) {
	if name == "" || filepath.IsAbs(name) || strings.HasPrefix(filepath.Clean(name), "..") {
		return "", fmt.Errorf("find %q: want a relative name such as agent-i386", name)
	}
	var tried []string
	for _, d := range dirs {
		p := filepath.Join(d, name)
		tried = append(tried, p)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found (looked in %s); run 'make' in the source tree (or 'make install'), or set LAB_LIBDIR", name, strings.Join(tried, ", "))
}
