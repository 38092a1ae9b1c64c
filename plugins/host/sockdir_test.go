package host

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSocketDirInVMDir: go-plugin's socket dir (plugin-dir*, where the
// tunnel sockets live) is made in the VM's state dir, so it goes with the
// VM instead of piling up in /tmp when a run is killed; a VM dir whose
// socket paths would not fit a unix socket address falls back to /tmp.
func TestSocketDirInVMDir(t *testing.T) {
	dir := t.TempDir()
	tl, err := EnsureTLS(dir, "v")
	if err != nil {
		t.Fatal(err)
	}
	if got := clientConfig(tl, time.Second, nil).UnixSocketConfig; got == nil || got.TempDir != dir {
		t.Errorf("UnixSocketConfig %+v, want TempDir %s (the VM's state dir)", got, dir)
	}
	long := filepath.Join(dir, strings.Repeat("n", 80))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	if tl, err = EnsureTLS(long, "v"); err != nil {
		t.Fatal(err)
	}
	if got := clientConfig(tl, time.Second, nil).UnixSocketConfig; got != nil && got.TempDir != "" {
		t.Errorf("UnixSocketConfig TempDir %q for a VM dir too long for socket paths, want the default", got.TempDir)
	}
}

// TestRemoveStaleSocketDirs: a killed run's plugin-dir (its tunnel socket
// refuses connections) is removed at the next open; one whose socket a
// live run listens on stays, and so does a fresh empty one (a run
// starting).
func TestRemoveStaleSocketDirs(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := mk("plugin-dir111")
	ln, err := net.Listen("unix", filepath.Join(stale, "tunnel-a.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // the run was killed: the socket file stays, nobody listens
	live := mk("plugin-dir222")
	ln2, err := net.Listen("unix", filepath.Join(live, "tunnel-b.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	fresh := mk("plugin-dir333")
	other := mk("keep-me")

	removeStaleSocketDirs(dir)
	if _, err := os.Stat(stale); err == nil {
		t.Error("the dead run's plugin-dir was kept")
	}
	for _, p := range []string{live, fresh, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", filepath.Base(p), err)
		}
	}
}
