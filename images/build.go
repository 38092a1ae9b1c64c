package images

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Kernels built from source: Debian's linux-source-6.1 package (the
// kernel tree as a tarball), configured from `make tinyconfig` plus
// fragments, cross-compiled for i386. The cache keeps
//
//	sources/linux-source-6.1.json   the source package: version, sha256 of the .deb
//	builds/<key>.json               one build: its inputs, the image and the full .config
//	build/src-<sha>/                the unpacked tree (reused by every build of that source)
//
// A build's key hashes everything its output depends on: the source
// package's sha256, the fragments' names and text in order, the target arch
// and the toolchain's version. The same inputs again are a cache hit: the
// kernel id is pointed at the stored image without building anything.

// SourcePackage is the Debian package the kernel source comes from.
const SourcePackage = "linux-source-6.1"

// buildFormat versions how a build is made: bump it when the steps change
// so old builds are not reused.
const buildFormat = "lab-kernel-build-v2" // v2: the vmlinux is kept for PVH boots

// Source is a cached kernel source package.
type Source struct {
	Package string `json:"package"`
	Version string `json:"version"`
	// SHA256 names the .deb's blob in the cache (an upstream release's
	// tarball for Package "linux").
	SHA256 string `json:"sha256"`
	// Tree and Patches, for an upstream release: its git tree id and
	// lab's patches applied to it, in order.
	Tree    string   `json:"tree,omitempty"`
	Patches []string `json:"patches,omitempty"`
}

// Build records how a kernel was built, with the kernel it gave.
type Build struct {
	// Key is the hash of the inputs (BuildKey).
	Key    string `json:"key"`
	Arch   string `json:"arch"`
	Source Source `json:"source"`
	// Fragments are the fragment names, in the order they were merged.
	Fragments []string `json:"fragments"`
	// Toolchain is the cross compiler's and linker's first --version lines.
	Toolchain string `json:"toolchain"`
	// Config is the sha256 of the full .config's blob.
	Config string `json:"config"`
	// Notable are the options that matter most to benchmarks (NotableOptions).
	Notable map[string]string `json:"notable"`
	// Release is the kernel's `uname -r`; Vmlinuz the image's sha256.
	Release string `json:"release"`
	Vmlinuz string `json:"vmlinuz"`
	// PVH is the sha256 of the stripped vmlinux when the kernel has a PVH
	// entry (CONFIG_PVH=y): what boots use (Kernel.PVH).
	PVH string `json:"pvh,omitempty"`
	// Link is the host-guest link the kernel takes (Kernel.Link).
	Link string `json:"link,omitempty"`
	// Builtin are the modules the guest needs, all built in; nil in
	// records of 6.1 builds, which have every one of GuestModules and
	// NetModules.
	Builtin []string `json:"builtin,omitempty"`
	// Seconds is how long the build took.
	Seconds float64 `json:"seconds"`
	Built   string  `json:"built"`
}

// crossCompile is the toolchain prefix per guest arch.
var crossCompile = map[string]string{"i386": "i686-linux-gnu-"}

// BuildKey hashes a build's inputs. Fragment names count as well as their
// text, so `lab image list` never shows a build under a name it was not
// made with.
func BuildKey(sourceSHA, arch, toolchain string, frags []*Fragment) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\nsource %s\narch %s\ntoolchain %s\n", buildFormat, sourceSHA, arch, toolchain)
	for _, f := range frags {
		fmt.Fprintf(h, "fragment %s %d\n", filepath.Base(f.Name), len(f.Data))
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c Cache) buildManifest(key string) string {
	return filepath.Join(string(c), "builds", key+".json")
}

// BuildOptions are the inputs of BuildKernel.
type BuildOptions struct {
	// ID is the kernel id the image is registered under.
	ID   string
	Arch string
	// Fragments are file paths or names of fragments lab ships, merged in order.
	Fragments []string
	// Jobs is make's -j; 0 means 2.
	Jobs int
	// Nice, if above 0, runs make under `nice -n Nice`: the build yields
	// the host's cores to everything else running.
	Nice int
	// Upstream, if set, is the release (Upstreams) to build from instead
	// of Debian's source; Source says where its tarball may come from.
	Upstream string
	Source   SourceOptions
	// Log receives progress and the build's output.
	Log io.Writer
}

// BuildKernel builds (or finds in the cache) a kernel from Debian's kernel
// source with the given fragments and registers it as o.ID. It returns the
// kernel, its build record and whether it was a cache hit.
func (c Cache) BuildKernel(ctx context.Context, o BuildOptions) (*Kernel, *Build, bool, error) {
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	if !idRE.MatchString(o.ID) {
		return nil, nil, false, fmt.Errorf("kernel %q: id must match %s", o.ID, idRE)
	}
	if _, ok := kernelSources[o.ID]; ok {
		return nil, nil, false, fmt.Errorf("kernel %s: that id belongs to a kernel lab fetches; choose another id", o.ID)
	}
	prefix, ok := crossCompile[o.Arch]
	if !ok {
		return nil, nil, false, fmt.Errorf("kernel %s: lab builds kernels for i386 only, not %q", o.ID, o.Arch)
	}
	if len(o.Fragments) == 0 {
		return nil, nil, false, fmt.Errorf("kernel %s: no --config fragment given (lab ships %s)", o.ID, strings.Join(FragmentNames(), ", "))
	}
	frags, err := loadFragments(o.Fragments)
	if err != nil {
		return nil, nil, false, fmt.Errorf("kernel %s: %w", o.ID, err)
	}
	if err := checkTools(prefix, frags); err != nil {
		return nil, nil, false, fmt.Errorf("kernel %s: %w", o.ID, err)
	}
	toolchain, err := toolchainVersion(ctx, prefix)
	if err != nil {
		return nil, nil, false, fmt.Errorf("kernel %s: %w", o.ID, err)
	}

	// The cache lock only while the source is fetched, and a build lock
	// of its own while building (minutes): a cached kernel is found
	// without waiting for someone else's build.
	st, err := c.buildSource(ctx, o, log)
	if err != nil {
		return nil, nil, false, fmt.Errorf("kernel %s: %w", o.ID, err)
	}
	src := &st.source
	key := BuildKey(st.key, o.Arch, toolchain, frags)
	hit := func() (*Kernel, *Build, bool, error) {
		b, err := c.loadBuild(key)
		if err != nil {
			return nil, nil, false, nil
		}
		k, err := c.registerBuild(o.ID, b)
		if err != nil {
			return nil, nil, false, fmt.Errorf("kernel %s: %w", o.ID, err)
		}
		fmt.Fprintf(log, "kernel %s: cached build %.12s (%s %s, %s)\n", o.ID, key, src.Package, src.Version, strings.Join(b.Fragments, " + "))
		return k, b, true, nil
	}
	if k, b, ok, err := hit(); ok || err != nil {
		return k, b, ok, err
	}
	unlock, err := lockFile(ctx, filepath.Join(string(c), "build", "lock"), "another lab image build is building")
	if err != nil {
		return nil, nil, false, fmt.Errorf("kernel %s: %w", o.ID, err)
	}
	defer unlock()
	if k, b, ok, err := hit(); ok || err != nil {
		return k, b, ok, err // built by whoever held the lock
	}

	start := time.Now()
	tree, err := st.unpack(o.Nice)
	if err != nil {
		return nil, nil, false, fmt.Errorf("kernel %s: %w", o.ID, err)
	}
	out := filepath.Join(string(c), "build", "out-"+key[:16])
	if err := os.RemoveAll(out); err != nil {
		return nil, nil, false, fmt.Errorf("kernel %s: %w", o.ID, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, false, fmt.Errorf("kernel %s: %w", o.ID, err)
	}
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = 2
	}
	b, err := c.runBuild(ctx, tree, out, o.Arch, prefix, jobs, o.Nice, st.base, st.builtin, frags, log)
	if err != nil {
		return nil, nil, false, fmt.Errorf("kernel %s: %w", o.ID, err)
	}
	b.Key, b.Source, b.Toolchain, b.Link = key, *src, toolchain, st.link
	b.Seconds = time.Since(start).Seconds()
	b.Built = time.Now().UTC().Format(time.RFC3339)
	if err := writeJSONAtomic(c.buildManifest(key), b); err != nil {
		return nil, nil, false, fmt.Errorf("kernel %s: writing build record: %w", o.ID, err)
	}
	os.RemoveAll(out) // the image and .config are in the cache; the objects are 100s of MB
	k, err := c.registerBuild(o.ID, b)
	if err != nil {
		return nil, nil, false, fmt.Errorf("kernel %s: %w", o.ID, err)
	}
	fmt.Fprintf(log, "kernel %s: built in %.0f s (release %s, %s)\n", o.ID, b.Seconds, b.Release, notableString(b.Notable))
	return k, b, false, nil
}

// StaleRecipe says why kernel k, registered under the id of one of
// Recipes, is not what that recipe builds now: its fragments (as this lab
// embeds them) or the toolchain changed since k was built. It is "" when
// k is current, is not a recipe's, or when that cannot be told (no cross
// compiler, no source package in the cache).
func (c Cache) StaleRecipe(ctx context.Context, k *Kernel) string {
	r, ok := Recipes[k.ID]
	if !ok {
		return ""
	}
	built, ok := strings.CutPrefix(k.Source, "build:")
	if !ok {
		return ""
	}
	srcKey, err := c.cachedSourceKey(r)
	if err != nil {
		return ""
	}
	toolchain, err := toolchainVersion(ctx, crossCompile[r.Arch])
	if err != nil {
		return ""
	}
	frags, err := loadFragments(r.Fragments)
	if err != nil {
		return ""
	}
	if BuildKey(srcKey, r.Arch, toolchain, frags) == built {
		return ""
	}
	return fmt.Sprintf("kernel %s was built from other fragments or with another toolchain than its recipe (%s) gives now; `lab image build %s` (or `make setup-all`) rebuilds it, minutes once", k.ID, strings.Join(r.Fragments, " + "), k.ID)
}

// cachedSourceKey is what BuildKey hashes for recipe r's source, as the
// cache has it; an error if the cache has no source for it yet.
func (c Cache) cachedSourceKey(r Recipe) (string, error) {
	if r.Upstream == "" {
		src, err := c.cachedSource()
		if err != nil {
			return "", err
		}
		return src.SHA256, nil
	}
	u := Upstreams[r.Upstream]
	if _, err := c.cachedUpstream(u); err != nil {
		return "", err
	}
	patches, err := Patches(u.Version)
	if err != nil {
		return "", err
	}
	return upstreamKey(u, patches), nil
}

// buildSource is where a build's tree comes from and how it is configured.
type buildSource struct {
	source Source
	// key is what BuildKey hashes for the source.
	key string
	// base is the make target the fragments go on top of.
	base string
	// builtin are the modules the guest needs built in (nil: 6.1's).
	builtin []string
	// link is the host-guest link the kernel takes ("" for LinkPort).
	link   string
	unpack func(nice int) (string, error)
}

// UpstreamBuiltin are the modules a guest needs from an upstream 2.6
// kernel: 2.6.32's virtio has no modern/legacy PCI split.
var UpstreamBuiltin = []string{"virtio", "virtio_ring", "virtio_pci", "virtio_console", "virtio_rng", "virtio_net"}

// upstreamKey is what BuildKey hashes for release u with patches: its
// tree, not its file's bytes, so any file of the release builds the same.
func upstreamKey(u Upstream, patches []Patch) string {
	return "upstream " + u.Tree + " patches " + patchesDigest(patches) + " base allnoconfig"
}

// buildSource finds (fetching once, under the cache lock) the source of
// build o.
func (c Cache) buildSource(ctx context.Context, o BuildOptions, log io.Writer) (*buildSource, error) {
	if o.Upstream == "" {
		src, err := c.cachedSource()
		if err != nil {
			unlock, err := c.Lock(ctx)
			if err != nil {
				return nil, err
			}
			src, err = c.fetchSource(ctx, log)
			unlock()
			if err != nil {
				return nil, err
			}
		}
		return &buildSource{source: *src, key: src.SHA256, base: "tinyconfig",
			unpack: func(nice int) (string, error) { return c.unpackSource(ctx, src, nice, log) }}, nil
	}
	u, ok := Upstreams[o.Upstream]
	if !ok {
		return nil, fmt.Errorf("lab knows no upstream release %q", o.Upstream)
	}
	patches, err := Patches(u.Version)
	if err != nil {
		return nil, err
	}
	us, err := c.cachedUpstream(u)
	if err != nil || o.Source.File != "" {
		unlock, err := c.Lock(ctx)
		if err != nil {
			return nil, err
		}
		us, err = c.fetchUpstream(ctx, u, o.Source, log)
		unlock()
		if err != nil {
			return nil, err
		}
	}
	var names []string
	for _, p := range patches {
		names = append(names, p.Name)
	}
	return &buildSource{
		source: Source{Package: "linux", Version: u.Version, SHA256: us.SHA256, Tree: u.Tree, Patches: names},
		key:    upstreamKey(u, patches), base: "allnoconfig", builtin: UpstreamBuiltin, link: LinkHVC,
		unpack: func(nice int) (string, error) { return c.unpackUpstream(ctx, us, patches, nice, log) },
	}, nil
}

// configure writes out/.config: `make base` with the fragments on top.
// For tinyconfig (6.1) the fragments are merged with merge_config.sh and
// completed by olddefconfig; for allnoconfig (2.6.32, which has neither
// tinyconfig, merge_config.sh nor olddefconfig) they are concatenated in
// order into KCONFIG_ALLCONFIG, which allnoconfig takes as given.
func configure(ctx context.Context, tree, out, base, makeCmd string, mk []string, frags []*Fragment, lf io.Writer) error {
	if base == "allnoconfig" {
		var all bytes.Buffer
		for _, f := range frags {
			all.Write(f.Data)
			all.WriteString("\n")
		}
		p := filepath.Join(out, "lab-allconfig")
		if err := os.WriteFile(p, all.Bytes(), 0o644); err != nil {
			return err
		}
		if err := runLogged(ctx, "", lf, makeCmd, append(mk, "KCONFIG_ALLCONFIG="+p, "allnoconfig")...); err != nil {
			return fmt.Errorf("make allnoconfig: %w", err)
		}
		return nil
	}
	if err := runLogged(ctx, "", lf, makeCmd, append(mk, "tinyconfig")...); err != nil {
		return fmt.Errorf("make tinyconfig: %w", err)
	}
	var paths []string
	for i, f := range frags {
		p := filepath.Join(out, fmt.Sprintf("lab-fragment-%d-%s", i, filepath.Base(f.Name)))
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
		paths = append(paths, p)
	}
	merge := filepath.Join(tree, "scripts", "kconfig", "merge_config.sh")
	if err := runLogged(ctx, out, lf, "sh", append([]string{merge, "-m", "-O", out, filepath.Join(out, ".config")}, paths...)...); err != nil {
		return fmt.Errorf("merging the fragments: %w", err)
	}
	if err := runLogged(ctx, "", lf, makeCmd, append(mk, "olddefconfig")...); err != nil {
		return fmt.Errorf("make olddefconfig: %w", err)
	}
	return nil
}

// loadFragments loads each of args (LoadFragment), in order.
func loadFragments(args []string) ([]*Fragment, error) {
	var frags []*Fragment
	for _, a := range args {
		f, err := LoadFragment(a)
		if err != nil {
			return nil, err
		}
		frags = append(frags, f)
	}
	return frags, nil
}

// notableString prints notable options in a fixed order.
func notableString(n map[string]string) string {
	var parts []string
	for _, k := range []string{"hz", "preempt", "hrtimers", "split", "cpu"} {
		if v, ok := n[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// BuildString is how kernel k was built, for a listing: its fragments
// and notable options, "-" for a kernel lab did not build.
func (c Cache) BuildString(k *Kernel) string {
	b, err := c.LoadBuild(k)
	if err != nil {
		return "-"
	}
	s := strings.Join(b.Fragments, "+") + " " + b.NotableString()
	if b.Source.Tree != "" { // an upstream release: which tree, patched how
		s = fmt.Sprintf("tree %.12s + %d patches (%s): %s", b.Source.Tree, len(b.Source.Patches), strings.Join(b.Source.Patches, " "), s)
	}
	return s
}

// Summary is the build of kernel k in a line, as `lab image build`
// prints it; hit says it was a cache hit.
func (b *Build) Summary(k *Kernel, hit bool) string {
	how := fmt.Sprintf("built in %.0f s", b.Seconds)
	if hit {
		how = "cache hit"
	}
	return fmt.Sprintf("kernel %s: %s %s + %s (release %s; %s; config %.12s; %s)", k.ID, b.Source.Package, b.Source.Version, strings.Join(b.Fragments, " + "), k.Release, b.NotableString(), b.Config, how)
}

// NotableString is the build's notable options as one line.
func (b *Build) NotableString() string { return notableString(b.Notable) }

// LoadBuild reads the record of the build that made kernel k ("" error if k
// was not built by lab).
func (c Cache) LoadBuild(k *Kernel) (*Build, error) {
	key, ok := strings.CutPrefix(k.Source, "build:")
	if !ok {
		return nil, fmt.Errorf("kernel %s was not built by lab", k.ID)
	}
	return c.loadBuild(key)
}

func (c Cache) loadBuild(key string) (*Build, error) {
	data, err := os.ReadFile(c.buildManifest(key))
	if err != nil {
		return nil, err
	}
	var b Build
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("build %.12s: %w", key, err)
	}
	if b.Key != key {
		return nil, fmt.Errorf("build %.12s: record is for %.12s", key, b.Key)
	}
	if err := c.Verify(b.Vmlinuz); err != nil {
		return nil, err
	}
	if b.PVH != "" {
		if err := c.Verify(b.PVH); err != nil {
			return nil, err
		}
	}
	if err := c.Verify(b.Config); err != nil {
		return nil, err
	}
	return &b, nil
}

// registerBuild writes the kernel manifest for id, pointing at b's image.
// The kernel has no modules: everything the guest needs is built in.
func (c Cache) registerBuild(id string, b *Build) (*Kernel, error) {
	k := &Kernel{
		ID: id, Arch: b.Arch, Package: b.Source.Package, Version: b.Source.Version,
		Source: "build:" + b.Key, Release: b.Release, Vmlinuz: b.Vmlinuz, PVH: b.PVH,
		Modules: []Module{}, NetModules: []Module{},
		Builtin: b.builtin(),
		Config:  b.Config, Notable: b.Notable, Link: b.Link,
	}
	if err := writeJSONAtomic(c.kernelManifest(id), k); err != nil {
		return nil, fmt.Errorf("writing manifest: %w", err)
	}
	return k, nil
}

// builtin are the modules the kernel of b has built in.
func (b *Build) builtin() []string {
	if b.Builtin != nil {
		return slices.Clone(b.Builtin)
	}
	return append(slices.Clone(GuestModules), NetModules...)
}

// builtinNeeds maps each module the guest needs to the option that builds
// it in. A built kernel has no modules, so all of them must be y.
var builtinNeeds = map[string]string{
	"virtio": "CONFIG_VIRTIO", "virtio_ring": "CONFIG_VIRTIO", "virtio_pci": "CONFIG_VIRTIO_PCI",
	"virtio_pci_modern_dev": "CONFIG_VIRTIO_PCI_LIB", "virtio_pci_legacy_dev": "CONFIG_VIRTIO_PCI_LIB_LEGACY",
	"virtio_console": "CONFIG_VIRTIO_CONSOLE", "virtio_rng": "CONFIG_HW_RANDOM_VIRTIO",
	"virtio_net": "CONFIG_VIRTIO_NET",
}

// CheckBuiltin fails unless every module the guest needs (modules; nil is
// GuestModules and NetModules) is built in.
func CheckBuiltin(cfg map[string]string, modules []string) error {
	if modules == nil {
		modules = append(slices.Clone(GuestModules), NetModules...)
	}
	var missing []string
	for _, m := range modules {
		sym := builtinNeeds[m]
		if ConfigValue(cfg, sym) != "y" {
			missing = append(missing, fmt.Sprintf("%s (%s=y)", m, sym))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the guest needs these built in, and the configuration does not have them: %s; add them to a fragment (base.config and linux-2.6.32.config have them)", strings.Join(missing, ", "))
	}
	return nil
}

// checkTools fails naming the first build tool missing from PATH.
func checkTools(prefix string, frags []*Fragment) error {
	tools := []struct{ name, pkg string }{
		{"make", "make"}, {"flex", "flex"}, {"bison", "bison"}, {"bc", "bc"}, {"perl", "perl"},
		{"gcc", "gcc"}, {prefix + "gcc", "gcc-" + strings.TrimSuffix(prefix, "-")},
		{prefix + "strip", "binutils-" + strings.TrimSuffix(prefix, "-")},
		{"xz", "xz-utils"}, {"patch", "patch"},
	}
	for _, f := range frags {
		if f.Options["CONFIG_KERNEL_LZ4"] == "y" {
			tools = append(tools, struct{ name, pkg string }{"lz4", "lz4"})
		}
	}
	for _, t := range tools {
		if _, err := exec.LookPath(t.name); err != nil {
			return fmt.Errorf("building a kernel needs %s, which is not on PATH; install the %s package (`make deps` installs every build dependency)", t.name, t.pkg)
		}
	}
	for _, h := range []struct{ path, pkg string }{{"/usr/include/gelf.h", "libelf-dev"}, {"/usr/include/openssl/ssl.h", "libssl-dev"}} {
		if _, err := os.Stat(h.path); err != nil {
			return fmt.Errorf("building a kernel needs %s, which is missing; install the %s package (`make deps` installs every build dependency)", h.path, h.pkg)
		}
	}
	return nil
}

// toolchainVersion is the first line of the cross compiler's and the
// linker's --version.
func toolchainVersion(ctx context.Context, prefix string) (string, error) {
	var lines []string
	for _, tool := range []string{prefix + "gcc", prefix + "ld"} {
		out, err := exec.CommandContext(ctx, tool, "--version").Output()
		if err != nil {
			return "", fmt.Errorf("%s --version: %w", tool, err)
		}
		first, _, _ := strings.Cut(string(out), "\n")
		lines = append(lines, strings.TrimSpace(first))
	}
	return strings.Join(lines, "; "), nil
}

func (c Cache) sourceManifest() string {
	return filepath.Join(string(c), "sources", SourcePackage+".json")
}

// cachedSource is the source package in the cache, if it is there and
// verifies.
func (c Cache) cachedSource() (*Source, error) {
	data, err := os.ReadFile(c.sourceManifest())
	if err != nil {
		return nil, err
	}
	var s Source
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	if err := c.Verify(s.SHA256); err != nil {
		return nil, err
	}
	return &s, nil
}

// fetchSource returns the cached source package, downloading it with
// apt-get download the first time. Later calls use the cached one: a
// kernel does not change under a profile because Debian published a new
// point release (remove sources/ from the cache to take the new one).
func (c Cache) fetchSource(ctx context.Context, log io.Writer) (*Source, error) {
	if s, err := c.cachedSource(); err == nil {
		return s, nil
	}
	tmp, err := os.MkdirTemp("", "lab-source-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// apt's sandbox user must be able to write the download directory.
	_ = os.Chmod(tmp, 0o777)
	a := apt{log: log}
	deb, err := a.download(ctx, SourcePackage, tmp)
	if err != nil {
		return nil, fmt.Errorf("kernel source: %w", err)
	}
	version, err := a.debField(ctx, deb, "Version")
	if err != nil {
		return nil, fmt.Errorf("kernel source: %w", err)
	}
	sha, err := c.PutFile(deb)
	if err != nil {
		return nil, fmt.Errorf("kernel source: %w", err)
	}
	s := &Source{Package: SourcePackage, Version: version, SHA256: sha}
	if err := writeJSONAtomic(c.sourceManifest(), s); err != nil {
		return nil, fmt.Errorf("kernel source: %w", err)
	}
	fmt.Fprintf(log, "kernel source: %s %s (sha256 %.12s)\n", s.Package, s.Version, s.SHA256)
	return s, nil
}

// unpackSource unpacks the source package's tarball under the cache once
// per source sha256 and returns the tree's root.
func (c Cache) unpackSource(ctx context.Context, src *Source, nice int, log io.Writer) (string, error) {
	dir := filepath.Join(string(c), "build", "src-"+src.SHA256[:16])
	tree := filepath.Join(dir, "tree")
	stamp := filepath.Join(dir, "unpacked")
	if _, err := os.Stat(stamp); err == nil {
		return tree, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "unpacking %s %s ...\n", src.Package, src.Version)
	a := apt{log: log}
	deb := filepath.Join(dir, "deb")
	if err := a.extract(ctx, c.BlobPath(src.SHA256), deb); err != nil {
		return "", fmt.Errorf("kernel source: %w", err)
	}
	tars, _ := filepath.Glob(filepath.Join(deb, "usr", "src", "linux-source-*.tar.*"))
	if len(tars) != 1 {
		return "", fmt.Errorf("kernel source: want one usr/src/linux-source-*.tar.* in %s, found %d", src.Package, len(tars))
	}
	if err := untarOne(ctx, tars[0], filepath.Base(tars[0]), tree, nice); err != nil {
		return "", err
	}
	os.RemoveAll(deb)
	return tree, WriteFileAtomic(stamp, []byte(src.Version+"\n"), 0o644)
}

// untarOne unpacks tarball (named name in errors), which must hold one
// top directory, as tree (tree's parent gets a scratch directory "tmp"
// meanwhile). Kernel sources of both kinds unpack through it.
func untarOne(ctx context.Context, tarball, name, tree string, nice int) error {
	tmp := filepath.Join(filepath.Dir(tree), "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var out tailWriter
	tarCmd, tarArgs := niced(nice, "tar", []string{"-xf", tarball})
	if err := runLogged(ctx, tmp, &out, tarCmd, tarArgs...); err != nil {
		return fmt.Errorf("kernel source: %w\n%s", err, tail(out.String(), 5))
	}
	des, err := os.ReadDir(tmp)
	if err != nil || len(des) != 1 || !des[0].IsDir() {
		return fmt.Errorf("kernel source: the tarball %s should hold one directory", name)
	}
	return os.Rename(filepath.Join(tmp, des[0].Name()), tree)
}

// runBuild configures and builds one kernel in out (make's O=) from tree.
func (c Cache) runBuild(ctx context.Context, tree, out, arch, prefix string, jobs, nice int, base string, builtin []string, frags []*Fragment, log io.Writer) (*Build, error) {
	makeCmd, mk := niced(nice, "make", []string{"-C", tree, "O=" + out, "ARCH=" + arch, "CROSS_COMPILE=" + prefix})
	logPath := filepath.Join(out, "lab-build.log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	fmt.Fprintf(log, "configuring: %s + %s\n", base, strings.Join(fragNames(frags), " + "))
	if err := configure(ctx, tree, out, base, makeCmd, mk, frags, lf); err != nil {
		return nil, fmt.Errorf("%w (log: %s)", err, logPath)
	}
	config, err := os.ReadFile(filepath.Join(out, ".config"))
	if err != nil {
		return nil, err
	}
	cfg := ParseConfig(config)
	if missed := CheckConfig(frags, cfg); len(missed) > 0 {
		var lines []string
		for _, m := range missed {
			lines = append(lines, "  "+m.String()+kconfigDepends(tree, m.Symbol))
		}
		return nil, fmt.Errorf("%d option(s) did not take; each needs an option the fragments leave off, or is not an option of this kernel:\n%s", len(missed), strings.Join(lines, "\n"))
	}
	if err := CheckBuiltin(cfg, builtin); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "building bzImage (make -j%d; minutes) ...\n", jobs)
	var tailBuf tailWriter
	if err := runLogged(ctx, "", io.MultiWriter(lf, &tailBuf), makeCmd, append(mk, fmt.Sprintf("-j%d", jobs), "bzImage")...); err != nil {
		return nil, fmt.Errorf("make bzImage: %w:\n%s\n(full log: %s)", err, tail(tailBuf.String(), 15), logPath)
	}
	image := filepath.Join(out, "arch", "x86", "boot", "bzImage")
	release, err := bzImageRelease(image)
	if err != nil {
		return nil, err
	}
	vsha, err := c.PutFile(image)
	if err != nil {
		return nil, err
	}
	csha, err := c.PutReader(bytes.NewReader(config))
	if err != nil {
		return nil, err
	}
	b := &Build{Arch: arch, Fragments: fragNames(frags), Config: csha, Notable: NotableOptions(cfg), Release: release, Vmlinuz: vsha, Builtin: builtin}
	if ConfigValue(cfg, "CONFIG_PVH") == "y" {
		// The vmlinux QEMU enters through the PVH note, without its
		// symbol table (the note and the loadable segments stay).
		stripped := filepath.Join(out, "vmlinux.stripped")
		if err := runLogged(ctx, "", lf, prefix+"strip", "--strip-all", "-o", stripped, filepath.Join(out, "vmlinux")); err != nil {
			return nil, fmt.Errorf("stripping vmlinux: %w (log: %s)", err, logPath)
		}
		if _, err := PVHEntry(stripped); err != nil {
			return nil, fmt.Errorf("CONFIG_PVH=y, but %w", err)
		}
		if b.PVH, err = c.PutFile(stripped); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// PVHEntry is the 32-bit entry point a vmlinux's PVH ELF note names (the
// note type XEN_ELFNOTE_PHYS32_ENTRY, 18, owned by "Xen"), which is what
// QEMU's -kernel looks for to boot an ELF directly.
func PVHEntry(path string) (uint32, error) {
	f, err := elf.Open(path)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		data, err := io.ReadAll(p.Open())
		if err != nil {
			return 0, fmt.Errorf("%s: reading notes: %w", filepath.Base(path), err)
		}
		bo := f.ByteOrder
		for len(data) >= 12 {
			namesz, descsz, typ := bo.Uint32(data[0:]), bo.Uint32(data[4:]), bo.Uint32(data[8:])
			nameEnd := 12 + (namesz+3)&^3
			descEnd := nameEnd + (descsz+3)&^3
			if uint64(descEnd) > uint64(len(data)) {
				break
			}
			name := strings.TrimRight(string(data[12:12+namesz]), "\x00")
			if name == "Xen" && typ == 18 && descsz >= 4 {
				return bo.Uint32(data[nameEnd:]), nil
			}
			data = data[descEnd:]
		}
	}
	return 0, fmt.Errorf("%s has no PVH entry note (Xen, XEN_ELFNOTE_PHYS32_ENTRY)", filepath.Base(path))
}

func fragNames(frags []*Fragment) []string {
	var names []string
	for _, f := range frags {
		names = append(names, filepath.Base(f.Name))
	}
	return names
}

// kconfigDepends finds sym's "depends on" lines in the tree's Kconfig
// files, to say what a missed option needs ("" if not found).
func kconfigDepends(tree, sym string) string {
	name := strings.TrimPrefix(sym, "CONFIG_")
	var deps []string
	found := false
	_ = filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return nil
		}
		if d.IsDir() {
			switch d.Name() {
			case "Documentation", ".git", "tools", "samples":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(d.Name(), "Kconfig") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		lines := strings.Split(string(data), "\n")
		for i, l := range lines {
			if t := strings.TrimSpace(l); t == "config "+name || t == "menuconfig "+name {
				found = true
				for _, l2 := range lines[i+1:] {
					t2 := strings.TrimSpace(l2)
					if strings.HasPrefix(t2, "config ") || strings.HasPrefix(t2, "menuconfig ") || strings.HasPrefix(t2, "endmenu") || strings.HasPrefix(t2, "choice") {
						break
					}
					if d, ok := strings.CutPrefix(t2, "depends on "); ok {
						deps = append(deps, d)
					}
				}
				break
			}
		}
		return nil
	})
	if !found {
		return "; no such option in this kernel"
	}
	if len(deps) == 0 {
		return ""
	}
	return "; it depends on " + strings.Join(deps, " && ")
}

// niced is the command line that runs name with args under `nice -n
// nice`, or as it is for nice 0.
func niced(nice int, name string, args []string) (string, []string) {
	if nice <= 0 {
		return name, args
	}
	return "nice", append([]string{"-n", fmt.Sprint(nice), name}, args...)
}

// runLogged runs a command with its output going to w. The command leads
// a process group of its own, and ctx ending (Ctrl-C) kills the whole
// group: make -j's compilers go with make.
func runLogged(ctx context.Context, dir string, w io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// tailWriter keeps the last 64 KiB written to it.
type tailWriter struct{ buf []byte }

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 64<<10 {
		t.buf = t.buf[len(t.buf)-64<<10:]
	}
	return len(p), nil
}

func (t *tailWriter) String() string { return string(t.buf) }

// PruneBuilds removes what kernel builds keep only to be quicker next
// time: the unpacked source trees (build/src-*, about 1.5 GB each; the
// next build unpacks the cached source package again) and the object
// directories of builds that failed or were stopped (build/out-*). The
// built kernels and their records stay. While a build holds the build
// lock nothing is removed, and busy says so.
func (c Cache) PruneBuilds() (files int, bytes int64, busy bool, err error) {
	dir := filepath.Join(string(c), "build")
	des, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	unlock, err := tryLockFile(filepath.Join(dir, "lock"))
	if err != nil {
		return 0, 0, false, err
	}
	if unlock == nil {
		return 0, 0, true, nil
	}
	defer unlock()
	for _, de := range des {
		if !de.IsDir() || !(strings.HasPrefix(de.Name(), "src-") || strings.HasPrefix(de.Name(), "out-")) {
			continue
		}
		p := filepath.Join(dir, de.Name())
		_ = filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files++
				if fi, err := d.Info(); err == nil {
					bytes += fi.Size()
				}
			}
			return nil
		})
		if err := os.RemoveAll(p); err != nil {
			return files, bytes, false, err
		}
	}
	return files, bytes, false, nil
}
