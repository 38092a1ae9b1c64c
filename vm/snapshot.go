package vm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
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
// (kernel and initramfs are content-addressed paths), the QEMU version,
// and the files preloaded into the guest's cache (content hash and mode;
// see preload.go).

// snapshotVersion changes the key when the scheme changes. 2: snapshots
// hold the preloaded cache and are saved after the preload session, a
// guest state the key alone (argv, QEMU, preload hashes) does not tell
// apart from one saved by a development build of that flow.
const snapshotVersion = "lab-snapshot-2"

// SnapshotKey is the cache key of a machine's booted state.
func SnapshotKey(argv []string, stateDir, qemuVersion string, preload []PreloadFile) string {
	h := sha256.New()
	fmt.Fprintln(h, snapshotVersion)
	fmt.Fprintln(h, qemuVersion)
	for _, a := range argv[1:] { // the binary's path does not matter
		fmt.Fprintln(h, strings.ReplaceAll(a, stateDir, "STATE"))
	}
	// Where a file lies on the host does not matter, nor the list's order:
	// the guest holds a set of blobs.
	var blobs []string
	for _, f := range preload {
		blobs = append(blobs, fmt.Sprintf("preload %s %o", f.SHA256, f.Mode&0o7777))
	}
	sort.Strings(blobs)
	for _, b := range blobs {
		fmt.Fprintln(h, b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// SnapshotPath is where the snapshot with key lives in cacheDir.
func SnapshotPath(cacheDir, key string) string {
	return filepath.Join(cacheDir, "snapshots", key+".state")
}

// A snapshot is guest memory handed to QEMU as it is: a byte changed in
// its RAM image restores silently into a guest running other code than
// the key promises. So a save records the file's SHA-256 and size beside
// it (KEY.state.sha256), and a restore checks them first; a snapshot that
// does not match, or has no digest, is discarded, saying why, and the
// boot goes cold (and saves a new one). What costs no read (a digest
// there, the size) is checked before QEMU starts. The content is hashed
// as lab feeds the file to QEMU's incoming migration through a named pipe,
// in the read QEMU needs anyway, while the guest is held paused (-S): it runs only once
// the bytes it was loaded from are known good. Measured: hashing before
// the restore (BenchmarkSnapshotDigest: 17 ms for 16 MB, 0.27 s for 110
// MB on this 2-core host) cost a 49 MB celeron-2.4 restore +20% (median
// of 10: 0.486 s against 0.406 s); see TestIntegrationSnapshotCheckCost
// for the streamed check's figure.

// snapshotDigestPath is where the digest of snapshot file lives.
func snapshotDigestPath(file string) string { return file + ".sha256" }

// recordSnapshotDigest writes the digest of a saved snapshot file.
func recordSnapshotDigest(file string) error {
	sum, size, err := hashSnapshot(file)
	if err != nil {
		return err
	}
	return writeFileAtomic(snapshotDigestPath(file), []byte(fmt.Sprintf("%s %d\n", sum, size)), 0o600)
}

func hashSnapshot(file string) (sum string, size int64, err error) {
	f, err := os.Open(file)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	size, err = io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), size, nil
}

// checkSnapshots is off only in the test that measures what the check
// costs a restore.
var checkSnapshots = true

// snapshotDigest is what a save recorded of the state file.
type snapshotDigest struct {
	sum  string
	size int64
}

// precheckSnapshot reads the digest recorded for snapshot file and checks
// what costs no read of the file: that there is one, and the size. The
// content is checked as it is fed to QEMU (feedSnapshot).
func precheckSnapshot(file string) (snapshotDigest, error) {
	var d snapshotDigest
	b, err := os.ReadFile(snapshotDigestPath(file))
	if errors.Is(err, os.ErrNotExist) {
		return d, errors.New("no recorded digest (saved by an older lab, or the save was cut short)")
	}
	if err != nil {
		return d, err
	}
	if _, err := fmt.Sscanf(string(b), "%64s %d", &d.sum, &d.size); err != nil || len(d.sum) != 64 {
		return d, fmt.Errorf("its digest file %s does not parse", filepath.Base(snapshotDigestPath(file)))
	}
	st, err := os.Stat(file)
	if err != nil {
		return d, err
	}
	if st.Size() < d.size {
		return d, fmt.Errorf("truncated (%d bytes, %d saved)", st.Size(), d.size)
	}
	if st.Size() != d.size {
		return d, fmt.Errorf("its size changed since it was saved (%d bytes, %d saved)", st.Size(), d.size)
	}
	return d, nil
}

// feedSnapshot writes snapshot file to w (QEMU's incoming migration),
// hashing what it sends, and says whether that was what was saved: the
// bytes checked are the bytes QEMU loads, in the one read QEMU needs
// anyway. If w stops taking data (QEMU refused the stream) the rest of
// the file is still hashed, so the verdict holds. werr is the write's
// error; bad says how the content differs from d, or nil.
func feedSnapshot(w io.Writer, file string, d snapshotDigest) (werr, bad error) {
	f, err := os.Open(file)
	if err != nil {
		return err, nil
	}
	defer f.Close()
	h := sha256.New()
	buf := make([]byte, feedChunk)
	var n int64
	for {
		k, rerr := f.Read(buf)
		if k > 0 {
			h.Write(buf[:k])
			n += int64(k)
			if werr == nil {
				_, werr = w.Write(buf[:k])
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return rerr, nil
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != d.size || got != d.sum {
		return werr, fmt.Errorf("changed since it was saved (sha256 %.12s, saved %.12s)", got, d.sum)
	}
	return werr, nil
}

// feedChunk is what feedSnapshot reads, hashes and writes at a time.
const feedChunk = 1 << 20

// verifySnapshot says why snapshot file is not what was saved, or nil:
// the checks of a restore, without QEMU.
func verifySnapshot(file string) error {
	d, err := precheckSnapshot(file)
	if err != nil {
		return err
	}
	if werr, bad := feedSnapshot(io.Discard, file, d); bad != nil || werr != nil {
		return errors.Join(bad, werr)
	}
	return nil
}

// badSnapshot is the restore error of a snapshot verifySnapshot refused.
func badSnapshot(file string, why error) error {
	return &restoreError{fmt.Errorf("%s: %w; discarded", filepath.Base(file), why)}
}

// discardSnapshot removes a snapshot that cannot be restored, with its
// console and digest.
func discardSnapshot(file string) {
	for _, p := range []string{file, file + ".console", snapshotDigestPath(file)} {
		os.Remove(p)
	}
}

// restoreError is a failure to restore a snapshot; the caller boots cold.
type restoreError struct{ err error }

func (e *restoreError) Error() string { return "restoring the snapshot: " + e.err.Error() }
func (e *restoreError) Unwrap() error { return e.err }

// restoreArgs are added to the argv of a restore: QEMU waits for the
// monitor's migrate-incoming, so migration events can be enabled first,
// and leaves the guest paused after it (-S) until the state it loaded is
// known to be the snapshot saved.
func restoreArgs() []string {
	return []string{"-S", "-incoming", "defer"}
}

// restorePipe is the named pipe in the VM's state dir through which lab
// feeds QEMU the snapshot it checks.
const restorePipe = "restore.pipe"

// restoreChecked restores the snapshot through a named pipe lab writes
// the file into, hashing it as it goes (feedSnapshot): the guest is
// resumed only if the bytes QEMU loaded are the snapshot saved. A bad
// snapshot is a restoreError saying why, also when QEMU refused the
// stream first.
func (m *Machine) restoreChecked(ctx context.Context, q *qmpMonitor) error {
	file := m.cfg.Snapshot
	if !checkSnapshots {
		return restoreSnapshot(ctx, q, file, nil)
	}
	d, err := precheckSnapshot(file)
	if err != nil {
		return badSnapshot(file, err)
	}
	pipe := filepath.Join(m.dir, restorePipe)
	os.Remove(pipe)
	if err := unix.Mkfifo(pipe, 0o600); err != nil {
		return fmt.Errorf("machine %s: %w", m.cfg.Name, err)
	}
	defer os.Remove(pipe)
	type fed struct{ werr, bad error }
	done := make(chan fed, 1)
	go func() {
		// Blocks until QEMU's cat opens the pipe (or unblock does).
		w, err := os.OpenFile(pipe, os.O_WRONLY, 0)
		if err != nil {
			done <- fed{werr: err}
			return
		}
		// A pipe the size of a feed's chunk: QEMU drains one chunk while
		// the next is hashed.
		if rc, err := w.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, feedChunk) })
		}
		var r fed
		r.werr, r.bad = feedSnapshot(w, file, d)
		w.Close()
		done <- r
	}()
	// unblock ends a feed whose reader is gone or never came: a reader
	// opened and closed here makes its open return and its writes fail.
	unblock := func() {
		if r, err := os.OpenFile(pipe, os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
	}
	verdict := func() fed {
		select {
		case r := <-done:
			return r
		case <-ctx.Done():
			unblock()
			return <-done
		}
	}
	err = restoreSnapshot(ctx, q, pipe, func() error {
		r := verdict()
		if r.bad != nil {
			return badSnapshot(file, r.bad)
		}
		if r.werr != nil {
			return fmt.Errorf("machine %s: feeding the snapshot to qemu: %w", m.cfg.Name, r.werr)
		}
		return nil
	})
	var re *restoreError
	if err != nil && !errors.As(err, &re) {
		// The migration failed before the feed ended: whether the file
		// was bad says more than QEMU's load error.
		unblock()
		select {
		case r := <-done:
			if r.bad != nil {
				return badSnapshot(file, r.bad)
			}
		case <-time.After(5 * time.Second):
		}
	}
	return err
}

// shellQuote quotes s for the /bin/sh that runs an exec: migration URI.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// finishRestore loads the snapshot into the waiting QEMU and resumes the
// guest. Any failure is a restoreError: the caller boots cold instead.
func (m *Machine) finishRestore(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	q, err := m.monitor(ctx)
	if err == nil {
		err = m.restoreChecked(ctx, q)
	}
	var re *restoreError
	if errors.As(err, &re) {
		return err // the snapshot was found bad: that says more than QEMU
	}
	if err != nil {
		select {
		case <-m.exited:
			// QEMU exits when an incoming migration fails; it says why.
			return &restoreError{fmt.Errorf("qemu exited: %s", strings.TrimSpace(m.QEMUStderr()))}
		case <-time.After(100 * time.Millisecond): // QEMU exiting hangs up QMP first
			return &restoreError{err}
		}
	}
	return nil
}

// restoreSnapshot is the restore's QMP sequence on a QEMU started with
// -S -incoming defer: enable migration events, start the incoming
// migration from src (the snapshot file, or the pipe restoreChecked feeds
// it through), wait for its MIGRATION event "completed" (QEMU sends it
// after setting the run state), ask loaded (if not nil) whether what QEMU
// loaded may run, and resume the guest if it came back paused.
func restoreSnapshot(ctx context.Context, q *qmpMonitor, src string, loaded func() error) error {
	events, unsubscribe := q.subscribe("MIGRATION")
	defer unsubscribe()
	if err := q.enableMigrationEvents(ctx); err != nil {
		return err
	}
	if err := q.do(ctx, "migrate-incoming", func() error { return q.raw.MigrateIncoming("exec:cat " + shellQuote(src)) }); err != nil {
		return err
	}
	if err := q.awaitMigration(ctx, events); err != nil {
		return err
	}
	if loaded != nil {
		if err := loaded(); err != nil {
			return err
		}
	}
	st, err := q.Status(ctx)
	if err != nil {
		return err
	}
	switch st {
	case "running":
		return nil
	case "paused", "postmigrate", "prelaunch":
		return q.Cont(ctx)
	default:
		return fmt.Errorf("machine %s: qemu run state %s after the restore", q.name, st)
	}
}

// readyMarker is what the agent prints when it starts waiting for a host.
const readyMarker = "lab-agent: waiting for the host"

// saveSnapshot waits until the agent waits for its first host, preloads
// the configuration's files into its cache if there are any (see
// preload.go; the agent then waits for a host again), then saves the
// machine's state to the snapshot file and resumes it. Failing to save
// only costs the next boot time, so it is reported, not fatal; a preload
// that failed saves nothing (the snapshot's key promises those files).
// Snapshots hold guest memory: the directory is 0700 and the files 0600.
func (m *Machine) saveSnapshot(ctx context.Context) error {
	if err := m.awaitMarker(ctx, ""); err != nil {
		return err
	}
	if len(m.cfg.Preload) > 0 {
		m.preloaded = true
		sent, err := m.preload(ctx)
		if err != nil {
			return err
		}
		m.phase(fmt.Sprintf("preloaded %d files (%d KiB sent)", len(m.cfg.Preload), sent>>10))
	}
	file := m.cfg.Snapshot
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil { // made 0755 by older versions
		return err
	}
	// A save cut short (lab killed) left its temp file: tens of MB.
	if _, _, err := RemoveStaleSnapshotTemps(filepath.Dir(dir)); err != nil {
		m.logf("machine %s: removing the temp files of earlier saves: %v", m.cfg.Name, err)
	}
	// QEMU's `cat >` truncates this file and keeps its mode: the memory
	// image is never readable by others, not even while it is written.
	tmp := fmt.Sprintf("%s.tmp-%d", file, os.Getpid())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	defer os.Remove(tmp)
	q, err := m.monitor(ctx)
	if err != nil {
		return err
	}
	if err := saveState(ctx, q, tmp); err != nil {
		return err
	}
	console, err := os.ReadFile(filepath.Join(m.dir, ConsoleLog))
	if err != nil {
		return err
	}
	if err := writeFileAtomic(file+".console", console, 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	// The digest first: a state file is never there without one, and one
	// cut short between the two is found not to match.
	if err := recordSnapshotDigest(tmp); err != nil {
		return err
	}
	if err := os.Rename(snapshotDigestPath(tmp), snapshotDigestPath(file)); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// saveState is the save's QMP sequence: enable migration events, stop the
// guest, migrate its state into file, wait for the MIGRATION event
// "completed" (or "failed"), and resume the guest whatever happened.
func saveState(ctx context.Context, q *qmpMonitor, file string) (err error) {
	events, unsubscribe := q.subscribe("MIGRATION")
	defer unsubscribe()
	if err := q.enableMigrationEvents(ctx); err != nil {
		return err
	}
	if err := q.Stop(ctx); err != nil {
		return err
	}
	defer func() {
		// The guest must run again, even when ctx ended.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if cerr := resumeAfterSave(cctx, q); cerr != nil {
			err = &resumeError{cerr}
		}
	}()
	if err := q.do(ctx, "migrate", func() error { return q.raw.Migrate("exec:cat > "+shellQuote(file), nil, nil, nil) }); err != nil {
		return err
	}
	return q.awaitMigration(ctx, events)
}

// resumeAfterSave continues the guest after a save. QEMU sends the
// MIGRATION event "completed" from the migration thread before that thread
// moves the run state from finish-migrate to postmigrate, and refuses cont
// ("Migration is not finalized yet") in between. No event marks the end of
// that window (about a millisecond), so it is waited out by asking again
// while the guest is stopped in one of those states; by the time the run
// state is read after a refusal it may already be postmigrate.
func resumeAfterSave(ctx context.Context, q *qmpMonitor) error {
	for {
		err := q.Cont(ctx)
		if err == nil {
			return nil
		}
		st, serr := q.Status(ctx)
		switch {
		case serr != nil:
			return err
		case st == "running":
			return nil
		case st != "finish-migrate" && st != "postmigrate" && st != "paused":
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// resumeError is a guest left paused after a save: the boot cannot go on.
type resumeError struct{ err error }

func (e *resumeError) Error() string { return "resuming the guest after saving it: " + e.err.Error() }
func (e *resumeError) Unwrap() error { return e.err }

// snapshotTempRE names a save's temp files (state and digest) and the pid
// of the process saving.
var snapshotTempRE = regexp.MustCompile(`\.state\.tmp-([0-9]+)(\.sha256)?$`)

// RemoveStaleSnapshotTemps removes from cacheDir/snapshots the temp files
// of saves whose process is gone (a save cut short leaves KEY.state.tmp-PID,
// as large as the snapshot), and says how many and how large. A file of a
// live process is kept: it is being written.
func RemoveStaleSnapshotTemps(cacheDir string) (files int, bytes int64, err error) {
	dir := filepath.Join(cacheDir, "snapshots")
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	for _, de := range des {
		sm := snapshotTempRE.FindStringSubmatch(de.Name())
		if sm == nil || de.IsDir() {
			continue
		}
		pid, err := strconv.Atoi(sm[1])
		if err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		var size int64
		if fi, err := de.Info(); err == nil {
			size = fi.Size()
		}
		if err := os.Remove(filepath.Join(dir, de.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			return files, bytes, err
		}
		files++
		bytes += size
	}
	return files, bytes, nil
}

// processAlive says whether a process with pid exists (one of another
// user counts: EPERM).
func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// HasSnapshot says whether a boot of c would restore a booted snapshot:
// one is saved under its key, with its digest and size as recorded (what
// costs no read of the file; the content is checked as it is restored).
// A boot that keeps no snapshot (Cold, NoSnapshot) has none.
func (c *Config) HasSnapshot() bool {
	if c.Snapshot == "" {
		return false
	}
	_, err := precheckSnapshot(c.Snapshot)
	return err == nil
}
