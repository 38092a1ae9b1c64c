// Package plugintest is the test kit for plugin authors, as httptest is
// for handlers: it builds a plugin's C workloads the way `lab plugin
// build` does for the guests (static, with lab's <lab.h>), here for the
// host, so a plugin's tests run its real workloads without lab's tree or a
// guest. A plugin outside lab's tree uses it the same way lab's own do.
package plugintest

import (
	"os/exec"
	"path/filepath"
	"testing"

	"lab/plugins/include"
)

// Flags are the compiler flags of BuildWorkloads, besides -I and -o:
// `lab plugin build`'s (static, -O2, threads), with warnings as errors.
var Flags = []string{"-static", "-O2", "-pthread", "-Wall", "-Werror"}

// BuildWorkloads compiles workload/NAME.c (relative to the test's
// directory, the plugin's) for each name with cc into a temporary
// directory it returns, adding extra flags (e.g. -Wextra) after Flags.
// It skips the test when cc is not installed and fails it when a
// workload does not compile.
func BuildWorkloads(t testing.TB, cc string, names []string, extra ...string) string {
	t.Helper()
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("%s not installed: %v", cc, err)
	}
	inc := t.TempDir()
	if err := include.Write(inc); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range names {
		args := append(append(append([]string{}, Flags...), extra...), "-I", inc, "-o", filepath.Join(dir, name), filepath.Join("workload", name+".c"))
		if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s.c: %v\n%s", cc, name, err, out)
		}
	}
	return dir
}
