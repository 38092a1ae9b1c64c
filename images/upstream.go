package images

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Kernels from upstream releases: a release's tarball as kernel.org
// publishes it (or the same tree in another file: see Upstream.Tree),
// the patches a modern toolchain needs (images/patches/<version>/, each
// saying which failure it fixes), configured from `make allnoconfig` with
// the fragments as KCONFIG_ALLCONFIG. The cache keeps
//
//	sources/upstream-<version>.json   the release: its file's sha256 (a blob) and tree id
//	build/src-<tree>-<patches>/       the unpacked, patched tree

// MirrorEnv names a directory of upstream kernel tarballs, by their
// release file names (linux-2.6.32.28.tar.xz): lab looks there before
// downloading. The CLI reads it; this package reads no environment.
const MirrorEnv = "LAB_KERNEL_MIRROR"

// Upstream is one upstream Linux release lab builds kernels from.
type Upstream struct {
	// Version is the release (2.6.32.28).
	Version string
	// File is the release's file name, as kernel.org and mirrors name it.
	File string
	// URL is where it is downloaded from when no --source or mirror has it.
	URL string
	// Tree is the git tree id of the release's top directory (the tag's
	// tree): what identifies the source whichever file, compressor or
	// archiver it came in.
	Tree string
	// SHA256 are the sha256s of files known to hold that tree; one of
	// them is accepted without reading the tree (seconds saved).
	SHA256 []string
}

// Upstreams are the releases lab knows, by version.
var Upstreams = map[string]Upstream{
	"2.6.32.28": {
		Version: "2.6.32.28",
		File:    "linux-2.6.32.28.tar.xz",
		URL:     "https://cdn.kernel.org/pub/linux/kernel/v2.6/longterm/v2.6.32/linux-2.6.32.28.tar.xz",
		// v2.6.32.28, commit 376faec0f6faf74daa71b52fb57cff5214c2abf3 (7 Jan 2011).
		Tree: "ac28e4adaded7a44f9ec43955bb750b321ff27c6",
		// `git archive` of the tag, as ../shared/kernels holds it.
		SHA256: []string{"8a16f20f5854ff6567405d1ad5f4953875ae87ec274a7f865cf3b0453dc23096"},
	},
}

// The patches are embedded, so a build outside the source tree applies
// the same ones.
//
//go:embed patches
var patchesFS embed.FS

// Patch is one patch lab applies to an upstream release.
type Patch struct {
	Name string
	Data []byte
}

// Patches are the patches of release version, in the order applied (by
// file name).
func Patches(version string) ([]Patch, error) {
	dir := path.Join("patches", "linux-"+version)
	des, err := patchesFS.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var ps []Patch
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), ".patch") {
			continue
		}
		data, err := patchesFS.ReadFile(path.Join(dir, de.Name()))
		if err != nil {
			return nil, err
		}
		ps = append(ps, Patch{Name: de.Name(), Data: data})
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name < ps[j].Name })
	return ps, nil
}

// patchesDigest hashes the patches' names and text in order.
func patchesDigest(ps []Patch) string {
	h := sha256.New()
	for _, p := range ps {
		fmt.Fprintf(h, "patch %s %d\n", p.Name, len(p.Data))
		h.Write(p.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// UpstreamSource is a release in the cache.
type UpstreamSource struct {
	Version string `json:"version"`
	File    string `json:"file"`
	// SHA256 names the file's blob in the cache.
	SHA256 string `json:"sha256"`
	// Tree is the release's tree id, as verified.
	Tree string `json:"tree"`
	// From says where the file came from (a path or the URL) and how it
	// was verified.
	From     string `json:"from"`
	Verified string `json:"verified"`
}

func (c Cache) upstreamManifest(version string) string {
	return filepath.Join(string(c), "sources", "upstream-"+version+".json")
}

// cachedUpstream is release u in the cache, if it is there and verifies.
func (c Cache) cachedUpstream(u Upstream) (*UpstreamSource, error) {
	data, err := os.ReadFile(c.upstreamManifest(u.Version))
	if err != nil {
		return nil, err
	}
	var s UpstreamSource
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	if s.Tree != u.Tree {
		return nil, fmt.Errorf("cached %s is tree %s, not %s", u.File, s.Tree, u.Tree)
	}
	if err := c.Verify(s.SHA256); err != nil {
		return nil, err
	}
	return &s, nil
}

// SourceOptions say where an upstream release may come from: a file
// given by hand, a mirror directory, or the release's URL.
type SourceOptions struct {
	// File is --source: the release's tarball, whatever its name.
	File string
	// Mirror is a directory holding release files by name (MirrorEnv).
	Mirror string
	// NoDownload refuses the URL (tests; machines without a network say
	// so sooner).
	NoDownload bool
	// Client downloads; nil is a client with a 10-minute timeout.
	Client *http.Client
}

// fetchUpstream returns release u from the cache, else from o.File, the
// mirror or the URL, in that order, verified (VerifyUpstream) before it is
// kept.
func (c Cache) fetchUpstream(ctx context.Context, u Upstream, o SourceOptions, log io.Writer) (*UpstreamSource, error) {
	if s, err := c.cachedUpstream(u); err == nil && o.File == "" {
		return s, nil
	}
	var tried []string
	add := func(file, from string) (*UpstreamSource, error) {
		how, err := VerifyUpstream(ctx, u, file)
		if err != nil {
			return nil, err
		}
		sha, err := c.PutFile(file)
		if err != nil {
			return nil, err
		}
		s := &UpstreamSource{Version: u.Version, File: u.File, SHA256: sha, Tree: u.Tree, From: from, Verified: how}
		if err := writeJSONAtomic(c.upstreamManifest(u.Version), s); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "kernel source: linux %s from %s (%s)\n", u.Version, from, how)
		return s, nil
	}
	if o.File != "" {
		if _, err := os.Stat(o.File); err != nil {
			return nil, fmt.Errorf("--source %s: %w", o.File, err)
		}
		return add(o.File, o.File)
	}
	if o.Mirror != "" {
		p := filepath.Join(o.Mirror, u.File)
		if _, err := os.Stat(p); err == nil {
			return add(p, p)
		}
		tried = append(tried, fmt.Sprintf("%s has no %s", o.Mirror, u.File))
	} else {
		tried = append(tried, MirrorEnv+" is not set")
	}
	if !o.NoDownload {
		tmp, err := c.download(ctx, u, o.Client, log)
		if err == nil {
			defer os.Remove(tmp)
			return add(tmp, u.URL)
		}
		tried = append(tried, fmt.Sprintf("downloading %s failed: %v", u.URL, err))
	}
	return nil, fmt.Errorf("the source of Linux %s (%s) is not here: %s. Download %s by hand and give it with --source FILE, or put it in a directory and set %s to that directory", u.Version, u.File, strings.Join(tried, "; "), u.URL, MirrorEnv)
}

// download fetches u's URL into a temporary file beside the cache's blobs.
func (c Cache) download(ctx context.Context, u Upstream, client *http.Client, log io.Writer) (string, error) {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Minute}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.URL, nil)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(log, "kernel source: downloading %s ...\n", u.URL)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s", resp.Status)
	}
	dir := filepath.Join(string(c), "sources")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, ".download-*")
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// VerifyUpstream checks that file holds release u: its sha256 is one
// recorded for the release, or else the git tree of its top directory is
// u.Tree. It says which.
func VerifyUpstream(ctx context.Context, u Upstream, file string) (string, error) {
	sum, err := fileSHA256(file)
	if err != nil {
		return "", err
	}
	for _, s := range u.SHA256 {
		if s == sum {
			return "sha256 " + sum[:12] + " recorded for this release", nil
		}
	}
	tree, err := TarballTree(ctx, file)
	if err != nil {
		return "", fmt.Errorf("%s: reading it as Linux %s: %w", file, u.Version, err)
	}
	if tree != u.Tree {
		return "", fmt.Errorf("%s is not Linux %s as released: its tree is %s, the release's is %s (tag v%s); lab builds the release only as tagged", file, u.Version, tree, u.Tree, u.Version)
	}
	return "git tree " + tree[:12] + " matches the release's", nil
}

// TarballTree is the git tree id of the one top directory of a tarball
// (.tar, .tar.gz, .tar.xz): the id `git rev-parse TAG^{tree}` prints for
// the tag it was archived from, whoever compressed it. Files are blobs
// with mode 100644, or 100755 when any execute bit is set; symbolic links
// are blobs of their target (120000); directories exist through their
// files, as in git.
func TarballTree(ctx context.Context, file string) (string, error) {
	r, finish, err := openTarball(ctx, file)
	if err != nil {
		return "", err
	}
	finished := false
	defer func() {
		if !finished {
			_ = finish()
		}
	}()
	type entry struct {
		mode string
		sha  [20]byte
	}
	dirs := map[string]map[string]entry{"": {}}
	var top string
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		name := strings.TrimPrefix(path.Clean(h.Name), "./")
		if h.Typeflag == tar.TypeXGlobalHeader || name == "." || name == "pax_global_header" {
			continue
		}
		first, rest, _ := strings.Cut(name, "/")
		if top == "" {
			top = first
		} else if first != top {
			return "", fmt.Errorf("more than one top directory (%s, %s)", top, first)
		}
		if rest == "" {
			continue
		}
		var mode string
		var data []byte
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg, tar.TypeRegA:
			mode = "100644"
			if h.Mode&0o100 != 0 { // git keeps the owner's execute bit only
				mode = "100755"
			}
			if data, err = io.ReadAll(tr); err != nil {
				return "", err
			}
		case tar.TypeSymlink:
			mode, data = "120000", []byte(h.Linkname)
		default:
			return "", fmt.Errorf("%s: entry type %q is not a file, directory or symbolic link", h.Name, h.Typeflag)
		}
		dir, base := "", rest
		if i := strings.LastIndex(rest, "/"); i >= 0 {
			dir, base = rest[:i], rest[i+1:]
		}
		for d := dir; ; {
			if _, ok := dirs[d]; !ok {
				dirs[d] = map[string]entry{}
			}
			if d == "" {
				break
			}
			if i := strings.LastIndex(d, "/"); i >= 0 {
				d = d[:i]
			} else {
				d = ""
			}
		}
		dirs[dir][base] = entry{mode, gitObject("blob", data)}
	}
	finished = true
	if err := finish(); err != nil {
		return "", err // a truncated or corrupt compressed stream
	}
	if top == "" {
		return "", fmt.Errorf("no files")
	}
	// Trees bottom-up: the deepest directories first.
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Slice(names, func(i, j int) bool { return depth(names[i]) > depth(names[j]) })
	for _, d := range names {
		ents := dirs[d]
		keys := make([]string, 0, len(ents))
		for k := range ents {
			keys = append(keys, k)
		}
		// git orders a tree's entries by name, a directory's name as if
		// it ended in '/'.
		sortKey := func(k string) string {
			if ents[k].mode == "40000" {
				return k + "/"
			}
			return k
		}
		sort.Slice(keys, func(i, j int) bool { return sortKey(keys[i]) < sortKey(keys[j]) })
		var buf bytes.Buffer
		for _, k := range keys {
			fmt.Fprintf(&buf, "%s %s\x00", ents[k].mode, k)
			sha := ents[k].sha
			buf.Write(sha[:])
		}
		sha := gitObject("tree", buf.Bytes())
		if d == "" {
			return hex.EncodeToString(sha[:]), nil
		}
		parent, base := "", d
		if i := strings.LastIndex(d, "/"); i >= 0 {
			parent, base = d[:i], d[i+1:]
		}
		dirs[parent][base] = entry{"40000", sha}
	}
	return "", fmt.Errorf("no top tree")
}

// depth is how many directories down d is ("" is the top, 0).
func depth(d string) int {
	if d == "" {
		return 0
	}
	return strings.Count(d, "/") + 1
}

// gitObject is the sha1 git names an object of this type and content by.
func gitObject(kind string, data []byte) [20]byte {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", kind, len(data))
	h.Write(data)
	var sum [20]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// openTarball opens a tarball, decompressing gzip in Go and xz through
// the xz tool (Go's standard library has no xz reader). finish reads the
// stream to its end and says whether it was whole (the tar reader stops
// at the end-of-archive blocks, before a truncated compressed stream
// would show).
func openTarball(ctx context.Context, file string) (r io.Reader, finish func() error, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	magic, _ := br.Peek(6)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		return zr, func() error {
			defer f.Close()
			if _, err := io.Copy(io.Discard, zr); err != nil {
				return fmt.Errorf("gzip: %w", err)
			}
			return zr.Close()
		}, nil
	case bytes.HasPrefix(magic, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		cmd := exec.CommandContext(ctx, "xz", "-dc")
		cmd.Stdin = br
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("xz: %w (install the xz-utils package)", err)
		}
		return out, func() error {
			defer f.Close()
			_, _ = io.Copy(io.Discard, out)
			if err := cmd.Wait(); err != nil {
				return fmt.Errorf("xz: %v: %s", err, strings.TrimSpace(stderr.String()))
			}
			return nil
		}, nil
	default:
		return br, func() error { f.Close(); return nil }, nil
	}
}

// unpackUpstream unpacks release s and applies its patches under the
// cache, once per tree and patch set, and returns the tree's root.
func (c Cache) unpackUpstream(ctx context.Context, s *UpstreamSource, patches []Patch, nice int, log io.Writer) (string, error) {
	dir := filepath.Join(string(c), "build", "src-"+s.Tree[:12]+"-"+patchesDigest(patches)[:8])
	tree := filepath.Join(dir, "tree")
	stamp := filepath.Join(dir, "unpacked")
	if _, err := os.Stat(stamp); err == nil {
		return tree, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "unpacking linux %s ...\n", s.Version)
	if err := untarOne(ctx, c.BlobPath(s.SHA256), s.File, tree, nice); err != nil {
		return "", err
	}
	for _, p := range patches {
		pf := filepath.Join(dir, p.Name)
		if err := os.WriteFile(pf, p.Data, 0o644); err != nil {
			return "", err
		}
		var out bytes.Buffer
		if err := runLogged(ctx, tree, &out, "patch", "-p1", "--forward", "--batch", "--no-backup-if-mismatch", "-i", pf); err != nil {
			return "", fmt.Errorf("patch %s does not apply to linux %s: %w\n%s", p.Name, s.Version, err, tail(out.String(), 10))
		}
		fmt.Fprintf(log, "applied %s\n", p.Name)
	}
	return tree, WriteFileAtomic(stamp, []byte(s.Version+"\n"), 0o644)
}
