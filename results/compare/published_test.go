package compare_test

import (
	"testing"

	"lab/results/internal/fixture"

	"lab/results/compare"
)

func TestPublished(t *testing.T) {
	tests := []struct {
		experiment string
		metric     string
		n          int
	}{
		// forktime's and create's figures are in forkbench's description.
		{"forktime", fixture.MetricForkWait, 0},
		{"create", fixture.MetricProcessMS, 0},
		{"E1", "crossover_prints", 2},
		{"E1", "max_threads", 3},
		{"e1", "server_cpu_s", 2},
		{"anchor", "max_threads", 2},
		{"anchor", "fork_exec_us", 3},
	}
	for _, tt := range tests {
		n := 0
		for _, r := range compare.Published(tt.experiment) {
			if r.Metric == tt.metric {
				n++
			}
		}
		if n != tt.n {
			t.Errorf("Published(%q) has %d %s figures, want %d", tt.experiment, n, tt.metric, tt.n)
		}
	}
}

func TestPublishedFor(t *testing.T) {
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
		for _, r := range compare.PublishedFor(tt.profile, tt.metric) {
			got = append(got, r.Value)
		}
		if len(got) != len(tt.want) {
			t.Errorf("PublishedFor(%q, %q) = %v, want %v", tt.profile, tt.metric, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("PublishedFor(%q, %q) = %v, want %v", tt.profile, tt.metric, got, tt.want)
				break
			}
		}
	}
}

func TestPublishedIsCopied(t *testing.T) {
	refs := compare.Published("anchor")
	for i := range refs {
		if refs[i].Labels != nil {
			refs[i].Labels["stack_kb"] = "changed"
		}
		refs[i].Value = -1
	}
	for _, r := range compare.Published("anchor") {
		if r.Value == -1 || r.Labels["stack_kb"] == "changed" {
			t.Fatalf("Published returns the package's own table: %+v", r)
		}
	}
}

func TestPublishedWellFormed(t *testing.T) {
	for _, r := range compare.Published("") {
		if r.Experiment == "" || r.Source == "" || r.Machine == "" || r.Metric == "" || r.Unit == "" || r.Value <= 0 {
			t.Errorf("incomplete reference %+v", r)
		}
	}
}
