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
	t.Parallel()
	cache := testCache(t)
	blob := func(s string) string {
		sha, err := cache.PutReader(strings.NewReader(s))
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
	write(cache.buildManifest("k1"), &Build{Key: "k1", Vmlinuz: va, PVH: pa, Config: cfg})
	for _, id := range []string{"era-a", "era-a2"} {
		write(cache.kernelManifest(id), &Kernel{ID: id, Source: "build:k1", Vmlinuz: va, PVH: pa, Config: cfg})
	}
	write(cache.kernelManifest("deb-b"), &Kernel{ID: "deb-b", Source: "debian", Vmlinuz: vb, Modules: []Module{{Name: "m", SHA256: m1}}})
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	// era-a2 still uses the build: only era-a's manifest goes.
	if freed, err := cache.RemoveKernel("era-a"); err != nil || freed != 0 {
		t.Fatalf("RemoveKernel(era-a) = %d, %v; want 0 bytes freed", freed, err)
	}
	if exists(cache.kernelManifest("era-a")) || !exists(cache.buildManifest("k1")) || !exists(cache.BlobPath(va)) || !exists(cache.BlobPath(pa)) {
		t.Fatal("removing era-a took what era-a2 uses, or left era-a's manifest")
	}
	// The last user of the build: the record and its blobs go.
	freed, err := cache.RemoveKernel("era-a2")
	if want := int64(len("bzImage of a") + len("vmlinux of a") + len("config")); err != nil || freed != want {
		t.Fatalf("RemoveKernel(era-a2) = %d, %v; want %d", freed, err, want)
	}
	for _, p := range []string{cache.kernelManifest("era-a2"), cache.buildManifest("k1"), cache.BlobPath(va), cache.BlobPath(pa), cache.BlobPath(cfg)} {
		if exists(p) {
			t.Errorf("%s is still there", p)
		}
	}
	if !exists(cache.BlobPath(vb)) || !exists(cache.BlobPath(m1)) {
		t.Error("removing era-a2 took deb-b's blobs")
	}
	if _, err := cache.RemoveKernel("deb-b"); err != nil || exists(cache.BlobPath(vb)) || exists(cache.BlobPath(m1)) {
		t.Errorf("RemoveKernel(deb-b): %v; blobs left: %v %v", err, exists(cache.BlobPath(vb)), exists(cache.BlobPath(m1)))
	}
	// A manifest that does not parse can still be removed.
	if err := os.WriteFile(cache.kernelManifest("broken"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.LoadKernel("broken"); err == nil || !strings.Contains(err.Error(), "run 'lab image fetch broken' again") {
		t.Errorf("LoadKernel of a broken manifest: %v", err)
	}
	if _, err := cache.RemoveKernel("broken"); err != nil || exists(cache.kernelManifest("broken")) {
		t.Errorf("RemoveKernel(broken): %v; manifest left: %v", err, exists(cache.kernelManifest("broken")))
	}
	write(cache.kernelManifest("other"), &Kernel{ID: "other", Source: "debian", Vmlinuz: vb})
	if _, err := cache.RemoveKernel("era-a"); err == nil || !strings.Contains(err.Error(), "kernel era-a is not in the cache (it has other") {
		t.Errorf("removing a kernel not in the cache: %v", err)
	}
}
