package host

import (
	"os"
	"path/filepath"
	"sort"

	"lab/vm"
)

// BuiltinDir is the directory of lab's own plugins, installed with it:
// plugins/ in the first of libDirs (images.LibDirs) that has one, or "".
func BuiltinDir(libDirs []string) string {
	for _, d := range libDirs {
		p := filepath.Join(d, "plugins")
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
	}
	return ""
}

// BuiltinPreload lists the files of lab's own plugins built for arch,
// hashed exactly as the runner hashes them when it pushes a bundle
// (bundleFiles), each content once: what a VM's booted snapshot holds in
// its guest cache so that their first run sends nothing (vm.PreloadFile,
// the mode its permission bits). User plugins are
// not listed: they are pushed on their first run in each boot. dir is the
// built-ins' directory (BuiltinDir); "" lists nothing.
func BuiltinPreload(dir, arch string) ([]vm.PreloadFile, error) {
	if dir == "" {
		return nil, nil
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []vm.PreloadFile
	seen := map[string]bool{}
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		b := &Bundle{Name: de.Name(), Arch: arch, Dir: filepath.Join(dir, de.Name(), arch)}
		if _, err := os.Stat(b.Binary()); err != nil {
			continue // no build for this arch
		}
		files, _, err := bundleFiles(b.Dir)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if seen[f.sha256] {
				continue
			}
			seen[f.sha256] = true
			out = append(out, vm.PreloadFile{Path: filepath.Join(b.Dir, f.rel), SHA256: f.sha256, Mode: uint32(f.mode.Perm())})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}
