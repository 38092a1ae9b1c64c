package vm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// printsIn lists, as file:line, every place in the non-test Go files of
// dir that writes to the process's stdout or stderr by itself: os.Stdout,
// os.Stderr, fmt.Print*, the log package's default logger, print/println.
func printsIn(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				pkg, ok := n.X.(*ast.Ident)
				if !ok {
					break
				}
				name := n.Sel.Name
				switch {
				case pkg.Name == "os" && (name == "Stdout" || name == "Stderr"),
					pkg.Name == "fmt" && strings.HasPrefix(name, "Print"),
					pkg.Name == "log" && (strings.HasPrefix(name, "Print") || strings.HasPrefix(name, "Fatal") || strings.HasPrefix(name, "Panic")):
					found = append(found, fset.Position(n.Pos()).String()+": "+pkg.Name+"."+name)
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "print" || id.Name == "println") {
					found = append(found, fset.Position(n.Pos()).String()+": "+id.Name)
				}
			}
			return true
		})
	}
	return found
}

// The vm package says what it has to say through the hooks its callers
// give it (UpOptions.Log, StartOptions.Log, Supervise's writer): only
// cmd/lab prints.
func TestNoPrints(t *testing.T) {
	for _, p := range printsIn(t, ".") {
		t.Errorf("%s: the vm package must not print; take a writer or a log function from the caller", p)
	}
}
