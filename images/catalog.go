package images

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed profiles/*.yaml
var builtinFS embed.FS

// BuiltinSource is what Catalog.Source reports for an embedded profile.
const BuiltinSource = "built-in"

// Builtin returns the embedded profiles, sorted by name. They are validated
// by the package's tests, so a broken one is a build bug and panics.
func Builtin() []Profile {
	entries, err := builtinFS.ReadDir("profiles")
	if err != nil {
		panic(fmt.Sprintf("images: embedded profiles: %v", err))
	}
	var out []Profile
	for _, e := range entries {
		data, err := builtinFS.ReadFile("profiles/" + e.Name())
		if err != nil {
			panic(fmt.Sprintf("images: embedded profile %s: %v", e.Name(), err))
		}
		p, err := decodeProfile(e.Name(), data)
		if err != nil {
			panic(fmt.Sprintf("images: embedded %v", err))
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LoadFile reads one profile file: JSON if the name ends in .json, YAML
// otherwise. Unknown fields and invalid values are rejected with the file
// named in the error.
func LoadFile(path string) (Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Profile{}, fmt.Errorf("profile file: %w", err)
	}
	return decodeProfile(path, data)
}

func decodeProfile(path string, data []byte) (Profile, error) {
	var p Profile
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return Profile{}, fmt.Errorf("profile file %s: %w", path, err)
		}
		if dec.More() {
			return Profile{}, fmt.Errorf("profile file %s: more than one JSON value; one profile per file", path)
		}
	default:
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&p); err != nil {
			if errors.Is(err, io.EOF) {
				return Profile{}, fmt.Errorf("profile file %s: empty", path)
			}
			return Profile{}, fmt.Errorf("profile file %s: %w", path, friendlyYAMLError(err))
		}
		var extra yaml.Node
		if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
			return Profile{}, fmt.Errorf("profile file %s: more than one YAML document; one profile per file", path)
		}
	}
	if err := p.Validate(); err != nil {
		return Profile{}, fmt.Errorf("profile file %s: %w", path, err)
	}
	return p, nil
}

var yamlUnknownRE = regexp.MustCompile(`^(line \d+): field (\S+) not found in type \S+$`)

// friendlyYAMLError rewrites yaml.v3's "field x not found in type
// images.Profile" into "unknown field "x"", which is what a user needs.
func friendlyYAMLError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		if s := yamlUnknownRE.FindStringSubmatch(m); s != nil {
			m = fmt.Sprintf("%s: unknown field %q", s[1], s[2])
		}
		msgs[i] = m
	}
	return errors.New(strings.Join(msgs, "; "))
}

// Catalog is the set of profiles a command can use: the built-ins, the
// user's profile directory and profile files named on the command line.
type Catalog struct {
	profiles map[string]Profile
	sources  map[string]string
}

// LoadCatalog builds a catalog from the built-ins, every *.yaml, *.yml and
// *.json file in userDir (skipped if "" or missing) and the given files
// (--profile-file). A profile whose name is already taken, by a built-in or
// by another file, is an error naming both: nothing shadows silently.
func LoadCatalog(userDir string, files ...string) (*Catalog, error) {
	c := &Catalog{profiles: map[string]Profile{}, sources: map[string]string{}}
	for _, p := range Builtin() {
		c.profiles[p.Name] = p
		c.sources[p.Name] = BuiltinSource
	}
	var paths []string
	if userDir != "" {
		entries, err := os.ReadDir(userDir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("profile directory: %w", err)
		}
		for _, e := range entries {
			switch strings.ToLower(filepath.Ext(e.Name())) {
			case ".yaml", ".yml", ".json":
				if !e.IsDir() {
					paths = append(paths, filepath.Join(userDir, e.Name()))
				}
			}
		}
	}
	paths = append(paths, files...)
	seen := map[string]bool{}
	for _, path := range paths {
		if abs, err := filepath.Abs(path); err == nil {
			if seen[abs] {
				continue // the same file given twice is not a clash
			}
			seen[abs] = true
		}
		p, err := LoadFile(path)
		if err != nil {
			return nil, err
		}
		if prev, ok := c.sources[p.Name]; ok {
			if prev == BuiltinSource {
				return nil, fmt.Errorf("profile %q in %s has the name of the built-in profile %q; built-ins cannot be shadowed, rename it", p.Name, path, p.Name)
			}
			return nil, fmt.Errorf("profile %q is defined twice, in %s and in %s; rename one", p.Name, prev, path)
		}
		c.profiles[p.Name] = p
		c.sources[p.Name] = path
	}
	for _, n := range c.Names() {
		if err := CheckVariant(c.profiles[n], c.profiles); err != nil {
			return nil, fmt.Errorf("%s: %w", c.sources[n], err)
		}
	}
	// A variant is its base's machine: it inherits its calibration.
	for n, p := range c.profiles {
		if p.VariantOf != "" {
			p.Calibration = c.profiles[p.VariantOf].Calibration
			c.profiles[n] = p
		}
	}
	return c, nil
}

// CheckVariant checks p's variant_of against the profiles it may name: the
// profile must exist, not be a variant itself, and have p's machine in
// every field but the kernel (and the name, summary and original); p
// sets no calibration of its own, it inherits the base's.
func CheckVariant(p Profile, profiles map[string]Profile) error {
	if p.VariantOf == "" {
		return nil
	}
	base, ok := profiles[p.VariantOf]
	switch {
	case !ok:
		return fmt.Errorf("profile %s: variant_of: no profile %q; name the profile whose machine this is", p.Name, p.VariantOf)
	case base.VariantOf != "":
		return fmt.Errorf("profile %s: variant_of: %s is itself a variant of %s; name %s", p.Name, base.Name, base.VariantOf, base.VariantOf)
	case base.Kernel == p.Kernel:
		return fmt.Errorf("profile %s: variant_of: %s boots the same kernel (%s); a variant differs in its kernel", p.Name, base.Name, p.Kernel)
	case p.Calibration != nil:
		return fmt.Errorf("profile %s: calibration: a variant inherits %s's (the same machine); remove its own", p.Name, base.Name)
	}
	// The machine: everything but what a variant may change (and the
	// calibration, which it inherits).
	a, b := p, base
	for _, q := range []*Profile{&a, &b} {
		q.Name, q.Summary, q.Original, q.Kernel, q.VariantOf, q.Experiments, q.Calibration = "", "", Original{}, "", "", nil, nil
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		return fmt.Errorf("profile %s: variant_of: %s is another machine (its arch, machine, cpu, topology, memory, cmdline, guest, console or clock differ); a variant differs from it only in its kernel", p.Name, base.Name)
	}
	return nil
}

// Names lists every profile name, sorted.
func (c *Catalog) Names() []string {
	names := make([]string, 0, len(c.profiles))
	for n := range c.profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Profiles lists every profile, sorted by name.
func (c *Catalog) Profiles() []Profile {
	out := make([]Profile, 0, len(c.profiles))
	for _, n := range c.Names() {
		out = append(out, c.profiles[n])
	}
	return out
}

// Source says where a profile came from: BuiltinSource or a file path.
func (c *Catalog) Source(name string) string { return c.sources[name] }

// Lookup finds a profile by name. An unknown name gets an error suggesting
// the closest known name and listing them all.
func (c *Catalog) Lookup(name string) (Profile, error) {
	if p, ok := c.profiles[name]; ok {
		return p, nil
	}
	names := c.Names()
	if s := closest(name, names); s != "" {
		return Profile{}, fmt.Errorf("unknown profile %q; did you mean %q? known: %s", name, s, strings.Join(names, ", "))
	}
	return Profile{}, fmt.Errorf("unknown profile %q; known: %s", name, strings.Join(names, ", "))
}

// Lookup resolves a name in LoadCatalog(userDir, files...): userDir is the
// user's profile directory (the CLI's is $XDG_CONFIG_HOME/lab/profiles),
// "" for the built-ins and files only.
func Lookup(userDir, name string, files ...string) (Profile, error) {
	c, err := LoadCatalog(userDir, files...)
	if err != nil {
		return Profile{}, err
	}
	return c.Lookup(name)
}

// closest returns the candidate nearest to name by edit distance, or "" if
// none is near enough to be a plausible typo.
func closest(name string, candidates []string) string {
	// A name cut short ("xeon5130-1") means the one profile it begins,
	// even where another is fewer edits away ("xeon5130-fb"); where it
	// begins a profile and its variants ("xeon5130-1core",
	// "xeon5130-1core-era"), it means the profile the variants extend.
	var prefixed []string
	for _, c := range candidates {
		if strings.HasPrefix(c, strings.ToLower(name)) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) > 0 && len(name) >= 3 {
		shortest := slices.MinFunc(prefixed, func(a, b string) int { return len(a) - len(b) })
		if !slices.ContainsFunc(prefixed, func(c string) bool { return !strings.HasPrefix(c, shortest) }) {
			return shortest
		}
	}
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(name), c)
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > max(2, len(name)/2) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes: profile
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
