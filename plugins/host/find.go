// Package host is lab's side of its benchmark plugins: finding a plugin's
// builds on the search path, reading the description recorded beside them
// when they were built (checked against the binary's sha256; no plugin code
// ever runs on the host), converting the SDK's types to lab/results' at the
// edge, and the go-plugin runner that starts a plugin inside a guest over
// the VM's link. Plugins themselves import only the SDK, lab/plugins.
package host

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"lab/images"
	"lab/plugins"
)

// Bundle is a plugin built for one guest arch: a directory holding the
// plugin binary (named after the plugin) and, optionally, workload/ with
// the programs it runs. The whole directory is pushed into the guest.
//
//	DIR/NAME/ARCH/NAME
//	DIR/NAME/ARCH/workload/...
type Bundle struct {
	Name string
	Arch string
	// Dir is the host directory of this arch's build.
	Dir string
	// Description is the one recorded beside the binary when it was
	// built (RecordFile), checked against the binary's hash.
	Description *plugins.Description
}

// Binary is the plugin executable on the host.
func (b *Bundle) Binary() string { return filepath.Join(b.Dir, b.Name) }

// SearchPath is where plugins are looked for, in order (the first
// directory holding a plugin wins): lab's built-ins, the user's directory,
// then the extra directories. The CLI builds it once.
type SearchPath struct {
	// Builtin is the directory of lab's own plugins, installed with it
	// (BuiltinDir), or "".
	Builtin string
	// User is where users put their own plugins (the CLI's is
	// $XDG_DATA_HOME/lab/plugins), or "".
	User string
	// Extra are searched last (the CLI's are $LAB_PLUGIN_PATH's).
	Extra []string
}

// Dirs lists the directories searched, in order.
func (s SearchPath) Dirs() []string {
	var dirs []string
	if s.Builtin != "" {
		dirs = append(dirs, s.Builtin)
	}
	if s.User != "" {
		dirs = append(dirs, s.User)
	}
	for _, d := range s.Extra {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// List returns the names of every plugin on the search path (first one
// wins), sorted.
func (s SearchPath) List() []string {
	seen := map[string]bool{}
	for _, dir := range s.Dirs() {
		des, _ := os.ReadDir(dir)
		for _, de := range des {
			if de.IsDir() && !seen[de.Name()] {
				if hasBuild(filepath.Join(dir, de.Name()), de.Name()) {
					seen[de.Name()] = true
				}
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func hasBuild(dir, name string) bool {
	for _, arch := range images.Arches {
		if _, err := os.Stat(filepath.Join(dir, arch, name)); err == nil {
			return true
		}
	}
	return false
}

// Describe returns plugin name's description as recorded beside its
// builds, from the first guest arch it has a usable build for: listing
// plugins and checking a run's parameters needs neither a VM nor running
// anything the plugin ships (a plugin may have no build the host could run).
func (s SearchPath) Describe(name string) (*plugins.Description, error) {
	b, err := s.FindAny(name)
	if err != nil {
		return nil, err
	}
	return b.Description, nil
}

// FindAny is plugin name's bundle for the first guest arch it has a
// usable build for (Describe).
func (s SearchPath) FindAny(name string) (*Bundle, error) {
	var first error
	for _, arch := range images.Arches {
		b, err := s.Find(name, arch)
		if err == nil {
			return b, nil
		}
		// A build that is there but broken says more than one that is not.
		if first == nil || errors.Is(first, errNoBuild) && !errors.Is(err, errNoBuild) {
			first = err
		}
	}
	return nil, first
}

// DescribeAll returns the description of every plugin List finds, in
// its order, and an error for each whose description does not read.
func (s SearchPath) DescribeAll() ([]*plugins.Description, []error) {
	var descs []*plugins.Description
	var errs []error
	for _, name := range s.List() {
		d, err := s.Describe(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		descs = append(descs, d)
	}
	return descs, errs
}

// errNoBuild marks a plugin directory without a build for the arch asked.
var errNoBuild = errors.New("not built")

// Find returns the build of plugin name for arch, from the first search
// path entry that has the plugin.
func (s SearchPath) Find(name, arch string) (*Bundle, error) {
	if name == "" || strings.ContainsAny(name, "/\\") || name[0] == '.' {
		return nil, fmt.Errorf("plugin name %q: give a plain name (see `lab plugins`)", name)
	}
	dirs := s.Dirs()
	for _, dir := range dirs {
		pdir := filepath.Join(dir, name)
		if _, err := os.Stat(pdir); err != nil {
			continue
		}
		b := &Bundle{Name: name, Arch: arch, Dir: filepath.Join(pdir, arch)}
		if _, err := os.Stat(b.Binary()); err != nil {
			return nil, fmt.Errorf("plugin %s (in %s) has no build for %s guests: %w; build it with `lab plugin build DIR`", name, pdir, arch, errNoBuild)
		}
		if err := CheckArch(b.Binary(), arch); err != nil {
			return nil, fmt.Errorf("plugin %s: %w", name, err)
		}
		d, err := ReadRecord(b.Dir, name)
		if err != nil {
			return nil, err
		}
		b.Description = d
		return b, nil
	}
	known := s.List()
	msg := fmt.Sprintf("unknown plugin %q", name)
	if len(known) > 0 {
		msg += "; known: " + strings.Join(known, ", ")
	}
	return nil, fmt.Errorf("%s (searched %s)", msg, strings.Join(dirs, ", "))
}

// CheckArch checks that path is an ELF executable for the guest arch.
func CheckArch(path, arch string) error {
	f, err := elf.Open(path)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return fmt.Errorf("%s is not a Linux executable (%v)", path, err)
		}
		return err
	}
	defer f.Close()
	want := map[string]elf.Machine{"i386": elf.EM_386, "x86_64": elf.EM_X86_64}[arch]
	if f.Machine != want {
		got := map[elf.Machine]string{elf.EM_386: "i386", elf.EM_X86_64: "x86_64"}[f.Machine]
		if got == "" {
			got = f.Machine.String()
		}
		return fmt.Errorf("%s is built for %s, the guest is %s; rebuild it with `lab plugin build`", path, got, arch)
	}
	return nil
}
