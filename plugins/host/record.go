package host

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"lab/images"
	"lab/plugins"
)

// RecordFile is the description record in each arch's build directory,
// NAME/ARCH/description.json, written when the plugin is built:
//
//	{
//	  "binary_sha256": "<sha256 of NAME/ARCH/NAME>",
//	  "description": { ...lab.plugin.v1.Description in canonical JSON... }
//	}
//
// The hash ties the record to the binary it was built with: lab reads the
// description from here and never runs plugin code on the host.
const RecordFile = "description.json"

// record is the JSON form of RecordFile.
type record struct {
	BinarySHA256 string          `json:"binary_sha256"`
	Description  json.RawMessage `json:"description"`
}

// rebuildHint says how to rebuild a plugin's record.
const rebuildHint = "rebuild it with `make plugins` (lab's own plugins) or `lab plugin build DIR` (yours)"

// WriteRecord records d as the description of the binary in the build
// directory dir (NAME/ARCH), with that binary's sha256. d must be valid and
// named after the binary.
func WriteRecord(dir string, d *plugins.Description) error {
	if err := d.Validate(); err != nil {
		return err
	}
	sum, err := fileSHA256(filepath.Join(dir, d.Name))
	if err != nil {
		return fmt.Errorf("plugin %s: recording its description: %w", d.Name, err)
	}
	desc, err := plugins.MarshalDescription(d)
	if err != nil {
		return err
	}
	// An encoder rather than MarshalIndent, which would re-escape the
	// description's <, > and &: the record reads like description.json.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(record{BinarySHA256: sum, Description: desc}); err != nil {
		return fmt.Errorf("plugin %s: recording its description: %w", d.Name, err)
	}
	return images.WriteFileAtomic(filepath.Join(dir, RecordFile), buf.Bytes(), 0o644)
}

// ReadRecord returns the description recorded for the build of plugin name
// in dir (NAME/ARCH), after checking that it belongs to the binary there:
// a record that is missing, unreadable, of another binary or of another
// plugin is an error saying how to rebuild.
func ReadRecord(dir, name string) (*plugins.Description, error) {
	path := filepath.Join(dir, RecordFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("plugin %s: no recorded description (%s missing); %s", name, path, rebuildHint)
	}
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil || rec.BinarySHA256 == "" || len(rec.Description) == 0 {
		return nil, fmt.Errorf("plugin %s: %s is not a description record (%v); %s", name, path, err, rebuildHint)
	}
	sum, err := fileSHA256(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	if sum != rec.BinarySHA256 {
		return nil, fmt.Errorf("plugin %s: recorded description %s is stale: it was recorded for a binary with sha256 %.12s, %s has %.12s; %s",
			name, path, rec.BinarySHA256, filepath.Join(dir, name), sum, rebuildHint)
	}
	d, err := plugins.ParseDescription(rec.Description)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %s: %w; %s", name, path, err, rebuildHint)
	}
	if d.Name != name {
		return nil, fmt.Errorf("plugin in directory %s calls itself %q; the directory and the plugin name must match", name, d.Name)
	}
	return d, nil
}

// hashes memoises fileSHA256 within this process, by path, size and
// modification time: a `lab run --profile` hashes every built-in bundle
// for the snapshot key (BuiltinPreload), then its plugin's binary for the
// record check (Find), then its bundle for the push (bundleFiles).
var hashes sync.Map // hashKey -> string

type hashKey struct {
	path        string
	size, mtime int64
}

// fileSHA256 is the sha256 of the file at path, in hex.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	k := hashKey{path, st.Size(), st.ModTime().UnixNano()}
	if sum, ok := hashes.Load(k); ok {
		return sum.(string), nil
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if n == st.Size() { // not one that grew while it was read
		hashes.Store(k, sum)
	}
	return sum, nil
}
