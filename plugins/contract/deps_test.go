package contract_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStandardLibraryOnly: the contract's types are linked by every plugin
// binary and by the result store, so they import the standard library only.
func TestStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps lab/plugins/contract: %v", err)
	}
	for _, d := range strings.Fields(string(out)) {
		if d != "lab/plugins/contract" {
			t.Errorf("lab/plugins/contract imports %s; it may import the standard library only", d)
		}
	}
}
