package matrix

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"lab/internal/fixture"
	"lab/results"
	"lab/results/compare"
)

func TestCompareStores(t *testing.T) {
	base := []float64{100, 101, 99, 100.5, 99.5, 100.2, 99.8}
	slower := make([]float64, len(base))
	for i, v := range base {
		slower[i] = v * 1.1
	}
	save := func(dir string, rs ...*results.Result) {
		t.Helper()
		for _, r := range rs {
			if _, err := results.Save(dir, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	a, b := t.TempDir(), t.TempDir()
	save(a, fixture.Run("a1", "celeron-2.4", "host", fixture.Series("t", "ms", nil, base...)))
	save(results.StoreDir(b), fixture.Run("b1", "celeron-2.4", "host", fixture.Series("t", "ms", nil, slower...)),
		fixture.Run("b2", "p4-2.4", "host", fixture.Series("t", "ms", nil, base...)))
	c, skipped, err := CompareStores(a, b, false, 5)
	if err != nil || len(skipped) != 0 {
		t.Fatalf("CompareStores: %v (skipped %v)", err, skipped)
	}
	if len(c.Cells) != 1 || c.Cells[0].A != "a1" || c.Cells[0].B != "b1" {
		t.Errorf("cells %+v, want celeron-2.4's a1 against b1", c.Cells)
	}
	if len(c.Only) != 1 || !strings.HasPrefix(c.Only[0], "p4-2.4/") {
		t.Errorf("only in B: %v, want p4-2.4's cell", c.Only)
	}
	if len(c.Regressions) != 1 || !strings.Contains(c.Regressions[0], "t +10.0%") {
		t.Errorf("regressions %q, want t +10.0%%", c.Regressions)
	}
	var w bytes.Buffer
	if err := WriteStoreCells(&w, c.Cells); err != nil || !strings.HasPrefix(w.String(), "== celeron-2.4/p/e/n=10 (clock host)\n") {
		t.Errorf("WriteStoreCells: %v\n%s", err, w.String())
	}
	if _, _, err := CompareStores(a, t.TempDir(), false, -1); err == nil || !strings.Contains(err.Error(), "holds no runs") {
		t.Errorf("an empty store: %v", err)
	}
	// Another accelerator in the same cell is refused, unless forced.
	other := fixture.Run("b3", "celeron-2.4", "host", fixture.Series("t", "ms", nil, base...))
	other.Machine.Accelerator = "kvm"
	other.Started = other.Started.Add(1)
	b2 := t.TempDir()
	save(b2, other)
	if _, _, err := CompareStores(a, b2, false, -1); !errors.Is(err, compare.ErrMixedRuns) {
		t.Errorf("mixed accelerators: %v, want ErrMixedRuns", err)
	}
	if _, _, err := CompareStores(a, b2, true, -1); err != nil {
		t.Errorf("mixed accelerators, forced: %v", err)
	}
}

// TestCompareStoresRepeatsAside: a cell run with 5 repeats last night and
// 7 tonight is the same cell (lab compare sets the repeat count aside),
// not a cell only in B.
func TestCompareStoresRepeatsAside(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	ra := fixture.Run("a1", "celeron-2.4", "icount:0", fixture.Series("t", "ms", nil, 1, 1, 1, 1, 1))
	ra.Parameters["repeat"] = "5"
	rb := fixture.Run("b1", "celeron-2.4", "icount:0", fixture.Series("t", "ms", nil, 1, 1, 1, 1, 1, 1, 1))
	rb.Parameters["repeat"] = "7"
	if _, err := results.Save(a, ra); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Save(b, rb); err != nil {
		t.Fatal(err)
	}
	c, _, err := CompareStores(a, b, false, -1)
	if err != nil || len(c.Cells) != 1 || len(c.Only) != 0 {
		t.Fatalf("CompareStores: %v, cells %+v, only in B %v; want the one cell paired", err, c.Cells, c.Only)
	}
	if c.Cells[0].Cell != "celeron-2.4/p/e/n=10 (clock icount:0)" {
		t.Errorf("cell %q, want it named without the repeat count", c.Cells[0].Cell)
	}
}
