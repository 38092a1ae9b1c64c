package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"lab/results/compare"
)

// Metric names of the forkbench plugin, for the fixtures.
const (
	MetricForkWait   = "fork_wait_us"
	MetricThreadJoin = "thread_create_join_us"
	MetricProcessMS  = "process_ms"
	MetricThreadMS   = "thread_ms"
	MetricRatio      = "ratio"
)

// Machines of E2's table, as forkbench's description.json names them.
const (
	mP4         = "Pentium 4 2.6 GHz, 512 MB, L2 512K, Linux 2.4.2 openMosix"
	mRockhopper = "Rockhopper: 2 x 728 MHz, 1.3 GB, L2 256K, Linux 2.4.20-30.9smp"
)

// forkbenchExperiment is forkbench's experiment exp as its description.json
// declares it (its field names are the proto's JSON names, which are
// Reference's and Claim's JSON names).
type forkbenchExperiment struct {
	Name       string      `json:"name"`
	References []Reference `json:"references"`
	Claims     []Claim     `json:"claims"`
}

func readForkbench(t testing.TB, exp string) forkbenchExperiment {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "plugins", "forkbench", "description.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Experiments []forkbenchExperiment `json:"experiments"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("forkbench description.json: %v", err)
	}
	for _, e := range d.Experiments {
		if e.Name == exp {
			return e
		}
	}
	t.Fatalf("forkbench has no experiment %q", exp)
	return forkbenchExperiment{}
}

// forkbenchRefs reads the published figures of forkbench's experiment exp
// from the plugin's description.json, where they live (once only), the way
// the host does (host.References): the fixtures compare with the real
// figures.
func forkbenchRefs(t testing.TB, exp string) []Reference {
	t.Helper()
	refs := readForkbench(t, exp).References
	for i := range refs {
		refs[i].Bench = exp
	}
	return refs
}

// forkbenchClaims reads the claims of forkbench's experiment exp from its
// description.json, as the host converts them (host.Claims).
func forkbenchClaims(t testing.TB, exp string) []Claim {
	t.Helper()
	var out []Claim
	for _, c := range readForkbench(t, exp).Claims {
		c = c.WithKind()
		c.Plugin, c.Bench = "forkbench", exp
		out = append(out, c)
	}
	return out
}

// The figures moved from this package to forkbench's description.json:
// all of them are there, and none is left here.
func TestForkbenchRefs(t *testing.T) {
	tests := []struct {
		exp, metric string
		n           int
	}{
		{"forktime", MetricForkWait, 16}, // 12 in E2 + lmbench x2, TLPI, 60k
		{"forktime", MetricThreadJoin, 13},
		{"forktime", MetricRatio, 12},
		{"create", MetricProcessMS, 1},
		{"create", MetricRatio, 1},
	}
	for _, tt := range tests {
		n := 0
		for _, r := range forkbenchRefs(t, tt.exp) {
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
		for _, r := range compare.Published("") {
			if r.Metric == tt.metric {
				t.Errorf("figure %+v is both here and in forkbench's description.json", r)
			}
		}
	}
}
