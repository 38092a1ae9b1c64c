package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaimProfiles: what the judge knows of a profile: a variant takes
// its base's calibration and names its kernel; a base has its own.
func TestClaimProfiles(t *testing.T) {
	ps, err := CatalogProfiles("")
	if err != nil {
		t.Fatal(err)
	}
	base, variant := ps["celeron-2.4"], ps["celeron-2.4-linux-2.6.32"]
	if base.Calibration == nil || base.VariantOf != "" || base.Kernel != "" {
		t.Errorf("celeron-2.4: %+v, want its own calibration and no variant", base)
	}
	if variant.VariantOf != "celeron-2.4" || variant.Calibration != base.Calibration || !strings.HasPrefix(variant.Kernel, "upstream Linux 2.6.32") {
		t.Errorf("celeron-2.4-linux-2.6.32: %+v, want a variant of celeron-2.4 with its calibration and kernel", variant)
	}
	if c := ps["xeon5130-fb"].Console; c == "" || c == ps["xeon5130-vga"].Console {
		t.Errorf("consoles fb %q, vga %q: want each its own", c, ps["xeon5130-vga"].Console)
	}
	// A catalogue that does not load: the built-in profiles, and why.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("name: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := CatalogProfiles(dir)
	if err == nil || got["celeron-2.4"].Calibration == nil {
		t.Errorf("CatalogProfiles(bad) = %d profiles, %v; want the built-in ones and the error", len(got), err)
	}
}
