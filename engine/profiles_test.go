package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rclaims "lab/results/claims"
	"lab/results/matrix"
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

func TestEstimates(t *testing.T) {
	plan := forkbenchPlan(t, "create", nil)
	est := EstimatesOf(plan.Desc)
	per := est["forkbench/create"]
	if per <= 0 {
		t.Fatalf("forkbench/create declares no repeat_seconds: %v", est)
	}
	r := rclaims.Run{Plugin: "forkbench", Experiment: "create", Repeat: 3}
	if got, want := est.Run(r, 0), cellOverhead+3*per; got != want {
		t.Errorf("Run(3 repeats) = %v, want %v", got, want)
	}
	r.Points = []string{"m=1", "m=2"}
	if got, want := est.Run(r, 5), cellOverhead+10*per; got != want {
		t.Errorf("Run(5 repeats x 2 points) = %v, want %v", got, want)
	}
	if got, want := est.Run(rclaims.Run{Plugin: "x", Experiment: "y"}, 1), cellOverhead+unknownRepeat; got != want {
		t.Errorf("an undeclared experiment: %v, want %v", got, want)
	}
	c := matrix.Cell{Plugin: "forkbench", Experiment: "create", Sweep: map[string][]string{"m": {"1", "2", "3"}}}
	if got, want := est.Cell(c), cellOverhead+3*per; got != want {
		t.Errorf("Cell(3 points, repeats chosen) = %v, want %v (one repeat a point)", got, want)
	}
	for d, want := range map[time.Duration]string{30 * time.Second: "about 30 s", 90 * time.Second: "about 2 min", 59*time.Minute + 40*time.Second: "about 60 min"} {
		if got := FormatEstimate(d); got != want {
			t.Errorf("FormatEstimate(%v) = %q, want %q", d, got, want)
		}
	}
}
