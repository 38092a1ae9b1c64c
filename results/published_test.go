package results

import "testing"

func TestPublished(t *testing.T) {
	tests := []struct {
		experiment string
		metric     string
		n          int
	}{
		{"forktime", MetricForkWait, 16}, // 12 in E2 + lmbench x2, TLPI, 60k
		{"create", MetricProcessMS, 1},
		{"create", MetricRatio, 1},
		{"e2", MetricRatio, 11},
		{"E1", "max_threads", 3},
		{"anchor", "max_threads", 2},
	}
	for _, tt := range tests {
		n := 0
		for _, r := range Published(tt.experiment) {
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
		{"celeron-2.4", MetricProcessMS, []float64{0.18}},
		{"p4-2.4", MetricForkWait, []float64{307.3, 327.9}},
		{"p4-2.4", MetricRatio, []float64{4.5, 4.8}},
		{"rockhopper-2.4", MetricForkWait, []float64{721.7, 709.4}},
		{"rockhopper-2.4", MetricThreadJoin, []float64{12.2, 11.9}},
		{"rockhopper-2.4", MetricRatio, []float64{59}},
		{"xeon5130-1core", "crossover_prints", []float64{1000}},
		{"xeon5130-2core", "speedup_2core", []float64{2}},
		{"modern-x86_64", "", nil},
	}
	for _, tt := range tests {
		var got []float64
		for _, r := range PublishedFor(tt.profile, tt.metric) {
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
	refs := Published("anchor")
	for i := range refs {
		if refs[i].Labels != nil {
			refs[i].Labels["stack_kb"] = "changed"
		}
		refs[i].Value = -1
	}
	for _, r := range Published("anchor") {
		if r.Value == -1 || r.Labels["stack_kb"] == "changed" {
			t.Fatalf("Published returns the package's own table: %+v", r)
		}
	}
}

func TestPublishedWellFormed(t *testing.T) {
	for _, r := range Published("") {
		if r.Experiment == "" || r.Source == "" || r.Machine == "" || r.Metric == "" || r.Unit == "" || r.Value <= 0 {
			t.Errorf("incomplete reference %+v", r)
		}
	}
}
