package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSnapshot writes a snapshot file of n bytes (and its console) as a
// save leaves it, digest included.
func fakeSnapshot(t *testing.T, n int) string {
	t.Helper()
	file := SnapshotPath(t.TempDir(), strings.Repeat("ab", 32))
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file+".console", []byte("booted\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := recordSnapshotDigest(file); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestBadSnapshotDiscardedWithReason: a snapshot truncated or without its
// digest is never handed to QEMU: Start discards it, says why (in the log
// and in the machine's notes, which `lab up` prints), and boots cold. QEMU
// is a program that does not exist here, so the cold boot fails at once;
// what matters is what happened before it. (Bytes changed inside the
// file: TestRestoreRefusesChangedSnapshot.)
func TestBadSnapshotDiscardedWithReason(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, file string)
		want   string
	}{
		{"truncated", func(t *testing.T, file string) {
			if err := os.Truncate(file, 4096); err != nil {
				t.Fatal(err)
			}
		}, "truncated"},
		{"no digest", func(t *testing.T, file string) {
			if err := os.Remove(snapshotDigestPath(file)); err != nil {
				t.Fatal(err)
			}
		}, "no recorded digest"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := fakeSnapshot(t, 200000)
			c.change(t, file)
			var mu sync.Mutex
			var logged []string
			cfg := Config{Name: "t", Argv: []string{filepath.Join(t.TempDir(), "no-qemu")}, Snapshot: file, BootTimeout: 5 * time.Second}
			_, err := Start(context.Background(), t.TempDir(), cfg, StartOptions{Log: func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				logged = append(logged, fmt.Sprintf(format, args...))
			}})
			if err == nil {
				t.Fatal("Start with no QEMU succeeded")
			}
			mu.Lock()
			defer mu.Unlock()
			t.Logf("logged %q", logged)
			if len(logged) != 1 || !strings.Contains(logged[0], c.want) || !strings.Contains(logged[0], "booting cold") {
				t.Errorf("logged %q, want one line saying %q and booting cold", logged, c.want)
			}
			for _, p := range []string{file, file + ".console", snapshotDigestPath(file)} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s kept after the snapshot was found bad", filepath.Base(p))
				}
			}
		})
	}
}

// TestSnapshotDigestIntact: a snapshot as saved passes the check.
func TestSnapshotDigestIntact(t *testing.T) {
	file := fakeSnapshot(t, 200000)
	if err := verifySnapshot(file); err != nil {
		t.Errorf("verifySnapshot of an intact snapshot: %v", err)
	}
}

// BenchmarkSnapshotDigest is the check's cost on a restore, per snapshot
// size: 16 MB (celeron-2.4 with the preloaded plugins) and 110 MB (a
// larger guest's).
func BenchmarkSnapshotDigest(b *testing.B) {
	for _, mb := range []int{16, 110} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			file := filepath.Join(b.TempDir(), "x.state")
			buf := make([]byte, mb<<20)
			for i := range buf {
				buf[i] = byte(i * 7)
			}
			if err := os.WriteFile(file, buf, 0o600); err != nil {
				b.Fatal(err)
			}
			if err := recordSnapshotDigest(file); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(mb << 20))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := verifySnapshot(file); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// changeByte changes two bytes in the middle of file, size and all else
// kept.
func changeByte(t *testing.T, file string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte{0xff, 0xfe}, 70000); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreRefusesChangedSnapshot: bytes changed inside a snapshot's
// RAM image (size kept) are found as the file is fed to QEMU, and the
// guest, held paused, is not resumed: the restore fails saying why (Start
// then discards the snapshot and boots cold). An intact one is resumed.
// QEMU here is the QMP fake plus a reader of the pipe standing in for its
// cat.
func TestRestoreRefusesChangedSnapshot(t *testing.T) {
	for _, changed := range []bool{false, true} {
		t.Run(fmt.Sprintf("changed=%v", changed), func(t *testing.T) {
			file := fakeSnapshot(t, 3<<20)
			if changed {
				changeByte(t, file)
			}
			m := &Machine{cfg: Config{Name: "t", Snapshot: file}, dir: t.TempDir()}
			f := newQMPFake(t, "inmigrate")
			q := f.monitor(t)
			ctx := testCtx(t, 10*time.Second)
			var loaded []byte
			read := make(chan struct{})
			go func() {
				defer close(read)
				pipe := filepath.Join(m.dir, restorePipe)
				for i := 0; i < 500; i++ {
					if r, err := os.Open(pipe); err == nil {
						loaded, _ = io.ReadAll(r)
						r.Close()
						return
					}
					time.Sleep(2 * time.Millisecond)
				}
			}()
			err := m.restoreChecked(ctx, q)
			<-read
			want, _ := os.ReadFile(file)
			if !bytes.Equal(loaded, want) {
				t.Errorf("qemu read %d bytes through the pipe, want the file's %d", len(loaded), len(want))
			}
			cmds := f.commands()
			resumed := slices.Contains(cmds, "cont")
			if !changed {
				if err != nil || !resumed {
					t.Errorf("intact snapshot: %v, commands %v; want it restored and resumed", err, cmds)
				}
				return
			}
			var re *restoreError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), "changed since it was saved") {
				t.Errorf("changed snapshot: %v, want a restore error saying it changed since it was saved", err)
			}
			if resumed {
				t.Errorf("changed snapshot: the guest was resumed (commands %v)", cmds)
			}
		})
	}
}

// TestHasSnapshot: a config has a snapshot when one is saved with its
// digest, not when none is, when the save was cut short (no digest, or
// fewer bytes), or when the boot keeps none.
func TestHasSnapshot(t *testing.T) {
	file := fakeSnapshot(t, 1000)
	if !(&Config{Snapshot: file}).HasSnapshot() {
		t.Error("a saved snapshot: HasSnapshot false")
	}
	if (&Config{}).HasSnapshot() {
		t.Error("a boot keeping no snapshot: HasSnapshot true")
	}
	if (&Config{Snapshot: filepath.Join(t.TempDir(), "none.state")}).HasSnapshot() {
		t.Error("no snapshot file: HasSnapshot true")
	}
	cut := fakeSnapshot(t, 1000)
	if err := os.Truncate(cut, 10); err != nil {
		t.Fatal(err)
	}
	if (&Config{Snapshot: cut}).HasSnapshot() {
		t.Error("a truncated snapshot: HasSnapshot true")
	}
	nodigest := fakeSnapshot(t, 1000)
	if err := os.Remove(snapshotDigestPath(nodigest)); err != nil {
		t.Fatal(err)
	}
	if (&Config{Snapshot: nodigest}).HasSnapshot() {
		t.Error("a snapshot without its digest: HasSnapshot true")
	}
}
