package results_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"lab/results/compare"
	"lab/results/stats"

	"lab/internal/fixture"
	"lab/results"
)

func TestNewID(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 15, 4, 5, 123456789, time.FixedZone("x", 3600))
	id := results.NewID("fork bench", "fork/time", t0)
	if re := regexp.MustCompile(`^20260102T140405\.123456Z-fork_bench-fork_time-[0-9a-f]{6}$`); !re.MatchString(id) {
		t.Errorf("NewID = %q, want match %s", id, re)
	}
	if id2 := results.NewID("fork bench", "fork/time", t0); id2 == id {
		t.Errorf("two NewID calls at the same time both gave %q", id)
	}
	// Later times sort later, across a change in the number of digits of
	// any field.
	ids := []string{
		results.NewID("p", "e", time.Date(2026, 1, 2, 9, 59, 59, 999999000, time.UTC)),
		results.NewID("p", "e", time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)),
		results.NewID("a", "a", time.Date(2026, 1, 2, 10, 0, 0, 1000, time.UTC)),
	}
	for i := 1; i < len(ids); i++ {
		if ids[i-1] >= ids[i] {
			t.Errorf("ids out of time order: %q >= %q", ids[i-1], ids[i])
		}
	}
}

func TestSaveLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "results")
	r := fixture.Result()
	r.Summary = stats.Summarize(r.Samples)
	r.Comparisons = compare.ComparePublished(r, fixture.ForkbenchRefs(t, "forktime"))
	path, err := results.Save(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, r.ID+".json"); path != want {
		t.Errorf("Save path = %q, want %q", path, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{r.ID + ".json"}; !reflect.DeepEqual(names, want) {
		t.Errorf("dir holds %q after Save, want %q (no temp files)", names, want)
	}
	got, err := results.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("Load(Save(r)) differs:\n got %+v\nwant %+v", got, r)
	}
}

func TestSaveAssignsID(t *testing.T) {
	dir := t.TempDir()
	r := fixture.Result()
	r.ID = ""
	path, err := results.Save(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.ID, "20260102T150405.000000Z-forkbench-forktime-") {
		t.Errorf("assigned ID = %q, want one from Started, plugin and experiment", r.ID)
	}
	if filepath.Base(path) != r.ID+".json" {
		t.Errorf("path = %q, want it named after ID %q", path, r.ID)
	}
}

func TestSaveRejectsPathID(t *testing.T) {
	r := fixture.Result()
	r.ID = "../escape"
	if _, err := results.Save(t.TempDir(), r); err == nil {
		t.Errorf("Save with ID %q succeeded, want error", r.ID)
	}
}

func TestSaveFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	r := fixture.Result()
	r.Machine.Profile = func() {} // not JSON-encodable
	if _, err := results.Save(dir, r); err == nil {
		t.Fatal("Save of an unencodable result succeeded, want error")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("dir holds %d entries after a failed Save, want 0", len(entries))
	}
}

func TestListAndResolve(t *testing.T) {
	dir := t.TempDir()
	var ids []string
	for i, ts := range []time.Time{
		time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 3, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC),
	} {
		r := fixture.Result()
		r.ID = results.NewID("forkbench", "forktime", ts)
		if i == 2 {
			r.ID = "20260101T100000.000000Z-forkbench-forktime-aaaaaa"
		}
		if _, err := results.Save(dir, r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	// Noise List must ignore.
	for _, n := range []string{".x.json.tmp123", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := results.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(dir, ids[1]+".json"),
		filepath.Join(dir, ids[0]+".json"),
		filepath.Join(dir, ids[2]+".json"),
	}
	// A directory named like a result is listed, so that loading it
	// names and skips it (issue 31) instead of hiding it.
	if !reflect.DeepEqual(got, append([]string{filepath.Join(dir, "sub.json")}, want...)) {
		t.Errorf("List = %q, want sub.json then %q", got, want)
	}
	if got, err := results.List(filepath.Join(dir, "missing")); err != nil || len(got) != 0 {
		t.Errorf("List(missing) = %q, %v; want empty, nil", got, err)
	}

	resolve := []struct {
		ref, want string
		wantErr   bool
	}{
		{ref: "latest", want: want[0]},
		{ref: ids[0], want: want[1]},
		{ref: "20260101", want: want[2]},
		{ref: want[2], want: want[2]},
		{ref: "2026010", wantErr: true}, // ambiguous
		{ref: "1999", wantErr: true},
	}
	for _, tt := range resolve {
		got, err := results.Resolve(dir, tt.ref)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q, error %v", tt.ref, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestLoadRejectsNonResult: a JSON document without an id, a plugin and
// an experiment is not a result (issue 22 item 11): Load says so by path,
// and a listing skips it beside the runs that load.
func TestLoadRejectsNonResult(t *testing.T) {
	dir := t.TempDir()
	good := fixture.Result()
	if _, err := results.Save(dir, good); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, doc, want string }{
		{"empty.json", `{}`, "no id, plugin or experiment"},
		{"null.json", `null`, "no id, plugin or experiment"},
		{"noexp.json", `{"id": "x", "plugin": "forkbench"}`, "no experiment"},
	} {
		path := filepath.Join(dir, tt.name)
		if err := os.WriteFile(path, []byte(tt.doc), 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := results.Load(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "not a result") {
			t.Errorf("Load(%s) = %+v, %v; want an error naming the file, %q and \"not a result\"", tt.doc, r, err, tt.want)
		}
	}
	runs, errs := results.LoadAll(dir)
	if len(runs) != 1 || runs[0].ID != good.ID {
		t.Errorf("LoadAll = %d runs, want only %s", len(runs), good.ID)
	}
	if len(errs) != 3 {
		t.Errorf("LoadAll skipped %d files with errors %v, want 3", len(errs), errs)
	}
}

// TestLatest: latest is the newest run by its recorded start among the
// files that load, not the last file name: an empty zero.json or a run
// copied in under a name that sorts last does not stand in for it (issue
// 22 item 10).
func TestLatest(t *testing.T) {
	dir := t.TempDir()
	save := func(id string, start time.Time) string {
		t.Helper()
		r := fixture.Result()
		r.ID, r.Started = id, start
		path, err := results.Save(dir, r)
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	newest := save("20260103T100000.000000Z-forkbench-forktime-bbbbbb", time.Date(2026, 1, 3, 10, 0, 0, 0, time.UTC))
	save("20260102T100000.000000Z-forkbench-forktime-aaaaaa", time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC))
	save("my-old-run", time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)) // sorts last by name
	for _, n := range []string{"zero.json", "zz-empty.json"} {
		doc := ""
		if n == "zz-empty.json" {
			doc = "{}"
		}
		if err := os.WriteFile(filepath.Join(dir, n), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := results.Resolve(dir, "latest")
	if err != nil || got != newest {
		t.Errorf("Resolve(latest) = %q, %v; want %q", got, err, newest)
	}
	got, skipped, err := results.Latest(dir)
	if err != nil || got != newest {
		t.Errorf("Latest = %q, %v; want %q", got, err, newest)
	}
	if s := fmt.Sprint(skipped); len(skipped) != 2 || !strings.Contains(s, "zero.json") || !strings.Contains(s, "zz-empty.json") {
		t.Errorf("Latest skipped %v, want zero.json and zz-empty.json named", skipped)
	}

	// A store of files none of which loads has no latest run, and says why.
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "zero.json"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := results.Latest(bad); err == nil || !strings.Contains(err.Error(), "no run") {
		t.Errorf("Latest of a store of bad files = %v, want an error saying it holds no run", err)
	}
}

// TestStorePrivate: results are kept as privately as everything else lab
// keeps: directories it creates 0700, files 0600, including a save to the
// temp directory when the store cannot be written (issue 22 item 14).
func TestStorePrivate(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "new", "results")
	if err := results.CheckDir(dir); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("CheckDir created %s with mode %v (%v), want 0700", dir, fi.Mode().Perm(), err)
	}
	other := filepath.Join(base, "saved", "results")
	path, err := results.Save(other, fixture.Result())
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{other: 0o700, filepath.Join(base, "saved"): 0o700, path: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v (%v), want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	// Into a directory that exists and is world-readable (the temp
	// directory of a disk-full fallback): the file is still private, the
	// directory left as it is.
	shared := filepath.Join(base, "tmp")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	path, err = results.Save(shared, fixture.Result())
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a result saved into a shared directory has mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	if fi, _ := os.Stat(shared); fi.Mode()&os.ModePerm != 0o777 || fi.Mode()&os.ModeSticky == 0 {
		t.Errorf("Save changed the mode of an existing directory to %v", fi.Mode())
	}
}

// TestStoreReadsOnlyRegularFiles: a FIFO, a directory or a symlink to a
// device named like a result is named and skipped, at once: opening a
// FIFO for reading would wait for a writer for ever (issue 31 item 2).
func TestStoreReadsOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	good := fixture.Result()
	if _, err := results.Save(dir, good); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub.json")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	dev := filepath.Join(dir, "dev.json")
	if err := os.Symlink("/dev/zero", dev); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var runs []*results.Result
	var errs []error
	go func() {
		defer close(done)
		runs, errs = results.LoadAll(dir)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("LoadAll of a store with a FIFO in it did not return within 5 s")
	}
	if len(runs) != 1 || runs[0].ID != good.ID {
		t.Errorf("LoadAll = %d runs, want only %s", len(runs), good.ID)
	}
	all := fmt.Sprint(errs)
	for _, want := range []string{fifo + ": not a regular file (a named pipe)", sub + ": not a regular file (a directory)", dev + ": not a regular file (a device)"} {
		if !strings.Contains(all, want) {
			t.Errorf("LoadAll's errors %v do not say %q", errs, want)
		}
	}
	if _, err := results.Load(fifo); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("Load(FIFO) = %v, want an error naming it a named pipe", err)
	}
	if got, _, err := results.Latest(dir); err != nil || filepath.Base(got) != good.ID+".json" {
		t.Errorf("Latest = %q, %v; want %s", got, err, good.ID)
	}
}

// TestStoreValidatesOnLoad: what a store holds is checked when it is
// read, not only when lab wrote it: a run whose id is not its file name
// (so two files can claim one id), one dated in the future, one with
// repeat indices past its repeats or more samples than lab keeps of a run
// is named and skipped; a file named for a run's id loads.
func TestStoreValidatesOnLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, r *results.Result) string {
		t.Helper()
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := fixture.Result()
	write(good.ID, good)
	dup := write("copy-of-it", fixture.Result())

	future := fixture.Result()
	future.ID = "20991231T000000.000000Z-forkbench-forktime-ffffff"
	future.Started = time.Now().Add(48 * time.Hour)
	future.Finished = future.Started.Add(time.Minute)
	fut := write(future.ID, future)

	repeats := fixture.Result()
	repeats.ID = "20260102T150406.000000Z-forkbench-forktime-rrrrrr"
	repeats.Parameters["repeat"] = "1"
	rep := write(repeats.ID, repeats)

	many := fixture.Result()
	many.ID = "20260102T150407.000000Z-forkbench-forktime-mmmmmm"
	many.Samples = fixture.Series("fork_wait_us", "µs", nil, make([]float64, results.MaxSamples+1)...)
	big := write(many.ID, many)

	runs, errs := results.LoadAll(dir)
	if len(runs) != 1 || runs[0].ID != good.ID {
		ids := []string{}
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		t.Errorf("LoadAll = %v, want only %s", ids, good.ID)
	}
	all := fmt.Sprint(errs)
	for _, want := range []string{
		dup + ": its id " + good.ID + " is not its file name",
		fut + ": started " + future.Started.UTC().Format(time.RFC3339) + ", in the future",
		rep + ": sample of metric fork_wait_us repeat 1: repeat index past the run's 1 repeat(s)",
		big + fmt.Sprintf(": %d samples, more than the %d lab keeps of a run", results.MaxSamples+1, results.MaxSamples),
	} {
		if !strings.Contains(all, want) {
			t.Errorf("LoadAll's errors do not say %q:\n%s", want, all)
		}
	}
	if got, _, err := results.Latest(dir); err != nil || filepath.Base(got) != good.ID+".json" {
		t.Errorf("Latest = %q, %v; want %s, not the run from the future", got, err, good.ID)
	}
	// A file given by its path is the user's to name: lab compare of a
	// renamed copy still loads it.
	if r, err := results.Load(dup); err != nil || r.ID != good.ID {
		t.Errorf("Load(%s) = %v, want the renamed copy", dup, err)
	}
}
