package results_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStandardLibraryOnly: the result document and its store import the
// standard library and the contract's plain types (lab/plugins/contract,
// whose own imports this lists too) and nothing else, so anything
// (plugins/host, the SDK's tools) can read and write results without
// linking statistics or plotting code.
func TestStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps lab/results: %v", err)
	}
	for _, d := range strings.Fields(string(out)) {
		if d != "lab/results" && d != "lab/plugins/contract" {
			t.Errorf("lab/results imports %s; it may import the standard library and lab/plugins/contract only", d)
		}
	}
}
