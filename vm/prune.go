package vm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"lab/images"
)

// KernelsInUse maps each kernel a VM that is up boots to the first such
// VM's name.
func (r Root) KernelsInUse() (map[string]string, error) {
	entries, err := r.List()
	if err != nil {
		return nil, err
	}
	users := map[string]string{}
	for _, en := range entries {
		if en.State != nil && !en.Stale {
			if _, ok := users[en.State.KernelID]; !ok {
				users[en.State.KernelID] = en.Name
			}
		}
	}
	return users, nil
}

// CheckRemovable refuses to let the kernels ids go while a VM that is up
// boots one, naming the VM.
func (r Root) CheckRemovable(ids []string) error {
	inUse, err := r.KernelsInUse()
	if err != nil {
		return err
	}
	for _, id := range ids {
		if name, ok := inUse[id]; ok {
			return fmt.Errorf("kernel %s: vm %s is up on it; `lab down %s` first (nothing was removed)", id, name, name)
		}
	}
	return nil
}

// PruneCache removes from cache the booted snapshots and initramfs images
// that no VM up in r uses, and the temp files of snapshot saves cut short
// (RemoveStaleSnapshotTemps), and says how many files and bytes went.
// Everything it removes is made again on demand.
func (r Root) PruneCache(cache images.Cache) (files int, bytes int64, err error) {
	inUse := map[string]bool{}
	entries, err := r.List()
	if err != nil {
		return 0, 0, err
	}
	for _, en := range entries {
		if en.State != nil && !en.Stale {
			inUse[en.State.Initrd] = true
			inUse[en.State.Initrd+".sha256"] = true
			inUse[en.State.Snapshot] = true
			inUse[en.State.Snapshot+".console"] = true
			inUse[en.State.Snapshot+".sha256"] = true
		}
	}
	// The temp files of snapshot saves cut short (their process is gone);
	// other temp files are skipped below: they may be being written.
	files, bytes, err = RemoveStaleSnapshotTemps(string(cache))
	if err != nil {
		return files, bytes, err
	}
	for _, dir := range []string{"snapshots", "initramfs"} {
		des, err := os.ReadDir(filepath.Join(string(cache), dir))
		if err != nil && !os.IsNotExist(err) {
			return files, bytes, err
		}
		for _, de := range des {
			p := filepath.Join(string(cache), dir, de.Name())
			if de.IsDir() || inUse[p] || strings.Contains(de.Name(), ".tmp") {
				continue
			}
			if fi, err := de.Info(); err == nil {
				bytes += fi.Size()
			}
			if err := os.Remove(p); err != nil {
				return files, bytes, err
			}
			files++
		}
	}
	return files, bytes, nil
}
