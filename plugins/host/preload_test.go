package host

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// TestBuiltinPreload: the preload list is the built-in bundles' files for
// the arch asked, hashed and moded as the runner pushes them, each
// content once, without the host-side record; user plugins are not in it.
func TestBuiltinPreload(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	root := filepath.Join(lib, "plugins")
	dir := build(t, root, "bench", "i386")
	build(t, root, "bench", "x86_64")
	build(t, root, "other", "x86_64") // no i386 build
	if err := os.MkdirAll(filepath.Join(dir, "workload"), 0o755); err != nil {
		t.Fatal(err)
	}
	same := []byte("workload binary")
	for _, n := range []string{"a", "b"} { // same content twice
		if err := os.WriteFile(filepath.Join(dir, "workload", n), same, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	// A user plugin: never preloaded.
	path := SearchPath{Builtin: BuiltinDir([]string{lib}), User: t.TempDir()}
	if path.Builtin != root {
		t.Fatalf("BuiltinDir(%s) = %q, want %s", lib, path.Builtin, root)
	}
	build(t, path.User, "mine", "i386")

	got, err := BuiltinPreload(path.Builtin, "i386")
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := bundleFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bundleFile{}
	for _, f := range files {
		want[filepath.Join(dir, f.rel)] = f
	}
	if len(got) != 2 {
		t.Fatalf("BuiltinPreload(i386) = %+v; want bench's binary and its workload once", got)
	}
	for _, p := range got {
		f, ok := want[p.Path]
		if !ok {
			t.Errorf("listed %s, not a file the runner pushes for bench/i386", p.Path)
			continue
		}
		b, _ := os.ReadFile(p.Path)
		h := sha256.Sum256(b)
		if p.SHA256 != f.sha256 || p.SHA256 != hex.EncodeToString(h[:]) || p.Mode != uint32(f.mode.Perm()) {
			t.Errorf("%s: sha256 %s mode %o; the runner pushes %s mode %o", p.Path, p.SHA256, p.Mode, f.sha256, f.mode)
		}
		if filepath.Base(p.Path) == RecordFile {
			t.Errorf("the host's record %s is listed", p.Path)
		}
	}
	// The two x86_64 test binaries have the same content: one blob.
	x, err := BuiltinPreload(path.Builtin, "x86_64")
	if err != nil || len(x) != 1 || filepath.Base(filepath.Dir(x[0].Path)) != "x86_64" {
		t.Errorf("BuiltinPreload(x86_64) = %+v, %v; want one x86_64 binary", x, err)
	}

	none := BuiltinDir([]string{t.TempDir()}) // no plugins installed there
	if got, err := BuiltinPreload(none, "i386"); err != nil {
		t.Errorf("BuiltinPreload without built-ins = %v, %v", got, err)
	}
}
