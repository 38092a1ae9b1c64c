package vm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Booted snapshots. Under TCG most of a boot is the firmware, the kernel's
// XZ decompression and its initcalls, always the same for the same
// machine. So the first boot of a configuration saves the machine's state
// (QMP migrate to a file) at the moment the agent waits for its first host,
// before any host has spoken to it, and later boots restore it
// (`-incoming`). The guest then continues exactly where a cold boot would
// be; the host sets its clock and credits fresh entropy (and the agent
// reseeds the kernel RNG) when the link comes up, as after any boot.
//
// A snapshot is keyed by everything that shapes the guest: the QEMU argv
// (kernel and initramfs are content-addressed paths) and the QEMU version.

// snapshotVersion changes the key when the scheme changes.
const snapshotVersion = "lab-snapshot-1"

// SnapshotKey is the cache key of a machine's booted state.
func SnapshotKey(argv []string, stateDir, qemuVersion string) string {
	h := sha256.New()
	fmt.Fprintln(h, snapshotVersion)
	fmt.Fprintln(h, qemuVersion)
	for _, a := range argv[1:] { // the binary's path does not matter
		fmt.Fprintln(h, strings.ReplaceAll(a, stateDir, "STATE"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// SnapshotPath is where the snapshot with key lives in cacheDir.
func SnapshotPath(cacheDir, key string) string {
	return filepath.Join(cacheDir, "snapshots", key+".state")
}

// restoreError is a failure to restore a snapshot; the caller boots cold.
type restoreError struct{ err error }

func (e *restoreError) Error() string { return "restoring the snapshot: " + e.err.Error() }
func (e *restoreError) Unwrap() error { return e.err }

// restoreArgs are added to the argv to restore from file.
func restoreArgs(file string) []string {
	return []string{"-incoming", "exec:cat '" + strings.ReplaceAll(file, "'", `'\''`) + "'"}
}

// qmpQuery runs cmd and decodes its "return" into v.
func qmpQuery(sock, cmd string, v any) error {
	out, err := qmpRun(sock, cmd)
	if err != nil {
		return err
	}
	var resp struct {
		Return json.RawMessage `json:"return"`
		Error  *struct {
			Desc string `json:"desc"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return err
	}
	if resp.Error != nil {
		return errors.New(resp.Error.Desc)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(resp.Return, v)
}

// finishRestore waits for the incoming migration to complete and resumes
// the guest (a machine saved while stopped comes back paused).
func (m *Machine) finishRestore(ctx context.Context) error {
	sock := filepath.Join(m.dir, QMPSock)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		var st struct {
			Status string `json:"status"`
		}
		err := qmpQuery(sock, `{"execute":"query-status"}`, &st)
		if err == nil {
			switch st.Status {
			case "running":
				return nil
			case "paused", "postmigrate":
				return qmpQuery(sock, `{"execute":"cont"}`, nil)
			case "inmigrate":
			default:
				if strings.Contains(st.Status, "error") {
					return &restoreError{fmt.Errorf("qemu run state %s", st.Status)}
				}
			}
		}
		select {
		case <-m.exited:
			return &restoreError{fmt.Errorf("qemu exited: %s", strings.TrimSpace(m.QEMUStderr()))}
		case <-ctx.Done():
			return &restoreError{ctx.Err()}
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// readyMarker is what the agent prints when it starts waiting for a host.
const readyMarker = "lab-agent: waiting for the host"

// saveSnapshot waits until the agent waits for its first host, then saves
// the machine's state to the snapshot file and resumes it. Failing to save
// only costs the next boot time, so it is reported, not fatal.
func (m *Machine) saveSnapshot(ctx context.Context) error {
	for {
		b, _ := os.ReadFile(filepath.Join(m.dir, ConsoleLog))
		if strings.Contains(string(b), readyMarker) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-m.exited:
			return errors.New("qemu exited")
		case <-time.After(20 * time.Millisecond):
		}
	}
	sock := filepath.Join(m.dir, QMPSock)
	file := m.cfg.Snapshot
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.tmp-%d", file, os.Getpid())
	defer os.Remove(tmp)
	if err := qmpQuery(sock, `{"execute":"stop"}`, nil); err != nil {
		return err
	}
	// Whatever happens next, the guest must run again.
	defer qmpQuery(sock, `{"execute":"cont"}`, nil)
	uri, _ := json.Marshal("exec:cat > '" + strings.ReplaceAll(tmp, "'", `'\''`) + "'")
	if err := qmpQuery(sock, `{"execute":"migrate","arguments":{"uri":`+string(uri)+`}}`, nil); err != nil {
		return err
	}
	for {
		var st struct {
			Status string `json:"status"`
			Error  string `json:"error-desc"`
		}
		if err := qmpQuery(sock, `{"execute":"query-migrate"}`, &st); err != nil {
			return err
		}
		switch st.Status {
		case "completed":
			console, err := os.ReadFile(filepath.Join(m.dir, ConsoleLog))
			if err != nil {
				return err
			}
			if err := writeFileAtomic(file+".console", console, 0o644); err != nil {
				return err
			}
			return os.Rename(tmp, file)
		case "failed", "cancelled":
			return fmt.Errorf("migration %s: %s", st.Status, st.Error)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
