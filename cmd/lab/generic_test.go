package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"lab/images"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// genericPackages are the packages that must name no plugin and no
// write-up: what a plugin shows (its tables, charts, published figures,
// its write-ups' titles) is data its description declares.
var genericPackages = []string{"results", "plugins/host", "cmd/lab", "engine", "vm", "images"}

// notGeneric are directories under them that are not generic code: test
// fixtures built from lab's own plugins.
var notGeneric = []string{"internal/fixture"}

// knownNames are literals left for another change, by file, with why.
var knownNames = map[string][]string{}

// pluginWord matches a plugin's name; writeUpLiteral a literal that is a
// write-up id.
var (
	pluginWord     = regexp.MustCompile(`\b(forkbench|threadbench|netbench|printfbench)\b`)
	writeUpLiteral = regexp.MustCompile("^[\"`]E[1-5]")
)

// TestGenericCodeNamesNoPlugin: the generic packages' non-test Go code
// has no string literal naming one of lab's plugins or starting with a
// write-up id (E1..E5). Comments may name examples; so may a command's
// help text (Usage, Description, UsageText, ArgsUsage), whose examples
// are lab's own plugins.
func TestGenericCodeNamesNoPlugin(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, pkg := range genericPackages {
		err := filepath.WalkDir(filepath.Join(root, pkg), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if d.Name() == "testdata" || slices.Contains(notGeneric, rel) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			for _, lit := range namingLiterals(t, path) {
				if slices.Contains(knownNames[rel], lit.value) {
					continue
				}
				t.Errorf("%s:%d: %s names a plugin or a write-up; declare it in the plugin's description.json instead", rel, lit.line, lit.value)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

type literal struct {
	line  int
	value string
}

// namingLiterals are the string literals of file path, outside help text,
// that name a plugin or start with a write-up id.
func namingLiterals(t *testing.T, path string) []literal {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []literal
	ast.Inspect(f, func(n ast.Node) bool {
		if kv, ok := n.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok {
				switch k.Name {
				case "Usage", "Description", "UsageText", "ArgsUsage":
					return false // help text: examples may name lab's plugins
				}
			}
		}
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if pluginWord.MatchString(lit.Value) || writeUpLiteral.MatchString(lit.Value) {
			out = append(out, literal{fset.Position(lit.Pos()).Line, lit.Value})
		}
		return true
	})
	return out
}

// TestProfileExperimentsDeclared: every experiment a profile may name
// (images/experiments.yaml) is a write-up some plugin of lab's declares,
// and every write-up a plugin declares is one a profile may name.
func TestProfileExperimentsDeclared(t *testing.T) {
	all, errs := testRoots(t).plugins.DescribeAll()
	for _, err := range errs {
		t.Error(err)
	}
	declared := map[string]bool{}
	for _, d := range all {
		for _, e := range d.Experiments {
			for _, w := range e.WriteUps {
				declared[w.ID] = true
			}
		}
	}
	for _, id := range images.Experiments {
		if !declared[id] {
			t.Errorf("images/experiments.yaml names %s, which no plugin declares as a write-up", id)
		}
		delete(declared, id)
	}
	for id := range declared {
		t.Errorf("a plugin declares write-up %s, which images/experiments.yaml does not list", id)
	}
}
