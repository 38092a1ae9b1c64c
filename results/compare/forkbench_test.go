package compare_test

import (
	"testing"

	"lab/internal/fixture"
)

// The figures moved from this package to forkbench's description.json:
// all of them are there (this package holds none any more).
func TestForkbenchRefs(t *testing.T) {
	tests := []struct {
		exp, metric string
		n           int
	}{
		{"forktime", fixture.MetricForkWait, 16}, // 12 in E2 + lmbench x2, TLPI, 60k
		{"forktime", fixture.MetricThreadJoin, 13},
		{"forktime", fixture.MetricRatio, 12},
		{"create", fixture.MetricProcessMS, 1},
		{"create", fixture.MetricRatio, 1},
	}
	for _, tt := range tests {
		n := 0
		for _, r := range fixture.ForkbenchRefs(t, tt.exp) {
			if r.Metric == tt.metric {
				n++
			}
			if r.Experiment == "" || r.Source == "" || r.Machine == "" || r.Unit == "" || r.Value <= 0 {
				t.Errorf("incomplete reference %+v", r)
			}
		}
		if n != tt.n {
			t.Errorf("forkbench %s has %d %s figures, want %d", tt.exp, n, tt.metric, tt.n)
		}
	}
}
