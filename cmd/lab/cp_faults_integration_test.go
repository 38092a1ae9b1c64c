package main

// Integration test of issue 22's lab cp faults in a real 256 MB guest: a
// copy that cannot fit in the guest's RAM root is refused before anything
// is sent, and evicts no cached plugin (item 8); a device is not copied out
// of the guest (item 12).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestIntegrationCpFaults(t *testing.T) {
	p := itProfile(t, "celeron-2.4") // 256 MB: a root tmpfs of about 118 MiB
	itBootEnv(t, p)
	const name = "cpfaults"
	itUp(t, p.Name, name)
	blobs := func() string {
		return itMust(t, itCallTimeout, nil, "exec", name, "--", "sh", "-c", "ls /var/lib/lab/blobs | sort").stdout
	}
	before := blobs()
	if strings.TrimSpace(before) == "" {
		t.Log("the guest's cache is empty (no preloaded snapshot): eviction is not observed")
	}

	t.Run("cp that cannot fit", func(t *testing.T) {
		big := filepath.Join(t.TempDir(), "big")
		f, err := os.Create(big)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(200 << 20); err != nil {
			t.Fatal(err)
		}
		f.Close()
		r := itLab(t, time.Minute, nil, "cp", big, name+":/root/big")
		t.Logf("stderr: %s", r.stderr)
		if r.code == 0 || !strings.Contains(r.stderr, "does not fit") || !strings.Contains(r.stderr, "--memory") {
			t.Errorf("lab cp of 200 MiB into a 256 MB guest: exit %d, stderr %q; want it refused up front, saying it does not fit", r.code, r.stderr)
		}
		if r.took > 30*time.Second {
			t.Errorf("the refusal took %v: something was sent first", r.took)
		}
		if after := blobs(); after != before {
			t.Errorf("the guest's cache changed for a copy that could not fit:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		if r := itLab(t, itCallTimeout, nil, "exec", name, "--", "test", "-e", "/root/big"); r.code == 0 {
			t.Error("/root/big exists in the guest after the refusal")
		}
	})

	t.Run("cp of a device out of the guest", func(t *testing.T) {
		dir := t.TempDir()
		r := itLab(t, 30*time.Second, nil, "cp", name+":/dev/zero", filepath.Join(dir, "z"))
		t.Logf("stderr: %s", r.stderr)
		if r.code == 0 || !strings.Contains(r.stderr, "character device") || !strings.Contains(r.stderr, "not a regular file") {
			t.Errorf("lab cp vm:/dev/zero: exit %d, stderr %q; want it refused as a character device", r.code, r.stderr)
		}
		itNoFiles(t, dir)
	})
}
