package images

import (
	"os"
	"strings"
	"testing"
)

// TestRemoveKernel: removing a kernel takes its manifest, and its build
// record and blobs once nothing else names them; what another kernel id
// (a cache hit registered under another name) still uses stays.
func TestRemoveKernel(t *testing.T) {
	t.Setenv("LAB_CACHE_DIR", t.TempDir())
	blob := func(s string) string {
		sha, err := PutReader(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	va, pa, cfg, vb, m1 := blob("bzImage of a"), blob("vmlinux of a"), blob("config"), blob("vmlinuz of b"), blob("module")
	write := func(path string, v any) {
		if err := writeJSONAtomic(path, v); err != nil {
			t.Fatal(err)
		}
	}
	write(buildManifest("k1"), &Build{Key: "k1", Vmlinuz: va, PVH: pa, Config: cfg})
	for _, id := range []string{"era-a", "era-a2"} {
		write(kernelManifest(id), &Kernel{ID: id, Source: "build:k1", Vmlinuz: va, PVH: pa, Config: cfg})
	}
	write(kernelManifest("deb-b"), &Kernel{ID: "deb-b", Source: "debian", Vmlinuz: vb, Modules: []Module{{Name: "m", SHA256: m1}}})
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	// era-a2 still uses the build: only era-a's manifest goes.
	if freed, err := RemoveKernel("era-a"); err != nil || freed != 0 {
		t.Fatalf("RemoveKernel(era-a) = %d, %v; want 0 bytes freed", freed, err)
	}
	if exists(kernelManifest("era-a")) || !exists(buildManifest("k1")) || !exists(BlobPath(va)) || !exists(BlobPath(pa)) {
		t.Fatal("removing era-a took what era-a2 uses, or left era-a's manifest")
	}
	// The last user of the build: the record and its blobs go.
	freed, err := RemoveKernel("era-a2")
	if want := int64(len("bzImage of a") + len("vmlinux of a") + len("config")); err != nil || freed != want {
		t.Fatalf("RemoveKernel(era-a2) = %d, %v; want %d", freed, err, want)
	}
	for _, p := range []string{kernelManifest("era-a2"), buildManifest("k1"), BlobPath(va), BlobPath(pa), BlobPath(cfg)} {
		if exists(p) {
			t.Errorf("%s is still there", p)
		}
	}
	if !exists(BlobPath(vb)) || !exists(BlobPath(m1)) {
		t.Error("removing era-a2 took deb-b's blobs")
	}
	if _, err := RemoveKernel("deb-b"); err != nil || exists(BlobPath(vb)) || exists(BlobPath(m1)) {
		t.Errorf("RemoveKernel(deb-b): %v; blobs left: %v %v", err, exists(BlobPath(vb)), exists(BlobPath(m1)))
	}
	// A manifest that does not parse can still be removed.
	if err := os.WriteFile(kernelManifest("broken"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKernel("broken"); err == nil || !strings.Contains(err.Error(), "run 'lab image fetch broken' again") {
		t.Errorf("LoadKernel of a broken manifest: %v", err)
	}
	if _, err := RemoveKernel("broken"); err != nil || exists(kernelManifest("broken")) {
		t.Errorf("RemoveKernel(broken): %v; manifest left: %v", err, exists(kernelManifest("broken")))
	}
	write(kernelManifest("other"), &Kernel{ID: "other", Source: "debian", Vmlinuz: vb})
	if _, err := RemoveKernel("era-a"); err == nil || !strings.Contains(err.Error(), "kernel era-a is not in the cache (it has other") {
		t.Errorf("removing a kernel not in the cache: %v", err)
	}
}
