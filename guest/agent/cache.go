package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The guest's file cache. Pushed content is kept by hash in blobDir, and
// the host installs plugin bundles as hard links to it under
// pluginDir/NAME/SUM/ (plugins/host's guestRoot). Both live in the
// initramfs's root filesystem, which is RAM: every cached byte is guest
// memory the measured programs do not get, and the root tmpfs is capped at
// half the RAM anyway. So the cache has a budget (a quarter of MemTotal in
// a guest, see cacheBudgetFraction): before content is received that would
// take the cache past it, the least recently used blobs and installed
// bundles are removed, except the bundles a running program uses and
// what the put itself is about to use.
//
// "Used" is a put naming the blob (sent or already held) or installing into
// the bundle; the time is the entry's mtime, set on each use (ls -lt in the
// guest shows the order). Space is counted per inode (a bundle's files are
// hard links to blobs: one copy in memory), rounded up to pages. A file
// installed anywhere else (`lab cp` into /root) is a copy: a user's file
// must not share storage with the cache, or changing it would change what
// later copies and runs get (see heldBlob for the check before use). Such
// a file larger than the whole budget is not kept at all (see oversized),
// and no put starts that cannot fit in the RAM root (see checkFits).

// pluginDir is where the host installs bundles (plugins/host guestRoot).
const pluginDir = "/var/lib/lab/plugins"

// cacheBudgetFraction: the cache may hold MemTotal/cacheBudgetFraction. A
// quarter keeps three quarters of a 256 MB guest (E1's machine) for the
// kernel, the agent, the running plugin (~12 MB RSS) and what it measures,
// and still holds about four i386 bundles the size of forkbench's (13 MB).
const cacheBudgetFraction = 4

// cacheEntry is one thing eviction may remove: a blob or a bundle dir.
type cacheEntry struct {
	path   string
	bundle bool
	used   time.Time
}

// pageSize rounds sizes: tmpfs allocates whole pages.
const pageSize = 4096

// cacheUsage is the memory held by blobDir and pluginDir: each inode once,
// rounded up to pages. Temporary files of puts in flight count too.
func (a *agent) cacheUsage() int64 {
	seen := map[[2]uint64]bool{}
	var total int64
	for _, root := range []string{a.blobDir, a.pluginDir} {
		if root == "" {
			continue
		}
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				key := [2]uint64{uint64(st.Dev), uint64(st.Ino)}
				if seen[key] {
					return nil
				}
				seen[key] = true
			}
			total += (info.Size() + pageSize - 1) / pageSize * pageSize
			return nil
		})
	}
	return total
}

// cacheEntries lists the blobs and installed bundles, least recently used
// first.
func (a *agent) cacheEntries() []cacheEntry {
	var out []cacheEntry
	des, _ := os.ReadDir(a.blobDir)
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".") || !de.Type().IsRegular() {
			continue // a put in flight
		}
		if info, err := de.Info(); err == nil {
			out = append(out, cacheEntry{path: filepath.Join(a.blobDir, de.Name()), used: info.ModTime()})
		}
	}
	if a.pluginDir != "" {
		names, _ := os.ReadDir(a.pluginDir)
		for _, n := range names {
			if !n.IsDir() {
				continue
			}
			sums, _ := os.ReadDir(filepath.Join(a.pluginDir, n.Name()))
			for _, s := range sums {
				if !s.IsDir() {
					continue
				}
				if info, err := s.Info(); err == nil {
					out = append(out, cacheEntry{path: filepath.Join(a.pluginDir, n.Name(), s.Name()), bundle: true, used: info.ModTime()})
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].used.Before(out[j].used) })
	return out
}

// bundleOf is the installed bundle dir that path lies in, or "".
func (a *agent) bundleOf(path string) string {
	if a.pluginDir == "" {
		return ""
	}
	rel, err := filepath.Rel(a.pluginDir, filepath.Clean(path))
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	parts := strings.SplitN(filepath.ToSlash(rel), "/", 3)
	if len(parts) < 3 {
		return "" // not a file inside NAME/SUM/
	}
	return filepath.Join(a.pluginDir, parts[0], parts[1])
}

// touch records a use of a cache entry (see the top of the file).
func touch(path string) {
	now := time.Now()
	_ = os.Chtimes(path, now, now)
}

// makeRoom removes least recently used entries until the cache plus need
// bytes fits the budget, or nothing more may go: never the paths in keep,
// never a bundle a running program uses. The caller holds cacheMu.
func (a *agent) makeRoom(need int64, keep ...string) {
	if a.cacheBudget <= 0 {
		return
	}
	need = (need + pageSize - 1) / pageSize * pageSize
	usage := a.cacheUsage()
	if usage+need <= a.cacheBudget {
		return
	}
	kept := map[string]bool{}
	for _, k := range keep {
		if k != "" {
			kept[k] = true
		}
	}
	var busy []string // exe and cwd of every running program
	if a.runningPaths != nil {
		busy = a.runningPaths()
	} else {
		busy = runningPaths("/proc")
	}
	inUse := func(dir string) bool {
		for _, p := range busy {
			if p == dir || strings.HasPrefix(p, dir+"/") {
				return true
			}
		}
		return false
	}
	for _, e := range a.cacheEntries() {
		if usage+need <= a.cacheBudget {
			return
		}
		if kept[e.path] || e.bundle && inUse(e.path) {
			continue
		}
		var err error
		if e.bundle {
			err = os.RemoveAll(e.path)
			_ = os.Remove(filepath.Dir(e.path)) // NAME/, once it holds no other build
		} else {
			err = os.Remove(e.path)
			a.forget(e.path)
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			logf("cache: evicting %s: %v", e.path, err)
			continue
		}
		before := usage
		usage = a.cacheUsage()
		logf("cache: evicted %s (last used %s, freed %d KiB) to keep the cache under %s", e.path, e.used.UTC().Format(time.RFC3339), (before-usage)>>10, describeBudget(a.cacheBudget))
	}
	if usage+need > a.cacheBudget {
		logf("cache: %d KiB held by running programs or in use; %d KiB more goes past the %s budget", usage>>10, need>>10, describeBudget(a.cacheBudget))
	}
}

// runningPaths lists the executable and working directory of every process
// under procRoot (" (deleted)" stripped): what a bundle in use is held by.
func runningPaths(procRoot string) []string {
	des, _ := os.ReadDir(procRoot)
	var out []string
	for _, de := range des {
		if _, err := strconv.Atoi(de.Name()); err != nil {
			continue
		}
		for _, l := range []string{"exe", "cwd"} {
			if p, err := os.Readlink(filepath.Join(procRoot, de.Name(), l)); err == nil {
				out = append(out, strings.TrimSuffix(p, " (deleted)"))
			}
		}
	}
	return out
}

// cacheBudgetFor is the budget of a guest with memTotalKB of memory.
func cacheBudgetFor(memTotalKB int64) int64 {
	return memTotalKB * 1024 / cacheBudgetFraction
}

// describeBudget is the budget for the console log.
func describeBudget(b int64) string {
	if b <= 0 {
		return "unbounded"
	}
	if b < 1<<20 {
		return fmt.Sprintf("%d KiB", b>>10)
	}
	return fmt.Sprintf("%d MiB", b>>20)
}

// Receiving a file grows the agent's heap by about twice its size (the
// link stream's receive window, 8 MiB, and the buffers behind it), and Go
// gives freed memory back to the kernel only slowly: measured in a
// celeron-2.4 guest, the agent (3 MB idle) held 19 MB after forkbench's
// push and 33 MB after the preload session, memory the measured programs
// did not get. So the agent returns it: soon after the last large put, and
// at once when a session ends (before it waits for a host again, where a
// booted snapshot is saved).

// releaseAfter is how long after the last large put the memory goes back.
const releaseAfter = 200 * time.Millisecond

// largePut is the size from which a put schedules a release.
const largePut = 1 << 20

// releaseSoon returns free memory to the kernel releaseAfter from now,
// unless another call comes first.
func (a *agent) releaseSoon() {
	a.releaseMu.Lock()
	defer a.releaseMu.Unlock()
	if a.releaseTimer == nil {
		a.releaseTimer = time.AfterFunc(releaseAfter, debug.FreeOSMemory)
		return
	}
	a.releaseTimer.Reset(releaseAfter)
}

// releaseNow returns free memory to the kernel now.
func (a *agent) releaseNow() {
	a.releaseMu.Lock()
	if a.releaseTimer != nil {
		a.releaseTimer.Stop()
	}
	a.releaseMu.Unlock()
	debug.FreeOSMemory()
}

// A blob is used (installed, or reported held so the host sends nothing)
// only once it is proven to be what its name says. Re-hashing every use
// would cost what the cache saves: SHA-256 in emulated guest code is
// slower than sending the content again. So the agent remembers what the
// file looked like when it last stored, checked or used it (device, inode,
// size, mtime and ctime), and re-hashes only a blob that no longer looks
// so. Any change to the file's content moves its ctime, which no program
// can set back (a rewrite with size and mtime put back, as `cp -p` does,
// still moves it); a file replaced at the blob's path is another inode. A
// blob the agent knows nothing of (stored by an earlier agent) is hashed.
// What the agent does itself (touch, link, unlink of a bundle's hard link)
// moves the ctime too: it records the file again after its own changes,
// under cacheMu. A change racing the agent's own within that window is not
// seen; a bundle eviction that unlinks a blob's link costs a re-hash at the
// next use.

// blobStat is what identifies a blob file's content without reading it.
type blobStat struct {
	dev, ino     uint64
	size         int64
	mtime, ctime unix.Timespec
}

func statBlob(path string) (blobStat, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return blobStat{}, err
	}
	return blobStat{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mtime: st.Mtim, ctime: st.Ctim}, nil
}

// remember records blob as it is now, after the agent stored, checked or
// used it. The caller holds cacheMu.
func (a *agent) remember(blob string) {
	st, err := statBlob(blob)
	if err != nil {
		delete(a.known, blob)
		return
	}
	if a.known == nil {
		a.known = map[string]blobStat{}
	}
	a.known[blob] = st
}

// forget drops what is remembered of a blob removed. The caller holds
// cacheMu.
func (a *agent) forget(blob string) { delete(a.known, blob) }

// heldBlob reports whether blob (named by its SHA-256, sum) is held and
// intact. One that changed since the agent recorded it is hashed; if the
// content is no longer sum it is removed, saying so on the console, and
// the host sends the content again. The caller holds cacheMu.
func (a *agent) heldBlob(blob, sum string) bool {
	st, err := statBlob(blob)
	if err != nil {
		a.forget(blob)
		return false
	}
	if known, ok := a.known[blob]; ok && known == st {
		return true
	}
	a.hashes++
	got, err := hashFile(blob)
	if err == nil && got == sum {
		a.remember(blob)
		return true
	}
	if err != nil {
		logf("cache: %s changed since it was stored and cannot be read (%v); removed, the host sends it again", blob, err)
	} else {
		logf("cache: %s changed in the guest since it was stored (its sha256 is now %.12s); removed, the host sends it again", blob, got)
	}
	if err := os.Remove(blob); err != nil && !errors.Is(err, os.ErrNotExist) {
		logf("cache: removing %s: %v", blob, err)
	}
	a.forget(blob)
	return false
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
