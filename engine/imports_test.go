package engine

import (
	"go/build"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestNoCLIImports: the engine is a library under the CLI: it imports no
// command-line, progress-bar or cmd/ package, directly or through the
// packages it imports.
func TestNoCLIImports(t *testing.T) {
	seen := map[string]bool{}
	var walk func(path string)
	walk = func(path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		pkg, err := build.Default.Import(path, ".", 0)
		if err != nil {
			if pkg == nil || pkg.Goroot {
				return
			}
			t.Fatalf("import %s: %v", path, err)
		}
		if pkg.Goroot {
			return
		}
		for _, imp := range pkg.Imports {
			for _, bad := range []string{"github.com/urfave/cli", "github.com/vbauerster/mpb", "lab/cmd/"} {
				if strings.HasPrefix(imp, bad) {
					t.Errorf("%s imports %s: the engine must not depend on the CLI", path, imp)
				}
			}
			if strings.HasPrefix(imp, "lab/") || imp == "lab" {
				walk(imp)
			}
		}
	}
	walk("lab/engine")
	if !slices.ContainsFunc(mapKeys(seen), func(p string) bool { return p == "lab/vm" }) {
		t.Errorf("walked %v: lab/vm missing, the walk is broken", mapKeys(seen))
	}
}

func mapKeys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestNoPrints: the engine reports through events and returned values;
// it never writes to the process's stdout or stderr.
func TestNoPrints(t *testing.T) {
	pkg, err := build.Default.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range pkg.GoFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"os.Stdout", "os.Stderr", "fmt.Print", "log.Print", "\tprintln(", " println("} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s uses %s: report with an event instead", f, bad)
			}
		}
	}
}
