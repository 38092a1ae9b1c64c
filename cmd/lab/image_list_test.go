package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lab/images"
)

// cacheKernel stores a kernel named id with a vmlinuz blob in the test
// cache and returns the blob's path.
func cacheKernel(t *testing.T, id string) string {
	t.Helper()
	cache := envCache(t)
	sha, err := cache.PutReader(strings.NewReader("vmlinuz of " + id))
	if err != nil {
		t.Fatal(err)
	}
	k := images.Kernel{ID: id, Arch: "i386", Release: "6.1.0-99-686", Source: "import", Vmlinuz: sha}
	b, _ := json.Marshal(k)
	if err := images.WriteFileAtomic(filepath.Join(string(cache), "kernels", id+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return cache.BlobPath(sha)
}

// TestImageListShowsCorruptKernel: a kernel whose blob is corrupt is
// listed as corrupt, with what to do, not left out (lab up says it is
// corrupt; the list must not pretend it is not there).
func TestImageListShowsCorruptKernel(t *testing.T) {
	cliEnv(t)
	cacheKernel(t, "good-k")
	blob := cacheKernel(t, "bad-k")
	if err := os.WriteFile(blob, []byte("scrambled"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cliRun(t, "image", "list")
	t.Logf("lab image list:\n%s%s", r.stdout, r.stderr)
	wantOutput(t, r, "image list", 0, "stdout", "good-k", "bad-k")
	var bad, good string
	for _, l := range strings.Split(r.stdout, "\n") {
		switch {
		case strings.HasPrefix(l, "bad-k "):
			bad = l
		case strings.HasPrefix(l, "good-k "):
			good = l
		}
	}
	if !strings.Contains(bad, "corrupt") || strings.Contains(good, "corrupt") {
		t.Errorf("rows:\n%s\n%s\nwant bad-k's status corrupt, good-k's not", bad, good)
	}
	if !strings.Contains(r.stdout+r.stderr, "lab image fetch") && !strings.Contains(r.stdout+r.stderr, "lab image rm bad-k") {
		t.Errorf("lab image list says nothing of what to do about bad-k:\n%s%s", r.stdout, r.stderr)
	}

	r = cliRun(t, "image", "list", "--json")
	var ks []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &ks); err != nil {
		t.Fatalf("lab image list --json: %v\n%s", err, r.stdout)
	}
	status := map[string]string{}
	for _, k := range ks {
		id, _ := k["id"].(string)
		status[id], _ = k["problem"].(string)
	}
	if _, ok := status["bad-k"]; !ok || !strings.Contains(status["bad-k"], "corrupt") || status["good-k"] != "" {
		t.Errorf("lab image list --json problems %q, want bad-k corrupt and good-k none", status)
	}
}
