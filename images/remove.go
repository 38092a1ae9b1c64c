package images

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// blobs lists the cache blobs kernel k names.
func (k *Kernel) blobs() []string {
	out := []string{k.Vmlinuz, k.PVH, k.Config}
	for _, m := range slices.Concat(k.Modules, k.NetModules) {
		out = append(out, m.SHA256)
	}
	return out
}

// RemoveKernel deletes kernel id from the cache: its manifest, the record
// of the build that made it (when no other kernel id points at that
// build), and the blobs (image, vmlinux, .config, modules) that no other
// kernel or build record names. It returns the bytes freed. Snapshots and
// initramfs images made with it are left to `lab image prune`. A manifest
// that does not parse is removed too; the blobs it named stay.
func (c Cache) RemoveKernel(id string) (freed int64, err error) {
	if !idRE.MatchString(id) {
		return 0, fmt.Errorf("kernel %q: not a kernel id", id)
	}
	k, err := c.readKernel(id)
	if errors.Is(err, fs.ErrNotExist) {
		known := c.kernelIDs()
		return 0, fmt.Errorf("kernel %s is not in the cache (it has %s; see `lab image list`)", id, strings.Join(known, ", "))
	}
	if err != nil {
		k = &Kernel{ID: id} // unreadable: only its manifest can go
	}
	doomed := map[string]bool{}
	for _, b := range k.blobs() {
		if b != "" {
			doomed[b] = true
		}
	}
	// What every other kernel and build record still names stays.
	keep := map[string]bool{}
	buildShared := false
	key, built := strings.CutPrefix(k.Source, "build:")
	for _, other := range c.kernelIDs() {
		if other == id {
			continue
		}
		o, err := c.readKernel(other)
		if err != nil {
			continue
		}
		for _, b := range o.blobs() {
			keep[b] = true
		}
		if built && o.Source == k.Source {
			buildShared = true
		}
	}
	records, _ := filepath.Glob(filepath.Join(string(c), "builds", "*.json"))
	for _, r := range records {
		if built && filepath.Base(r) == key+".json" && !buildShared {
			continue // goes with the kernel
		}
		data, err := os.ReadFile(r)
		if err != nil {
			continue
		}
		var b Build
		if json.Unmarshal(data, &b) == nil {
			keep[b.Vmlinuz], keep[b.PVH], keep[b.Config] = true, true, true
		}
	}
	if err := os.Remove(c.kernelManifest(id)); err != nil {
		return 0, err
	}
	if built && !buildShared {
		if err := os.Remove(c.buildManifest(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return freed, err
		}
	}
	for b := range doomed {
		if keep[b] {
			continue
		}
		p := c.BlobPath(b)
		if fi, err := os.Stat(p); err == nil {
			freed += fi.Size()
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return freed, err
		}
	}
	return freed, nil
}
