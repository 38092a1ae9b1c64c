package compare_test

import (
	"slices"
	"testing"

	"lab/internal/fixture"
	"lab/results"
)

// The E1 figures and anchors this package once held live in the plugins'
// descriptions now, once only: those a metric measures in the experiment's
// references, the others with the experiment's write-up.

// writeUpRefs are the figures the write-ups of plugin's experiment exp
// declare.
func writeUpRefs(t *testing.T, plugin, exp string) []results.Reference {
	t.Helper()
	var out []results.Reference
	for _, w := range fixture.Views(t, plugin, exp).WriteUps {
		for _, r := range w.References {
			out = append(out, results.Reference{Reference: r})
		}
	}
	return out
}

func TestPublished(t *testing.T) {
	count := func(refs []results.Reference, experiment, metric string) int {
		n := 0
		for _, r := range refs {
			if r.Experiment == experiment && r.Metric == metric {
				n++
			}
		}
		return n
	}
	limit := fixture.Refs(t, "threadbench", "limit")
	hello := writeUpRefs(t, "threadbench", "hello")
	designs := fixture.Refs(t, "netbench", "designs")
	tests := []struct {
		where              string
		refs               []results.Reference
		experiment, metric string
		n                  int
	}{
		{"threadbench hello's E1", hello, "E1", "crossover_prints", 2},
		{"threadbench limit", limit, "E1", "max_threads", 3},
		{"threadbench limit", limit, "anchor", "max_threads", 2},
		// Stevens' server times, which E1 cites: netbench's, under E5.
		{"netbench designs", designs, "E5", "cpu_beyond_s", 2},
	}
	for _, tt := range tests {
		if n := count(tt.refs, tt.experiment, tt.metric); n != tt.n {
			t.Errorf("%s has %d %s %s figures, want %d", tt.where, n, tt.experiment, tt.metric, tt.n)
		}
	}
}

func TestPublishedFor(t *testing.T) {
	all := slices.Concat(writeUpRefs(t, "threadbench", "hello"), fixture.Refs(t, "threadbench", "limit"))
	tests := []struct {
		profile, metric string
		want            []float64
	}{
		{"celeron-2.4", "crossover_prints", []float64{600}},
		{"xeon5130-1core", "crossover_prints", []float64{1000}},
		{"xeon5130-1core", "", []float64{1000, 350}},
		{"xeon5130-2core", "speedup_2core", []float64{2}},
		{"split-3g1g", "max_threads", []float64{384}},
		{"p4-2.4", "", nil}, // E2's figures: forkbench's description
		{"modern-x86_64", "", nil},
	}
	for _, tt := range tests {
		var got []float64
		for _, r := range all {
			if r.Profile == tt.profile && (tt.metric == "" || r.Metric == tt.metric) {
				got = append(got, r.Value)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("figures of %q, %q = %v, want %v", tt.profile, tt.metric, got, tt.want)
		}
	}
}

func TestPublishedWellFormed(t *testing.T) {
	for _, r := range slices.Concat(writeUpRefs(t, "threadbench", "hello"), fixture.Refs(t, "threadbench", "limit")) {
		if r.Experiment == "" || r.Source == "" || r.Machine == "" || r.Metric == "" || r.Unit == "" || r.Value <= 0 {
			t.Errorf("incomplete reference %+v", r)
		}
	}
}
