package render

import (
	"bytes"
	"strings"
	"testing"

	"lab/internal/fixture"
	"lab/results"
	"lab/results/compare"
)

func TestWriteProfiles(t *testing.T) {
	one, two := fixture.Swept("xeon5130-1core", 1), fixture.Swept("xeon5130-2core", 0.5)
	compare.Analyze(one, nil)
	compare.Analyze(two, nil)
	c := compare.CompareProfiles([]*results.Result{one, two})
	var b bytes.Buffer
	if err := WriteProfiles(&b, c); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"comparison of xeon5130-1core, xeon5130-2core", "speed-up xeon5130-2core", "fork_wait_us", "n=50", "2x", "r 1"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("the comparison table does not show %q:\n%s", w, b.String())
		}
	}
}
