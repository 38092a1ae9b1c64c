package vm

import (
	"strings"
	"testing"
)

// TestSnapshotKeyPreload: the key changes with the preloaded content and
// its mode, not with where the files lie on the host or their order.
func TestSnapshotKeyPreload(t *testing.T) {
	argv := []string{"/usr/bin/qemu-system-i386", "-m", "256", "-chardev", "socket,path=/state/x/link.sock"}
	a := PreloadFile{Path: "/lib/lab/plugins/p/i386/p", SHA256: strings.Repeat("a", 64), Mode: 0o755}
	b := PreloadFile{Path: "/lib/lab/plugins/p/i386/workload/w", SHA256: strings.Repeat("b", 64), Mode: 0o755}
	base := SnapshotKey(argv, "/state/x", "QEMU 7.2", []PreloadFile{a, b})
	if k := SnapshotKey(argv, "/state/x", "QEMU 7.2", nil); k == base {
		t.Error("a snapshot with preloaded files has the key of one without")
	}
	if k := SnapshotKey(argv, "/state/x", "QEMU 7.2", []PreloadFile{b, a}); k != base {
		t.Error("the key depends on the order of the preload list")
	}
	moved := a
	moved.Path = "/elsewhere/p"
	if k := SnapshotKey(argv, "/state/x", "QEMU 7.2", []PreloadFile{moved, b}); k != base {
		t.Error("the key depends on the host path of a preloaded file")
	}
	rebuilt := a
	rebuilt.SHA256 = strings.Repeat("c", 64)
	if k := SnapshotKey(argv, "/state/x", "QEMU 7.2", []PreloadFile{rebuilt, b}); k == base {
		t.Error("a rebuilt plugin (new content hash) keeps the old snapshot's key")
	}
	chmod := a
	chmod.Mode = 0o700
	if k := SnapshotKey(argv, "/state/x", "QEMU 7.2", []PreloadFile{chmod, b}); k == base {
		t.Error("a preloaded file with another mode keeps the key (the blob keeps its first mode)")
	}
}

func TestCheckPreload(t *testing.T) {
	ok := PreloadFile{Path: "/x", SHA256: strings.Repeat("0", 64), Mode: 0o755}
	if err := checkPreload([]PreloadFile{ok}); err != nil {
		t.Errorf("checkPreload(%+v) = %v", ok, err)
	}
	for _, bad := range []PreloadFile{
		{Path: "/x", SHA256: "abc"},
		{Path: "/x", SHA256: strings.Repeat("g", 64)},
		{Path: "../x", SHA256: strings.Repeat("0", 64)},
	} {
		if err := checkPreload([]PreloadFile{bad}); err == nil {
			t.Errorf("checkPreload(%+v) accepted it", bad)
		}
	}
}
