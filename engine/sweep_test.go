package engine

// The sweep's outcome, in-process;
// nothing boots.

import (
	"strconv"
	"strings"
	"testing"

	"lab/results"
)

func TestSweepOutcome(t *testing.T) {
	pts := func(statuses ...string) *results.Sweep {
		sw := &results.Sweep{Axes: []results.SweepAxis{{Key: "n", Values: []string{"1", "2", "3"}}}}
		for i, s := range statuses {
			sw.Points = append(sw.Points, results.SweepPoint{Labels: map[string]string{"n": strconv.Itoa(i + 1)}, Status: s, Reason: "why " + strconv.Itoa(i+1)})
		}
		return sw
	}
	tests := []struct {
		name        string
		sw          *results.Sweep
		broken      int
		failed      []string
		crashed     []string
		interrupted string
		status      string
		reason      []string
	}{
		{"all ok", pts("ok", "ok", "ok"), -1, nil, nil, "", "ok", nil},
		{"interrupted", pts("ok", results.StatusInterrupted, results.PointNotRun), 1, nil, nil, "Ctrl-C", results.StatusInterrupted,
			[]string{"interrupted (Ctrl-C) after 1 of 3 sweep points", "finished points are kept"}},
		// lab reproduce's budget ended mid-sweep: before, the reason said
		// Ctrl-C (2026-12-07).
		{"the budget ended", pts("ok", results.StatusInterrupted, results.PointNotRun), 1, nil, nil, "lab reproduce's budget of 1h0m0s ended", results.StatusInterrupted,
			[]string{"interrupted (lab reproduce's budget of 1h0m0s ended) after 1 of 3 sweep points"}},
		{"broken", pts("ok", "failed", results.PointNotRun), 1, nil, nil, "", "failed",
			[]string{"sweep point 2 of 3 (n=2): why 2", "the 1 point(s) after it were not run"}},
		{"a point failed, the others ran", pts("ok", "failed", "ok"), -1, []string{"n=2: boom"}, nil, "", "failed", []string{"1 of 3 sweep points failed: n=2: boom"}},
		{"expected crash", pts("ok", "ok", "expected-crash"), -1, nil, []string{"n=3: SIGSEGV"}, "", "expected-crash", []string{"1 of 3 sweep points ended in the expected crash: n=3: SIGSEGV"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, reason := SweepOutcome(tt.sw, tt.broken, tt.failed, tt.crashed, tt.interrupted)
			if status != tt.status {
				t.Errorf("status %q, want %q (reason %q)", status, tt.status, reason)
			}
			for _, w := range tt.reason {
				if !strings.Contains(reason, w) {
					t.Errorf("reason %q does not say %q", reason, w)
				}
			}
		})
	}
}
