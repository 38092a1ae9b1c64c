package claims

import (
	"lab/plugins/contract"
	"testing"
)

// TestConventions: each convention's number is the one
// docs/proposals/verdicts.md §2 gives, and each is justified.
func TestConventions(t *testing.T) {
	t.Parallel()
	want := map[string]float64{
		"at-least":       0,
		"far":            10,
		"cheap":          4.1,
		"about":          0,
		"about-crossing": 0,
		"close":          0.10,
		"no-advantage":   0.10,
		"trend":          0.10,
		"order":          1,
		"kernel-time":    0.5,
		"crash-bracket":  0,
		"figure":         0.5,
	}
	seen := map[string]bool{}
	for _, c := range contract.Conventions {
		if seen[c.Name] {
			t.Errorf("convention %s listed twice", c.Name)
		}
		seen[c.Name] = true
		w, ok := want[c.Name]
		if !ok {
			t.Errorf("convention %s is not in the design", c.Name)
			continue
		}
		if c.Number != w {
			t.Errorf("convention %s: number %v, want %v", c.Name, c.Number, w)
		}
		if c.Words == "" || c.Rule == "" || c.Why == "" {
			t.Errorf("convention %s lacks its words, rule or justification: %+v", c.Name, c)
		}
	}
	for name := range want {
		if _, ok := contract.ConventionNamed(name); !ok {
			t.Errorf("convention %s missing", name)
		}
	}
	if _, ok := contract.ConventionNamed("nonsense"); ok {
		t.Error(`ConventionNamed("nonsense") found one`)
	}
}

// TestConventionsOnSourceFigures: a rule built from a convention gives
// "reproduced" on the figures it was taken from (§2).
func TestConventionsOnSourceFigures(t *testing.T) {
	t.Parallel()
	cheap, _ := contract.ConventionNamed("cheap")
	far, _ := contract.ConventionNamed("far")
	kernel, _ := contract.ConventionNamed("kernel-time")
	for _, tt := range []struct {
		name     string
		ratio, b float64
	}{
		{"E2 P4 fork/create is not cheap", 307.3 / 67.8, cheap.Number},
		{"Stevens 504.2/21.5 is far", 504.2 / 21.5, far.Number},
		{"E3 runs 1-2 is far", 59, far.Number},
		{"E3 pty sys share is kernel time", 0.003 / 0.005, kernel.Number},
	} {
		if tt.ratio < tt.b {
			t.Errorf("%s: %v below the convention's %v", tt.name, tt.ratio, tt.b)
		}
	}
}
