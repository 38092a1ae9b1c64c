package plugins

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// banned are the packages (and everything under them) a plugin binary must
// not link: host-side lab code and the libraries only the host needs.
var banned = []string{
	"gopkg.in/yaml.v3",
	"github.com/cavaliergopher/cpio",
	"gonum.org/v1/gonum",
	"github.com/vbauerster/mpb",
	"github.com/urfave/cli",
	"lab/images",
	"lab/vm", // lab/vm/link too
	"lab/results",
	"lab/plugins/host",
	// go-plugin's package links net/rpc, whose debug page links
	// html/template; text/template's MethodByName keeps every exported
	// method of every type alive. Serve speaks go-plugin's protocol
	// itself, and `lab plugin build` builds with grpcnotrace, which leaves
	// out x/net/trace (html/template again).
	"github.com/hashicorp/go-plugin",
	"github.com/hashicorp/yamux",
	"net/rpc",
	"html/template",
	"text/template",
	"golang.org/x/net/trace",
}

// TestPluginLinksNoHostCode asserts from `go list -deps`, for the guest
// arch and with the tags `lab plugin build` uses, that the built-in plugins and the out-of-module example link
// nothing host-side: a plugin pays only for the SDK.
func TestPluginLinksNoHostCode(t *testing.T) {
	type plugin struct {
		name string
		dir  string // where go list runs (the example is its own module)
		pkg  string
	}
	tests := []plugin{
		{"labtest", "..", "./internal/testplugins/labtest"},
		{"syscallbench", filepath.Join("..", "examples", "syscallbench"), "."},
	}
	// Every built-in plugin: each directory here with a description.json.
	des, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	builtin := 0
	for _, de := range des {
		if _, err := os.Stat(filepath.Join(de.Name(), "description.json")); de.IsDir() && err == nil {
			tests = append(tests, plugin{de.Name(), ".", "./" + de.Name()})
			builtin++
		}
	}
	if builtin < 4 {
		t.Fatalf("found %d built-in plugins under plugins/, want forkbench, threadbench, printfbench, netbench at least", builtin)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", "-tags", GuestBuildTags, tt.pkg)
			cmd.Dir = tt.dir
			cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=386", "GO386=softfloat", "CGO_ENABLED=0")
			out, err := cmd.Output()
			if err != nil {
				var stderr []byte
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = ee.Stderr
				}
				t.Fatalf("go list -deps %s: %v\n%s", tt.pkg, err, stderr)
			}
			deps := strings.Fields(string(out))
			if !contains(deps, "lab/plugins") {
				t.Fatalf("go list -deps %s does not list lab/plugins; is it a plugin?\n%s", tt.pkg, out)
			}
			for _, d := range deps {
				for _, b := range banned {
					if d == b || strings.HasPrefix(d, b+"/") {
						t.Errorf("plugin %s links %s (banned: %s)", tt.name, d, b)
					}
				}
			}
		})
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestHostLinksNoPlotting: plugins/host converts wire types into the result
// document, so it links lab/results (the document) and nothing of the
// statistics, claims or rendering built on it: no gonum, no gonum/plot.
func TestHostLinksNoPlotting(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../plugins/host").Output()
	if err != nil {
		t.Fatalf("go list -deps lab/plugins/host: %v", err)
	}
	deps := strings.Fields(string(out))
	if !contains(deps, "lab/results") {
		t.Fatalf("go list -deps lab/plugins/host does not list lab/results:\n%s", out)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "gonum.org/") || strings.HasPrefix(d, "lab/results/") {
			t.Errorf("lab/plugins/host links %s; it may import lab/results (the document) only", d)
		}
	}
}
