package results

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// idTime is the timestamp layout at the front of every ID: fixed width and
// UTC, so IDs (and file names) sort by time as plain strings.
const idTime = "20060102T150405.000000Z"

// ext is the file-name extension of stored results.
const ext = ".json"

// StoreDir is the result store of a lab output directory (lab matrix's
// and lab reproduce's --out): its results/. Here, not in the matrix's
// package, so that what reads nights (results/history) need not import
// the matrix, which imports the renderer that draws the history.
func StoreDir(dir string) string { return filepath.Join(dir, "results") }

// StoreIn is the store a directory the user names holds: its StoreDir
// when it has one (the output of lab matrix or lab reproduce), else the
// directory itself.
func StoreIn(dir string) string {
	if fi, err := os.Stat(StoreDir(dir)); err == nil && fi.IsDir() {
		return StoreDir(dir)
	}
	return dir
}

// NewID returns a run ID that sorts by time and is unique: the UTC time to
// the microsecond, plugin, experiment and a random suffix, e.g.
// "20260102T150405.123456Z-forkbench-forktime-3fa9c1". Characters that are
// unsafe in file names are replaced by '_'.
func NewID(plugin, experiment string, t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return t.UTC().Format(idTime) + "-" + idPart(plugin) + "-" + idPart(experiment) + "-" + hex.EncodeToString(b[:])
}

func idPart(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_':
			return r
		}
		return '_'
	}, s)
}

// Results are private to the user who ran them, as everything else lab
// keeps (VM state, snapshots, certificates): directories lab creates for
// them are dirMode and files fileMode. A directory that exists keeps its
// mode (one the user chose to share stays shared); each file in it is
// still fileMode, even in the temp directory a run falls back to.
const (
	dirMode  = 0o700
	fileMode = 0o600
)

// CheckDir makes sure dir exists (creating it dirMode) and that a file can be
// created in it, so a run learns that its results cannot be saved before it
// measures, not after.
func CheckDir(dir string) error {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("results directory %s cannot be created: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".lab-write-check-*")
	if err != nil {
		return fmt.Errorf("results directory %s is not writable: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("results directory %s: removing the write check %s: %w", dir, name, err)
	}
	return nil
}

// Save writes r as indented JSON to dir/<ID>.json and returns the path. If
// r.ID is empty it is set with NewID (from r.Started, or now). The file
// appears whole or not at all: it is written to a temporary file in dir,
// synced, renamed into place, and the directory is synced. dir is created
// (dirMode) if needed; the file is fileMode.
func Save(dir string, r *Result) (string, error) {
	if r.ID == "" {
		t := r.Started
		if t.IsZero() {
			t = time.Now()
		}
		r.ID = NewID(r.Plugin, r.Experiment, t)
	}
	if strings.ContainsAny(r.ID, `/\`) || r.ID == "." || r.ID == ".." {
		return "", fmt.Errorf("save result: id %q is not a valid file name", r.ID)
	}
	if err := r.CheckFinite(); err != nil {
		return "", fmt.Errorf("save result %s: %w", r.ID, err)
	}
	if r.Schema == 0 {
		r.Schema = SchemaVersion
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("save result %s: %w", r.ID, err)
	}
	data = append(data, '\n')
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return "", fmt.Errorf("save result %s: %w", r.ID, err)
	}
	path := filepath.Join(dir, r.ID+ext)
	if err := WriteAtomic(path, data); err != nil {
		return "", fmt.Errorf("save result %s: %w", r.ID, err)
	}
	return path, nil
}

// WriteAtomic replaces path with data so that a reader (or a crash) sees the
// old file or the new one, never a part. The temporary name starts with '.'
// so List never picks it up. The file is private (fileMode).
func WriteAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(fileMode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// The rename is durable only once the directory entry is on disk.
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Load reads one stored result. Machine.Profile comes back as the generic
// JSON value (a map), whatever type it was saved from. Only a regular file
// is read: it is opened without blocking and checked before anything is
// read, so a FIFO named like a result cannot wait for a writer for ever;
// a file larger than MaxFileBytes is refused unread. Its samples are
// checked (CheckSamples). Whether its id is its name, and whether it
// started in the future, are the store's to check (see LoadAll): a file
// given by its path is the user's to name.
func Load(path string) (*Result, error) {
	data, err := ReadRegular(path)
	if err != nil {
		return nil, fmt.Errorf("load result %w", err)
	}
	var r Result
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&r); err != nil {
		return nil, fmt.Errorf("load result %s: %w", path, err)
	}
	if r.Schema > SchemaVersion {
		return nil, fmt.Errorf("load result %s: schema version %d is newer than this lab's %d; upgrade lab", path, r.Schema, SchemaVersion)
	}
	if missing := missingKeys(&r); missing != "" {
		return nil, fmt.Errorf("load result %s: not a result: no %s (every run lab stores has an id, a plugin and an experiment)", path, missing)
	}
	if err := r.CheckSamples(); err != nil {
		return nil, fmt.Errorf("load result %s: %w", path, err)
	}
	return &r, nil
}

// MaxFileBytes is the largest result file lab reads: a run of MaxSamples
// samples is about 15 MB.
const MaxFileBytes = 64 << 20

// ReadRegular reads path if it is a regular file of at most MaxFileBytes,
// without blocking on a FIFO: every file lab reads from a store goes
// through it.
// Its errors start with path.
func ReadRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s): skipped; a result is a regular file, move this one out of the store", path, fileKind(fi.Mode()))
	}
	if fi.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a result file can be (MaxFileBytes): skipped", path, fi.Size(), MaxFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: more than the %d bytes a result file can be (MaxFileBytes): skipped", path, MaxFileBytes)
	}
	return data, nil
}

// fileKind names what a file that is not regular is.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&(os.ModeDevice|os.ModeCharDevice) != 0:
		return "a device"
	}
	return "mode " + m.String()
}

// FutureSlack is how far in the future a stored run may have started:
// the clocks of the machines a sharded matrix ran on may differ by this
// much. A run later than that cannot be the newest run, decide a cell or
// make a night of its own.
const FutureSlack = 10 * time.Minute

// loadStored is Load of a file of the store: its id must be its file name
// (so that `lab results show ID` finds it, and no two files claim one id),
// and it must not have started after now + FutureSlack.
func loadStored(path string, now time.Time) (*Result, error) {
	r, err := Load(path)
	if err != nil {
		return nil, err
	}
	if name := strings.TrimSuffix(filepath.Base(path), ext); r.ID != name {
		return nil, fmt.Errorf("load result %s: its id %s is not its file name: skipped (a copy under another name, or an edited id); rename it %s%s, or give its path", path, r.ID, r.ID, ext)
	}
	if r.Started.After(now.Add(FutureSlack)) {
		return nil, fmt.Errorf("load result %s: started %s, in the future (this machine's clock says %s): skipped; fix the clock of the machine that ran it, or move it out", path, r.Started.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return r, nil
}

// missingKeys names what a document lacks of what identifies a run ("id,
// plugin or experiment"), or is "" when it has all three: `{}` and `null`
// decode without error and must not pass for a run with no name.
func missingKeys(r *Result) string {
	var missing []string
	for _, k := range [][2]string{{"id", r.ID}, {"plugin", r.Plugin}, {"experiment", r.Experiment}} {
		if k[1] == "" {
			missing = append(missing, k[0])
		}
	}
	switch len(missing) {
	case 0:
		return ""
	case 1:
		return missing[0]
	}
	return strings.Join(missing[:len(missing)-1], ", ") + " or " + missing[len(missing)-1]
}

// List returns the paths of the results stored in dir, newest first (by
// ID, which starts with the start time). A missing dir is an empty list.
func List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list results: %w", err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		// A directory (or FIFO, device) named like a result is listed, so
		// that loading it names and skips it instead of hiding it.
		if strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ext) {
			continue
		}
		names = append(names, n)
	}
	slices.Sort(names)
	slices.Reverse(names)
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = filepath.Join(dir, n)
	}
	return paths, nil
}

// Resolve finds a stored result from what a user typed: a path to a file,
// "latest" (see Latest; the files it skipped are not reported), a full ID,
// or a unique prefix of one.
func Resolve(dir, ref string) (string, error) {
	if strings.ContainsRune(ref, os.PathSeparator) || strings.HasSuffix(ref, ext) {
		if _, err := os.Stat(ref); err == nil {
			return ref, nil
		}
	}
	paths, err := List(dir)
	if err != nil {
		return "", err
	}
	if ref == "latest" {
		path, _, err := Latest(dir)
		return path, err
	}
	var found []string
	for _, p := range paths {
		id := strings.TrimSuffix(filepath.Base(p), ext)
		if id == ref {
			return p, nil
		}
		if strings.HasPrefix(id, ref) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("result %q not found in %s", ref, dir)
	case 1:
		return found[0], nil
	default:
		return "", fmt.Errorf("result %q is ambiguous in %s: %d results start with it", ref, dir, len(found))
	}
}

// LoadRef loads the run ref names in dir (see Resolve). For "latest" the
// files that did not load are returned beside it, for the caller to name.
func LoadRef(dir, ref string) (*Result, []error, error) {
	var (
		path    string
		skipped []error
		err     error
	)
	if ref == "latest" {
		path, skipped, err = Latest(dir)
	} else {
		path, err = Resolve(dir, ref)
	}
	if err != nil {
		return nil, skipped, err
	}
	r, err := Load(path)
	if err != nil {
		return nil, skipped, fmt.Errorf("%w (a corrupt or truncated result file)", err)
	}
	return r, skipped, nil
}

// Latest returns the path of the newest run in dir by its recorded start
// (then finish, then ID), among the files that load: a file name says
// nothing of when its run started (a run copied in under another name, a
// stray zero.json), and one bad file must not stand in for the newest
// run. The files that did not load are returned beside it, for the caller
// to name.
func Latest(dir string) (string, []error, error) {
	paths, err := List(dir)
	if err != nil {
		return "", nil, err
	}
	if len(paths) == 0 {
		return "", nil, fmt.Errorf("no results in %s; run `lab run` first", dir)
	}
	var best *Result
	var bestPath string
	var skipped []error
	now := time.Now()
	for _, p := range paths {
		r, err := loadStored(p, now)
		if err != nil {
			skipped = append(skipped, err)
			continue
		}
		if best == nil || newer(r, best) {
			best, bestPath = r, p
		}
	}
	if best == nil {
		return "", skipped, fmt.Errorf("no run in %s loads (%d file(s) skipped); run `lab run` first, or move the bad files out", dir, len(skipped))
	}
	return bestPath, skipped, nil
}

// newer says whether a started after b (then finished after it, then has
// the greater ID).
func newer(a, b *Result) bool {
	if !a.Started.Equal(b.Started) {
		return a.Started.After(b.Started)
	}
	if !a.Finished.Equal(b.Finished) {
		return a.Finished.After(b.Finished)
	}
	return a.ID > b.ID
}

// LoadAll loads every result stored in dir, newest first. A file that does
// not load is skipped and its error returned beside the others: one bad
// file must not hide the rest of the store.
func LoadAll(dir string) ([]*Result, []error) {
	paths, err := List(dir)
	if err != nil {
		return nil, []error{err}
	}
	var out []*Result
	var errs []error
	now := time.Now()
	for _, p := range paths {
		r, err := loadStored(p, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	return out, errs
}
