package images

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// upFile is one entry of a synthetic source tree: a file with content and
// mode, or (link != "") a symbolic link, or (dir) an empty directory.
type upFile struct {
	path    string
	content string
	mode    os.FileMode
	link    string
	dir     bool
}

// upWriteTree writes files under root.
func upWriteTree(t *testing.T, root string, files []upFile) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.path))
		if f.dir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if f.link != "" {
			if err := os.Symlink(f.link, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		mode := f.mode
		if mode == 0 {
			mode = 0o644
		}
		if err := os.WriteFile(p, []byte(f.content), mode); err != nil {
			t.Fatal(err)
		}
		// WriteFile's mode passes through the umask.
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// upRun runs a command in dir and returns its standard output; it fails
// the test with the command's output if it fails.
func upRun(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=lab test", "GIT_AUTHOR_EMAIL=lab@example.invalid",
		"GIT_COMMITTER_NAME=lab test", "GIT_COMMITTER_EMAIL=lab@example.invalid",
		"GIT_AUTHOR_DATE=2011-01-07T12:00:00Z", "GIT_COMMITTER_DATE=2011-01-07T12:00:00Z",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// upGitRepo makes a git repository (its git directory outside worktree, so
// tarballs of worktree hold no .git) with everything in worktree added,
// and returns a git command runner for it and the index's tree id.
func upGitRepo(t *testing.T, worktree string) (git func(args ...string) string, tree string) {
	t.Helper()
	gitDir := filepath.Join(t.TempDir(), "repo.git")
	git = func(args ...string) string {
		t.Helper()
		return upRun(t, worktree, "git", append([]string{"--git-dir=" + gitDir, "--work-tree=" + worktree,
			"-c", "user.name=lab test", "-c", "user.email=lab@example.invalid",
			"-c", "core.fileMode=true", "-c", "core.symlinks=true", "-c", "core.autocrlf=false"}, args...)...)
	}
	git("init", "-q")
	git("add", "-A", "-f")
	tree = strings.TrimSpace(git("write-tree"))
	if len(tree) != 40 {
		t.Fatalf("git write-tree printed %q", tree)
	}
	return git, tree
}

// upTar makes out, a tarball of parent/top, passing flags (-z, -J, -H
// posix) to tar.
func upTar(t *testing.T, parent, top, out string, flags ...string) {
	t.Helper()
	args := append([]string{"-C", parent}, flags...)
	upRun(t, parent, "tar", append(args, "-cf", out, top)...)
}

// upGitTree is git's tree id of the directory root.
func upGitTree(t *testing.T, root string) string {
	t.Helper()
	_, tree := upGitRepo(t, root)
	return tree
}

// upReleaseFiles is the synthetic release's tree.
func upReleaseFiles() []upFile {
	return []upFile{
		{path: "Makefile", content: "VERSION = 9\nPATCHLEVEL = 9\nSUBLEVEL = 9\nEXTRAVERSION =\n"},
		{path: "kernel/sched.c", content: "int schedule(void)\n{\n\treturn 0;\n}\n"},
		{path: "scripts/mkversion", content: "#!/bin/sh\necho 9.9.9\n", mode: 0o755},
		{path: "arch/x86/include/asm/page.h", content: "#define PAGE_SHIFT 12\n"},
		{path: "include/asm", link: "../arch/x86/include/asm"},
	}
}

// upRelease writes the synthetic release Linux 9.9.9, changed by mutate if
// it is not nil, as dir/linux-9.9.9.tar.gz in a directory of its own, and
// returns the tarball and git's tree id of its top directory.
func upRelease(t *testing.T, mutate func(root string)) (tarball, tree string) {
	t.Helper()
	parent := t.TempDir()
	root := filepath.Join(parent, "linux-9.9.9")
	upWriteTree(t, root, upReleaseFiles())
	if mutate != nil {
		mutate(root)
	}
	tree = upGitTree(t, root)
	tarball = filepath.Join(t.TempDir(), "linux-9.9.9.tar.gz")
	upTar(t, parent, "linux-9.9.9", tarball, "-z")
	return tarball, tree
}

// upUpstream is the synthetic release's Upstream, downloaded from url.
func upUpstream(tree, url string) Upstream {
	return Upstream{Version: "9.9.9", File: "linux-9.9.9.tar.gz", URL: url, Tree: tree}
}

// upByte changes the first byte of kernel/sched.c.
func upByte(t *testing.T) func(root string) {
	return func(root string) {
		t.Helper()
		p := filepath.Join(root, "kernel", "sched.c")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data[0] = 'I'
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// upNoServer is a URL whose server fails the test when asked.
func upNoServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected download of %s", r.URL.Path)
		http.Error(w, "no", http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/linux-9.9.9.tar.gz"
}

func upCopy(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTarballTreeMatchesGit(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	root := filepath.Join(parent, "top")
	long := strings.Repeat("deep/", 22) + "file-with-a-name-past-the-100-bytes-of-a-ustar-name.c"
	upWriteTree(t, root, []upFile{
		{path: "README", content: "a tree\n"},
		{path: "empty-file", content: ""},
		// git orders "a" (a directory) as "a/": after "a-b" and "a.b",
		// before "a0"; a plain sort would put it first.
		{path: "a.b", content: "dot\n"},
		{path: "a-b", content: "dash\n"},
		{path: "a/inner.c", content: "inner\n"},
		{path: "a/b/c/d.h", content: "nested\n"},
		{path: "a0", content: "zero\n"},
		{path: "a/b.x", content: "b.x file beside directory b\n"},
		{path: "scripts/run.sh", content: "#!/bin/sh\nexit 0\n", mode: 0o755},
		{path: "scripts/user-only-exec", content: "#!/bin/sh\n", mode: 0o744},
		{path: "link-to-file", link: "a/inner.c"},
		{path: "a/link-to-dir", link: "b/c"},
		{path: "dangling", link: "nowhere/at/all"},
		// git records no directories without files.
		{path: "empty-dir/nothing", dir: true},
		{path: long, content: "long\n"},
	})
	git, want := upGitRepo(t, root)
	// The test's premise: git's order is not plain sorting.
	ls := git("ls-tree", "--name-only", want)
	if !strings.Contains(ls, "a-b\na.b\na\na0\n") {
		t.Fatalf("git ls-tree of the test tree:\n%s\nwant a-b, a.b, a, a0 in that order", ls)
	}

	out := t.TempDir()
	cases := map[string]string{}
	for name, flags := range map[string][]string{
		"tar.tar":       nil,
		"tar-posix.tar": {"-H", "posix"},
		"tar.tar.gz":    {"-z"},
		"tar.tar.xz":    {"-J"},
	} {
		p := filepath.Join(out, name)
		upTar(t, parent, "top", p, flags...)
		cases[name] = p
	}
	// git archive: a pax global header (the commit id) first, then top/.
	git("commit", "-q", "-m", "test tree")
	for _, name := range []string{"archive.tar", "archive.tar.gz"} {
		p := filepath.Join(out, name)
		git("archive", "--prefix=top/", "-o", p, "HEAD")
		cases[name] = p
	}
	xzd := filepath.Join(out, "archive.tar.xz")
	upRun(t, out, "sh", "-c", "xz -c archive.tar > archive.tar.xz")
	cases["archive.tar.xz"] = xzd
	// The premise of the git archive cases: they carry the global header.
	f, err := os.Open(cases["archive.tar"])
	if err != nil {
		t.Fatal(err)
	}
	h, err := tar.NewReader(f).Next()
	f.Close()
	if err != nil || h.Typeflag != tar.TypeXGlobalHeader {
		t.Fatalf("git archive's first entry = %+v, %v; want a pax global header", h, err)
	}

	for name, p := range cases {
		got, err := TarballTree(ctx, p)
		if err != nil {
			t.Errorf("TarballTree(%s) = %v, want %s", name, err, want)
			continue
		}
		if got != want {
			t.Errorf("TarballTree(%s) = %s, want git's %s", name, got, want)
		}
	}

	// One byte of one file changes the id (and TarballTree sees it).
	changedFile := filepath.Join(root, "a", "b", "c", "d.h")
	if err := os.WriteFile(changedFile, []byte("Nested\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed := filepath.Join(out, "changed.tar")
	upTar(t, parent, "top", changed)
	got, err := TarballTree(ctx, changed)
	if err != nil || got == want {
		t.Errorf("TarballTree(changed) = %s, %v; want an id other than %s", got, err, want)
	}
	if w := upGitTree(t, root); got != w {
		t.Errorf("TarballTree(changed) = %s, want git's %s", got, w)
	}
}

func TestTarballTreeRefuses(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	upWriteTree(t, parent, []upFile{
		{path: "linux-a/Makefile", content: "a\n"},
		{path: "linux-b/Makefile", content: "b\n"},
	})
	out := t.TempDir()

	two := filepath.Join(out, "two.tar.gz")
	upRun(t, parent, "tar", "-czf", two, "linux-a", "linux-b")
	if got, err := TarballTree(ctx, two); err == nil || !strings.Contains(err.Error(), "more than one top directory (linux-a, linux-b)") {
		t.Errorf("TarballTree(two top directories) = %q, %v; want an error naming both", got, err)
	}

	empty := filepath.Join(out, "empty.tar")
	upRun(t, parent, "tar", "-cf", empty, "-T", "/dev/null")
	if got, err := TarballTree(ctx, empty); err == nil || !strings.Contains(err.Error(), "no files") {
		t.Errorf("TarballTree(empty tarball) = %q, %v; want a 'no files' error", got, err)
	}
	emptyXZ := filepath.Join(out, "empty.tar.xz")
	upRun(t, parent, "tar", "-cJf", emptyXZ, "-T", "/dev/null")
	if got, err := TarballTree(ctx, emptyXZ); err == nil || !strings.Contains(err.Error(), "no files") {
		t.Errorf("TarballTree(empty .tar.xz) = %q, %v; want a 'no files' error", got, err)
	}

	missing := filepath.Join(out, "missing.tar.xz")
	if got, err := TarballTree(ctx, missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("TarballTree(missing file) = %q, %v; want an error naming it", got, err)
	}

	// A hard link is no file git knows: refused, naming the entry.
	upWriteTree(t, parent, []upFile{{path: "linux-h/Makefile", content: "h\n"}})
	if err := os.Link(filepath.Join(parent, "linux-h", "Makefile"), filepath.Join(parent, "linux-h", "Makefile.hard")); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(out, "hard.tar")
	upRun(t, parent, "tar", "-cf", hard, "linux-h")
	if got, err := TarballTree(ctx, hard); err == nil || !strings.Contains(err.Error(), "linux-h/Makefile") || !strings.Contains(err.Error(), "not a file, directory or symbolic link") {
		t.Errorf("TarballTree(hard link) = %q, %v; want an error naming the entry", got, err)
	}

	// A truncated gzip stream is an error, not a tree of what was read.
	full := filepath.Join(out, "full.tar.gz")
	upWriteTree(t, parent, []upFile{{path: "linux-big/data", content: strings.Repeat("0123456789abcdef\n", 1<<14)}})
	upRun(t, parent, "tar", "-czf", full, "linux-big")
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(out, "cut.tar.gz")
	if err := os.WriteFile(cut, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := TarballTree(ctx, cut); err == nil {
		t.Errorf("TarballTree(truncated .tar.gz) = %q, nil; want an error", got)
	}
}

// TestTarballTreeRefusesTruncatedXZ: a .tar.xz missing the last bytes of
// its xz stream (index, footer) decodes to the whole tar, but xz exits 1
// ("Unexpected end of input"), and so does `tar -xf` on it. TarballTree
// must not take the tree of such a file: VerifyUpstream would accept it,
// fetchUpstream keep it, and unpackUpstream fail on it later.
func TestTarballTreeRefusesTruncatedXZ(t *testing.T) {
	ctx := context.Background()
	good, tree := upRelease(t, nil)
	dir := filepath.Dir(good)
	upRun(t, dir, "sh", "-c", "gzip -dc linux-9.9.9.tar.gz | xz -c > full.tar.xz")
	full := filepath.Join(dir, "full.tar.xz")
	if got, err := TarballTree(ctx, full); err != nil || got != tree {
		t.Fatalf("TarballTree(whole .tar.xz) = %q, %v; want %s", got, err, tree)
	}
	data, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	mirror := t.TempDir()
	cut := filepath.Join(mirror, "linux-9.9.9.tar.xz")
	if err := os.WriteFile(cut, data[:len(data)-4], 0o644); err != nil {
		t.Fatal(err)
	}
	// The premise: xz itself calls the file broken.
	if out, err := exec.Command("xz", "-t", cut).CombinedOutput(); err == nil {
		t.Fatalf("xz -t accepts the truncated file (%s); the test needs one it refuses", out)
	}
	if got, err := TarballTree(ctx, cut); err == nil {
		t.Errorf("TarballTree(.tar.xz missing its last 4 bytes) = %q, nil; want an error (xz -d fails on it)", got)
	}
	u := upUpstream(tree, upNoServer(t))
	u.File = "linux-9.9.9.tar.xz"
	c := testCache(t)
	s, err := c.fetchUpstream(ctx, u, SourceOptions{Mirror: mirror, NoDownload: true}, io.Discard)
	if err == nil {
		_, uerr := c.unpackUpstream(ctx, s, nil, 0, io.Discard)
		t.Errorf("fetchUpstream(truncated .tar.xz in the mirror) accepted it (%s), and unpackUpstream then says: %v", s.Verified, uerr)
	} else if !strings.Contains(err.Error(), cut) {
		t.Errorf("fetchUpstream(truncated .tar.xz) = %v; want an error naming %s", err, cut)
	}
}

func TestVerifyUpstream(t *testing.T) {
	ctx := context.Background()
	good, tree := upRelease(t, nil)
	bad, badTree := upRelease(t, upByte(t))
	if tree == badTree {
		t.Fatalf("the changed release has the same tree %s", tree)
	}
	u := upUpstream(tree, "https://example.invalid/linux-9.9.9.tar.gz")

	how, err := VerifyUpstream(ctx, u, good)
	if err != nil || !strings.Contains(how, "git tree "+tree[:12]) {
		t.Errorf("VerifyUpstream(right tarball) = %q, %v; want it verified by the tree %s", how, err, tree[:12])
	}

	how, err = VerifyUpstream(ctx, u, bad)
	if err == nil {
		t.Fatalf("VerifyUpstream(changed tarball) = %q, nil; want an error", how)
	}
	for _, w := range []string{bad, "Linux 9.9.9", "its tree is " + badTree, "the release's is " + tree, "v9.9.9"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("VerifyUpstream(changed tarball) = %v; want an error containing %q", err, w)
		}
	}

	sum, err := fileSHA256(good)
	if err != nil {
		t.Fatal(err)
	}
	bySHA := u
	bySHA.SHA256 = []string{"0000000000000000000000000000000000000000000000000000000000000000", sum}
	how, err = VerifyUpstream(ctx, bySHA, good)
	if err != nil || !strings.Contains(how, "sha256 "+sum[:12]) {
		t.Errorf("VerifyUpstream(recorded sha256) = %q, %v; want it verified by sha256 %s", how, err, sum[:12])
	}
	// A recorded sha256 is taken without reading the tree: it is the
	// sha256, not the tree, that vouches for the file.
	wrongTree := bySHA
	wrongTree.Tree = strings.Repeat("f", 40)
	if how, err := VerifyUpstream(ctx, wrongTree, good); err != nil || !strings.Contains(how, "sha256") {
		t.Errorf("VerifyUpstream(recorded sha256, other tree) = %q, %v; want it verified by sha256", how, err)
	}
	// Recorded sha256s do not let another file through.
	if how, err := VerifyUpstream(ctx, bySHA, bad); err == nil || !strings.Contains(err.Error(), badTree) {
		t.Errorf("VerifyUpstream(changed tarball, sha256s recorded) = %q, %v; want an error naming tree %s", how, err, badTree)
	}

	// Not a tarball at all: an error naming the file and the release.
	junk := filepath.Join(t.TempDir(), "linux-9.9.9.tar.gz")
	writeTestFile(t, junk, "<html>404 not found</html>\n")
	if how, err := VerifyUpstream(ctx, u, junk); err == nil || !strings.Contains(err.Error(), junk) || !strings.Contains(err.Error(), "Linux 9.9.9") {
		t.Errorf("VerifyUpstream(not a tarball) = %q, %v; want an error naming the file and Linux 9.9.9", how, err)
	}
}

func TestFetchUpstreamFromMirrorAndSource(t *testing.T) {
	ctx := context.Background()
	good, tree := upRelease(t, nil)
	bad, badTree := upRelease(t, upByte(t))
	u := upUpstream(tree, upNoServer(t))
	c := testCache(t)
	sum, err := fileSHA256(good)
	if err != nil {
		t.Fatal(err)
	}

	mirror := t.TempDir()
	inMirror := filepath.Join(mirror, u.File)
	upCopy(t, good, inMirror)
	var log bytes.Buffer
	s, err := c.fetchUpstream(ctx, u, SourceOptions{Mirror: mirror}, &log)
	if err != nil {
		t.Fatalf("fetchUpstream(mirror) = %v", err)
	}
	if s.Version != "9.9.9" || s.File != u.File || s.Tree != tree || s.SHA256 != sum || s.From != inMirror || !strings.Contains(s.Verified, tree[:12]) {
		t.Errorf("fetchUpstream(mirror) = %+v; want version 9.9.9, sha256 %s, tree %s, from %s", s, sum, tree, inMirror)
	}
	if !strings.Contains(log.String(), "from "+inMirror) {
		t.Errorf("log = %q, want it to say the source came from %s", log.String(), inMirror)
	}
	if err := c.Verify(sum); err != nil {
		t.Errorf("the tarball is not in the cache: %v", err)
	}
	if _, err := os.Stat(c.upstreamManifest("9.9.9")); err != nil {
		t.Errorf("no manifest recorded: %v", err)
	}

	// Cached: no mirror, no --source, and the URL's server fails the test
	// if asked.
	if err := os.Remove(inMirror); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	s2, err := c.fetchUpstream(ctx, u, SourceOptions{}, &log)
	if err != nil || s2.SHA256 != sum || s2.From != inMirror {
		t.Errorf("fetchUpstream(cached) = %+v, %v; want the cached one (sha256 %s, from %s)", s2, err, sum, inMirror)
	}
	// The manifest names a tree: another release's Upstream with the same
	// version but another tree does not take it.
	other := u
	other.Tree = badTree
	if _, err := c.cachedUpstream(other); err == nil || !strings.Contains(err.Error(), tree) || !strings.Contains(err.Error(), badTree) {
		t.Errorf("cachedUpstream(other tree) = %v; want an error naming both trees", err)
	}

	// --source with the wrong tarball: refused; the cached one stays.
	_, err = c.fetchUpstream(ctx, u, SourceOptions{File: bad}, &log)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), badTree) || !strings.Contains(err.Error(), tree) {
		t.Errorf("fetchUpstream(--source wrong) = %v; want an error naming %s and both trees", err, bad)
	}
	if s3, err := c.fetchUpstream(ctx, u, SourceOptions{}, io.Discard); err != nil || s3.SHA256 != sum || s3.Tree != tree {
		t.Errorf("after a refused --source, fetchUpstream = %+v, %v; want the cached release (sha256 %s)", s3, err, sum)
	}
	if cs, err := c.cachedUpstream(u); err != nil || cs.SHA256 != sum {
		t.Errorf("after a refused --source, cachedUpstream = %+v, %v; want sha256 %s", cs, err, sum)
	}

	// --source that is not there.
	gone := filepath.Join(t.TempDir(), "linux-9.9.9.tar.gz")
	if _, err := c.fetchUpstream(ctx, u, SourceOptions{File: gone}, io.Discard); err == nil || !strings.Contains(err.Error(), "--source "+gone) {
		t.Errorf("fetchUpstream(--source missing) = %v; want an error naming --source %s", err, gone)
	}

	// --source with the release under another name, into a fresh cache.
	renamed := filepath.Join(t.TempDir(), "my-copy.tgz")
	upCopy(t, good, renamed)
	c2 := testCache(t)
	s4, err := c2.fetchUpstream(ctx, u, SourceOptions{File: renamed, Mirror: mirror}, io.Discard)
	if err != nil || s4.SHA256 != sum || s4.From != renamed || s4.File != u.File {
		t.Errorf("fetchUpstream(--source renamed) = %+v, %v; want sha256 %s from %s, file %s", s4, err, sum, renamed, u.File)
	}

	// A wrong tarball in the mirror is refused, and nothing is recorded.
	c3 := testCache(t)
	badMirror := t.TempDir()
	upCopy(t, bad, filepath.Join(badMirror, u.File))
	if _, err := c3.fetchUpstream(ctx, u, SourceOptions{Mirror: badMirror, NoDownload: true}, io.Discard); err == nil || !strings.Contains(err.Error(), badTree) {
		t.Errorf("fetchUpstream(wrong tarball in mirror) = %v; want an error naming tree %s", err, badTree)
	}
	if _, err := os.Stat(c3.upstreamManifest("9.9.9")); !os.IsNotExist(err) {
		t.Errorf("a refused tarball left a manifest (%v)", err)
	}
}

func TestFetchUpstreamMissingSaysWhatToDo(t *testing.T) {
	ctx := context.Background()
	good, tree := upRelease(t, nil)
	bad, badTree := upRelease(t, upByte(t))
	c := testCache(t)
	mirror := t.TempDir()
	u := upUpstream(tree, "https://cdn.example.invalid/pub/linux-9.9.9.tar.gz")

	_, err := c.fetchUpstream(ctx, u, SourceOptions{Mirror: mirror, NoDownload: true}, io.Discard)
	for _, w := range []string{u.File, u.URL, "--source FILE", "LAB_KERNEL_MIRROR", mirror + " has no " + u.File} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("fetchUpstream(empty mirror, no download) = %v; want an error containing %q", err, w)
		}
	}
	_, err = c.fetchUpstream(ctx, u, SourceOptions{NoDownload: true}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "LAB_KERNEL_MIRROR is not set") || !strings.Contains(err.Error(), "--source FILE") {
		t.Errorf("fetchUpstream(no mirror, no download) = %v; want it to say LAB_KERNEL_MIRROR is not set and to suggest --source FILE", err)
	}

	var hits atomic.Int32
	notFound := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer notFound.Close()
	u404 := upUpstream(tree, notFound.URL+"/pub/linux-9.9.9.tar.gz")
	_, err = c.fetchUpstream(ctx, u404, SourceOptions{Mirror: mirror}, io.Discard)
	for _, w := range []string{"downloading " + u404.URL + " failed", "404", u404.File, "--source FILE", "LAB_KERNEL_MIRROR"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("fetchUpstream(404) = %v; want an error containing %q", err, w)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("the server was asked %d times, want 1", hits.Load())
	}

	serve := func(file string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/pub/linux-9.9.9.tar.gz" {
				http.NotFound(w, r)
				return
			}
			http.ServeFile(w, r, file)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	sources := filepath.Join(string(c), "sources")
	noTemporaries := func(what string) {
		t.Helper()
		des, _ := os.ReadDir(sources)
		for _, de := range des {
			if strings.HasPrefix(de.Name(), ".download") {
				t.Errorf("%s left %s in %s", what, de.Name(), sources)
			}
		}
	}

	// A server with another tarball under the name: refused, not kept.
	wrong := serve(bad)
	uWrong := upUpstream(tree, wrong.URL+"/pub/linux-9.9.9.tar.gz")
	_, err = c.fetchUpstream(ctx, uWrong, SourceOptions{}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), badTree) || !strings.Contains(err.Error(), tree) {
		t.Errorf("fetchUpstream(download of a wrong tarball) = %v; want an error naming both trees", err)
	}
	if _, err := c.cachedUpstream(uWrong); err == nil {
		t.Errorf("a refused download was recorded")
	}
	noTemporaries("a refused download")

	right := serve(good)
	uRight := upUpstream(tree, right.URL+"/pub/linux-9.9.9.tar.gz")
	var log bytes.Buffer
	s, err := c.fetchUpstream(ctx, uRight, SourceOptions{Mirror: mirror}, &log)
	if err != nil {
		t.Fatalf("fetchUpstream(download) = %v", err)
	}
	sum, err := fileSHA256(good)
	if err != nil {
		t.Fatal(err)
	}
	if s.SHA256 != sum || s.Tree != tree || s.From != uRight.URL || !strings.Contains(s.Verified, "git tree "+tree[:12]) {
		t.Errorf("fetchUpstream(download) = %+v; want sha256 %s, tree %s, from %s, verified by the tree", s, sum, tree, uRight.URL)
	}
	if !strings.Contains(log.String(), "downloading "+uRight.URL) {
		t.Errorf("log = %q, want it to say it downloads %s", log.String(), uRight.URL)
	}
	if err := c.Verify(sum); err != nil {
		t.Errorf("the download is not in the cache: %v", err)
	}
	noTemporaries("a download")
}

func TestPatchesSayWhatTheyFix(t *testing.T) {
	ps, err := Patches("2.6.32.28")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) < 4 {
		t.Fatalf("Patches(2.6.32.28) = %d patches, want at least 4", len(ps))
	}
	des, err := os.ReadDir(filepath.Join("patches", "linux-2.6.32.28"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []string
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".patch") {
			onDisk = append(onDisk, de.Name())
		}
	}
	if len(onDisk) != len(ps) {
		t.Errorf("Patches(2.6.32.28) = %d patches, the directory holds %d (%v)", len(ps), len(onDisk), onDisk)
	}
	for i, p := range ps {
		if i > 0 && ps[i-1].Name >= p.Name {
			t.Errorf("patch %s comes after %s: not in file name order", p.Name, ps[i-1].Name)
		}
		if i < len(onDisk) && onDisk[i] != p.Name {
			t.Errorf("patch %d is %s, the directory's is %s", i, p.Name, onDisk[i])
		}
		text := string(p.Data)
		if !strings.HasPrefix(text, "Fixes: ") || len(strings.TrimSpace(strings.SplitN(text, "\n", 2)[0])) <= len("Fixes:") {
			first, _, _ := strings.Cut(text, "\n")
			t.Errorf("patch %s begins %q; each patch begins with a \"Fixes:\" line saying which failure it fixes", p.Name, first)
		}
		if !strings.Contains(text, "diff --git ") {
			t.Errorf("patch %s holds no \"diff --git\"", p.Name)
		}
		disk, err := os.ReadFile(filepath.Join("patches", "linux-2.6.32.28", p.Name))
		if err != nil || !bytes.Equal(disk, p.Data) {
			t.Errorf("patch %s: the embedded text differs from the file's (%v)", p.Name, err)
		}
	}
	if ps, err := Patches("0.0.0"); err != nil || len(ps) != 0 {
		t.Errorf("Patches(0.0.0) = %d patches, %v; want none, nil", len(ps), err)
	}
}

// upPatch changes kernel/sched.c's "return 0;" to "return 1;".
const upPatch = `Fixes: the scheduler returning 0.

diff --git a/kernel/sched.c b/kernel/sched.c
--- a/kernel/sched.c
+++ b/kernel/sched.c
@@ -1,4 +1,4 @@
 int schedule(void)
 {
-	return 0;
+	return 1;
 }
`

// upBadPatch changes a line that is not there.
const upBadPatch = `Fixes: nothing; it does not apply.

diff --git a/Makefile b/Makefile
--- a/Makefile
+++ b/Makefile
@@ -1,4 +1,4 @@
 VERSION = 2
-PATCHLEVEL = 6
+PATCHLEVEL = 7
 SUBLEVEL = 32
 EXTRAVERSION =
`

func TestUnpackUpstreamAppliesPatches(t *testing.T) {
	ctx := context.Background()
	good, tree := upRelease(t, nil)
	u := upUpstream(tree, upNoServer(t))
	c := testCache(t)
	s, err := c.fetchUpstream(ctx, u, SourceOptions{File: good}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}

	patches := []Patch{{Name: "01-sched-returns-1.patch", Data: []byte(upPatch)}}
	var log bytes.Buffer
	root, err := c.unpackUpstream(ctx, s, patches, 0, &log)
	if err != nil {
		t.Fatalf("unpackUpstream = %v", err)
	}
	data, err := os.ReadFile(filepath.Join(root, "kernel", "sched.c"))
	if err != nil || string(data) != "int schedule(void)\n{\n\treturn 1;\n}\n" {
		t.Errorf("kernel/sched.c after the patch = %q, %v; want it returning 1", data, err)
	}
	if fi, err := os.Stat(filepath.Join(root, "scripts", "mkversion")); err != nil || fi.Mode()&0o100 == 0 {
		t.Errorf("scripts/mkversion lost its execute bit (%v, %v)", fi, err)
	}
	if target, err := os.Readlink(filepath.Join(root, "include", "asm")); err != nil || target != "../arch/x86/include/asm" {
		t.Errorf("include/asm = %q, %v; want the symbolic link", target, err)
	}
	if !strings.Contains(log.String(), "applied 01-sched-returns-1.patch") {
		t.Errorf("log = %q, want it to say the patch was applied", log.String())
	}
	// Once per tree and patch set: a second call finds it unpacked, and
	// leaves it as it is.
	marker := filepath.Join(root, "built-here")
	writeTestFile(t, marker, "object files\n")
	if root2, err := c.unpackUpstream(ctx, s, patches, 0, io.Discard); err != nil || root2 != root {
		t.Errorf("unpackUpstream(again) = %q, %v; want %q", root2, err, root)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("unpackUpstream(again) unpacked the tree anew: %v", err)
	}
	// No patches: the tree as released, in a directory of its own.
	plain, err := c.unpackUpstream(ctx, s, nil, 0, io.Discard)
	if err != nil || plain == root {
		t.Fatalf("unpackUpstream(no patches) = %q, %v; want a tree other than %q", plain, err, root)
	}
	if data, err := os.ReadFile(filepath.Join(plain, "kernel", "sched.c")); err != nil || !strings.Contains(string(data), "return 0;") {
		t.Errorf("unpatched kernel/sched.c = %q, %v", data, err)
	}

	// A patch that does not apply: an error naming it, after the one that does.
	bad := []Patch{patches[0], {Name: "02-wrong-release.patch", Data: []byte(upBadPatch)}}
	_, err = c.unpackUpstream(ctx, s, bad, 0, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "patch 02-wrong-release.patch does not apply to linux 9.9.9") {
		t.Errorf("unpackUpstream(bad patch) = %v; want an error naming 02-wrong-release.patch", err)
	}
	if err != nil && strings.Contains(err.Error(), "01-sched-returns-1.patch") {
		t.Errorf("unpackUpstream(bad patch) = %v; blames the patch that applied", err)
	}
	// Nor is it taken for unpacked the next time.
	if _, err := c.unpackUpstream(ctx, s, bad, 0, io.Discard); err == nil {
		t.Errorf("unpackUpstream(bad patch, again) = nil; want the error again")
	}
}

func TestUpstreamRecipes(t *testing.T) {
	n := 0
	for id, r := range Recipes {
		if r.Upstream == "" {
			continue
		}
		n++
		u, ok := Upstreams[r.Upstream]
		if !ok {
			t.Errorf("recipe %s: upstream %q is not in Upstreams", id, r.Upstream)
			continue
		}
		if u.Version != r.Upstream || u.File == "" || !strings.HasSuffix(u.URL, "/"+u.File) || len(u.Tree) != 40 {
			t.Errorf("Upstreams[%q] = %+v: want its version, a file, a URL ending in the file, a 40-digit tree", r.Upstream, u)
		}
		for _, f := range r.Fragments {
			if _, err := LoadFragment(f); err != nil {
				t.Errorf("recipe %s: fragment %s: %v", id, f, err)
			}
		}
		if ps, err := Patches(r.Upstream); err != nil || len(ps) == 0 {
			t.Errorf("recipe %s: Patches(%s) = %d, %v; want lab's patches", id, r.Upstream, len(ps), err)
		}
	}
	if n < 3 {
		t.Errorf("%d recipes build from an upstream release, want at least 3 (linux-2.6.32-core2, -p4, -p3)", n)
	}

	o, err := BuildOptions{ID: "linux-2.6.32-p4"}.WithRecipe()
	if err != nil || o.Upstream != "2.6.32.28" || o.Arch != "i386" || strings.Join(o.Fragments, ",") != "linux-2.6.32,linux-2.6.32-p4" {
		t.Errorf("WithRecipe(linux-2.6.32-p4) = %+v, %v; want upstream 2.6.32.28, i386, linux-2.6.32 + linux-2.6.32-p4", o, err)
	}

	_, err = BuildOptions{ID: "x", Arch: "i386", Fragments: []string{"linux-2.6.32"}, Upstream: "1.0"}.WithRecipe()
	if err == nil || !strings.Contains(err.Error(), `"1.0"`) || !strings.Contains(err.Error(), "2.6.32.28") {
		t.Errorf("WithRecipe(upstream 1.0) = %v; want an error naming \"1.0\" and the releases lab knows", err)
	}
}

// TestUntarOneRefusesTwoTops: a tarball that does not hold one top
// directory is refused, naming the tarball (not the blob it is stored
// as), and leaves no scratch directory.
func TestUntarOneRefusesTwoTops(t *testing.T) {
	parent := t.TempDir()
	for _, d := range []string{"linux-a", "linux-b"} {
		if err := os.MkdirAll(filepath.Join(parent, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(parent, d, "f"), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tarball := filepath.Join(t.TempDir(), "two.tar")
	upRun(t, parent, "tar", "-C", parent, "-cf", tarball, "linux-a", "linux-b")
	dir := t.TempDir()
	err := untarOne(context.Background(), tarball, "linux-9.9.9.tar.xz", filepath.Join(dir, "tree"), 0)
	if err == nil || !strings.Contains(err.Error(), "linux-9.9.9.tar.xz should hold one directory") {
		t.Errorf("untarOne(two tops) = %v, want it refused naming linux-9.9.9.tar.xz", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp")); !os.IsNotExist(err) {
		t.Errorf("the scratch directory is left: %v", err)
	}
	if err := untarOne(context.Background(), filepath.Join(dir, "missing.tar"), "missing.tar", filepath.Join(dir, "tree"), 0); err == nil || !strings.Contains(err.Error(), "missing.tar") {
		t.Errorf("untarOne(missing) = %v, want tar's own error", err)
	}
}
