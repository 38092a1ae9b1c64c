package main

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"

	"lab/vm/link"
)

// A file the host pushes lands in the guest's root filesystem, which is
// RAM (the initramfs's tmpfs, capped at half the memory). A push that does
// not fit used to run until the tmpfs was full and end as "broken pipe"
// on the host, the reason on the guest console only, after evicting the
// cache to make room it could never make. So put works out first what the
// push needs (see putPlan) and refuses one that cannot fit, before a byte
// is sent or a cache entry evicted.

// fsSpace is what statfs says of the filesystem holding a path.
type fsSpace struct {
	dev   uint64
	free  int64
	total int64 // 0: a filesystem without a size (ramfs): not checked
}

// statSpace is the space of the filesystem path is (or would be created)
// on: that of its nearest existing parent.
func statSpace(path string) (fsSpace, error) {
	p := filepath.Clean(path)
	for {
		var st unix.Stat_t
		err := unix.Stat(p, &st)
		if err == nil {
			var fs unix.Statfs_t
			if err := unix.Statfs(p, &fs); err != nil {
				return fsSpace{}, fmt.Errorf("statfs %s: %w", p, err)
			}
			bs := int64(fs.Bsize)
			return fsSpace{dev: uint64(st.Dev), free: int64(fs.Bavail) * bs, total: int64(fs.Blocks) * bs}, nil
		}
		parent := filepath.Dir(p)
		if parent == p {
			return fsSpace{}, fmt.Errorf("stat %s: %w", p, err)
		}
		p = parent
	}
}

// space is a.statfs, or statSpace.
func (a *agent) space(path string) (fsSpace, error) {
	if a.statfs != nil {
		return a.statfs(path)
	}
	return statSpace(path)
}

// pages rounds n up to whole pages, as tmpfs allocates.
func pages(n int64) int64 { return (n + pageSize - 1) / pageSize * pageSize }

// fmtSize is n for a message: KiB under a MiB, else MiB.
func fmtSize(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", (n+1023)>>10)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// oversized says whether content of size bytes is larger than the cache
// may hold: kept by hash it would evict every entry and still be over
// budget, so it is received straight to its path instead.
func (a *agent) oversized(size int64) bool {
	return a.cacheBudget > 0 && pages(size) > a.cacheBudget
}

// checkFits refuses a put whose bytes cannot fit where they go. received
// says the content is to be sent (into a temp file in blobDir), kept that
// it stays there as a blob; then the cache is trimmed to its budget first,
// which frees space. A file installed outside the bundles is a copy of a
// kept or held blob; a bundle's file, or content not kept, is a hard link.
// A filesystem statfs says nothing of is not checked. The caller holds
// cacheMu.
func (a *agent) checkFits(req *link.PutRequest, received, kept bool, bundle string, cacheOnly bool) error {
	size := pages(req.Size)
	blobSp, err := a.space(a.blobDir)
	if err != nil {
		return nil
	}
	type fsNeed struct {
		sp          fsSpace
		at          string
		need, freed int64
	}
	needs := []*fsNeed{{sp: blobSp, at: a.blobDir}}
	if received {
		needs[0].need = size
	}
	copied := bundle == "" && (kept || !received)
	if !cacheOnly {
		dst := filepath.Dir(req.Path)
		sp, err := a.space(dst)
		if err != nil {
			return nil
		}
		switch {
		case sp.dev != blobSp.dev:
			needs = append(needs, &fsNeed{sp: sp, at: dst, need: size})
		case copied:
			needs[0].need += size
			fallthrough
		default:
			needs[0].at = dst // the same filesystem, by the name the user gave
		}
	}
	for i, f := range needs {
		if f.sp.total <= 0 || f.need <= f.sp.free {
			continue
		}
		// Short of room: count what trimming the cache to its budget
		// (makeRoom, before the blob is received) would free there.
		if i == 0 && received && kept && a.cacheBudget > 0 {
			usage := a.cacheUsage()
			if over := usage + size - a.cacheBudget; over > 0 {
				f.freed = min(over, usage)
			}
			if f.need <= f.sp.free+f.freed {
				continue
			}
		}
		what := ""
		if received && copied {
			what = " (the file and the guest's cached copy of it)"
		}
		trimmed := ""
		if f.freed > 0 {
			trimmed = fmt.Sprintf(", %s more once the cache is trimmed to its budget", fmtSize(f.freed))
		}
		return fmt.Errorf("%s does not fit in the guest: it needs %s%s of the filesystem at %s, which is RAM and has %s free of %s%s; nothing was sent or evicted: give the VM more memory (lab up --memory MB) or copy a smaller file",
			fmtSize(req.Size), fmtSize(f.need), what, f.at, fmtSize(f.sp.free), fmtSize(f.sp.total), trimmed)
	}
	return nil
}
