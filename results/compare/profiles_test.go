package compare_test

import (
	"reflect"
	"strings"
	"testing"

	"lab/internal/fixture"
	"lab/results"
	"lab/results/compare"
)

func TestCompareProfiles(t *testing.T) {
	one, two := fixture.Swept("xeon5130-1core", 1), fixture.Swept("xeon5130-2core", 0.5)
	compare.Analyze(one, nil)
	compare.Analyze(two, nil)
	c := compare.CompareProfiles([]*results.Result{one, two})
	if c.Baseline != "xeon5130-1core" || !reflect.DeepEqual(c.Profiles, []string{"xeon5130-1core", "xeon5130-2core"}) || len(c.Rows) != 6 {
		t.Fatalf("comparison %+v", c)
	}
	for _, r := range c.Rows {
		switch r.Metric {
		case "fork_wait_us", "thread_create_join_us":
			if got := r.Speedup["xeon5130-2core"]; got != 2 {
				t.Errorf("%s %v: speed-up %v, want 2 (half the time)", r.Metric, r.Labels, got)
			}
			if p, ok := r.P["xeon5130-2core"]; !ok || p >= 0.05 {
				t.Errorf("%s %v: p %v (%v), want < 0.05 for 4 samples a side, all apart", r.Metric, r.Labels, p, ok)
			}
		case "ratio":
			if got := r.Ratio["xeon5130-2core"]; got != 1 || r.Speedup != nil {
				t.Errorf("ratio: ratio %v speed-up %v; want a plain ratio of 1, no speed-up", got, r.Speedup)
			}
		}
	}
	if len(c.Notes) != 0 {
		t.Errorf("notes %v, want none", c.Notes)
	}
	// Different clocks, and a run that did not end ok, are noted.
	two.Machine.Clock = "icount:0"
	two.Outcome = results.Outcome{Status: results.StatusInterrupted, Reason: "interrupted"}
	c = compare.CompareProfiles([]*results.Result{one, two})
	if len(c.Notes) != 2 || !strings.Contains(strings.Join(c.Notes, "\n"), "clock icount:0") || !strings.Contains(strings.Join(c.Notes, "\n"), "ended interrupted") {
		t.Errorf("notes %q, want the clocks and the outcome", c.Notes)
	}
}
