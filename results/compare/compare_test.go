package compare_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"lab/plugins/contract"
	"lab/results"
	"lab/results/claims"
	"lab/results/render"

	"lab/internal/fixture"

	"lab/results/compare"

	"math"
)

func TestCompare(t *testing.T) {
	refs := []results.Reference{
		{Reference: contract.Reference{Metric: "fork_wait_us", Value: 700, Unit: "µs", Machine: "rock", Profile: "rock-2.4"}},
		{Reference: contract.Reference{Metric: "fork_wait_us", Value: 300, Unit: "µs", Machine: "p4", Profile: "p4-2.4"}},
		{Reference: contract.Reference{Metric: "fork_wait_us", Value: 0.2, Unit: "ms", Machine: "old"}},
		{Reference: contract.Reference{Metric: "fork_wait_us", Value: 5, Unit: "prints", Machine: "wrong unit"}},
		{Reference: contract.Reference{Metric: "max_threads", Value: 384, Unit: "threads", Machine: "8m", Labels: map[string]string{"stack_kb": "8192"}}},
		{Reference: contract.Reference{Metric: "max_threads", Value: 3055, Unit: "threads", Machine: "1m", Labels: map[string]string{"stack_kb": "1024"}}},
		{Reference: contract.Reference{Metric: "other", Value: 1, Unit: "x", Machine: "none"}},
	}
	summaries := []results.Summary{
		{Metric: "fork_wait_us", Unit: "us", Median: 600},
		{Metric: "max_threads", Unit: "threads", Median: 381, Labels: map[string]string{"stack_kb": "8192"}},
		{Metric: "max_threads", Unit: "threads", Median: 2000}, // no labels: no labelled ref matches
	}
	type row struct {
		metric, machine string
		published       float64
		ratio           float64
		same            bool
	}
	tests := []struct {
		name    string
		profile string
		want    []row
	}{
		{
			name:    "run's profile first",
			profile: "p4-2.4",
			want: []row{
				{"fork_wait_us", "p4", 300, 2, true},
				{"fork_wait_us", "rock", 700, 600.0 / 700, false},
				{"fork_wait_us", "old", 200, 3, false},
				{"max_threads", "8m", 384, 381.0 / 384, false},
			},
		},
		{
			name:    "no profile: published order",
			profile: "",
			want: []row{
				{"fork_wait_us", "rock", 700, 600.0 / 700, false},
				{"fork_wait_us", "p4", 300, 2, false},
				{"fork_wait_us", "old", 200, 3, false},
				{"max_threads", "8m", 384, 381.0 / 384, false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compare.Compare(summaries, refs, tt.profile)
			var rows []row
			for _, c := range got {
				rows = append(rows, row{c.Metric, c.Machine, c.Published, c.Ratio, c.SameProfile})
			}
			if len(rows) != len(tt.want) {
				t.Fatalf("Compare = %+v, want %+v", rows, tt.want)
			}
			for i := range rows {
				g, w := rows[i], tt.want[i]
				if g.metric != w.metric || g.machine != w.machine || !approx(g.published, w.published) ||
					!approx(g.ratio, w.ratio) || g.same != w.same {
					t.Errorf("comparison %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestComparePublishedForkbench(t *testing.T) {
	r := fixture.Result()
	r.Machine.Profile = map[string]any{"name": "p4-2.4"}
	got := compare.ComparePublished(r, fixture.ForkbenchRefs(t, "forktime"))
	if len(got) == 0 || !got[0].SameProfile || got[0].Machine != fixture.MachineP4 || got[0].Published != 307.3 {
		t.Fatalf("first comparison = %+v, want the P4's 307.3 µs fork figure", got)
	}
	seen := map[string]bool{}
	for _, c := range got {
		seen[c.Metric] = true
	}
	for _, m := range []string{fixture.MetricForkWait, fixture.MetricThreadJoin, fixture.MetricRatio} {
		if !seen[m] {
			t.Errorf("no comparison for %s", m)
		}
	}
}

// TestCompareSidesMedians: two runs compared series by series (metric,
// unit and labels): each side's median, the change in percent, and the
// series one side only has, in a's order followed by b's own.
func TestCompareSidesMedians(t *testing.T) {
	a := fixture.Result()
	b := fixture.Result()
	b.Samples = []results.Sample{
		{Metric: fixture.MetricForkWait, Value: 193.125, Unit: "µs"},
		{Metric: fixture.MetricRatio, Value: 4.414, Unit: "x"},
		{Metric: "new", Value: 1, Unit: "x"},
	}
	got := compare.CompareSides(compare.Side{Name: "a", Runs: []*results.Result{a}}, compare.Side{Name: "b", Runs: []*results.Result{b}})
	type row struct {
		metric  string
		a, b    float64
		percent float64
		only    string
	}
	want := []row{
		{fixture.MetricForkWait, 386.25, 193.125, -50, ""},
		{fixture.MetricThreadJoin, 87.5, 0, 0, "a"},
		{fixture.MetricRatio, 4.414, 4.414, 0, ""},
		{"new", 0, 1, 0, "b"},
	}
	var rows []row
	for _, d := range got {
		rows = append(rows, row{d.Metric, d.A.Median, d.B.Median, d.Percent, d.Only})
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("CompareSides = %+v, want %+v", rows, want)
	}
}

// TestSidesRefusesIncomparable: runs on another accelerator or clock
// measure something else and are refused (ErrMixedRuns), unless forced.
func TestSidesRefusesIncomparable(t *testing.T) {
	tests := []struct {
		name         string
		accel, clock string
		force        bool
		wantErr      bool
	}{
		{"same", "tcg", "host", false, false},
		{"accelerator", "kvm", "host", false, true},
		{"clock", "tcg", "icount", false, true},
		{"forced", "kvm", "icount", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := fixture.Result(), fixture.Result()
			b.Machine.Accelerator, b.Machine.Clock = tt.accel, tt.clock
			_, err := compare.Sides(compare.Side{Name: "a", Runs: []*results.Result{a}}, compare.Side{Name: "b", Runs: []*results.Result{b}}, tt.force, -1)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Sides err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, compare.ErrMixedRuns) {
				t.Errorf("Sides err = %v, want ErrMixedRuns", err)
			}
		})
	}
}

// TestComparePublishedVariant: a run on a kernel variant (p4-2.4-era,
// variant_of p4-2.4) is compared with p4-2.4's figures as its own, its
// claims' verdicts say it ran on that machine on another kernel, and a run
// on an unrelated profile gets neither.
func TestComparePublishedVariant(t *testing.T) {
	r := fixture.Result()
	r.Machine.Profile = map[string]any{"name": "p4-2.4-era", "variant_of": "p4-2.4"}
	r.Machine.KernelID = "era-2.4-i386"
	if got := results.FiguresProfile(r.Machine); got != "p4-2.4" {
		t.Fatalf("FiguresProfile = %q, want p4-2.4", got)
	}
	got := compare.ComparePublished(r, fixture.ForkbenchRefs(t, "forktime"))
	if len(got) == 0 || !got[0].SameProfile || got[0].Machine != fixture.MachineP4 || got[0].Published != 307.3 {
		t.Fatalf("first comparison = %+v, want the P4's 307.3 µs fork figure as the profile's own", got)
	}
	var buf bytes.Buffer
	r.Comparisons = got
	if err := render.WriteSummary(&buf, r, false, render.Notes{}); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "published, "+fixture.MachineP4) || strings.Contains(out, "no published figure") {
		t.Errorf("the table of a run on p4-2.4-era does not show p4-2.4's figures as its machine's:\n%s", out)
	}
	// create's claims name celeron-2.4: decided on celeron-2.4-era, six
	// repeats of a 4.4x process/thread ratio against E1.6's 10x.
	cr := fixture.Result()
	cr.Experiment = "create"
	cr.Machine.Profile = map[string]any{"name": "celeron-2.4-era", "variant_of": "celeron-2.4"}
	cr.Machine.KernelID = "era-2.4-i386"
	cr.Samples = nil
	for i := 0; i < 6; i++ {
		cr.Samples = append(cr.Samples, results.Sample{Metric: fixture.MetricProcessMS, Value: 0.40 + 0.001*float64(i), Unit: "ms", Repeat: i},
			results.Sample{Metric: fixture.MetricThreadMS, Value: 0.09 + 0.0001*float64(i), Unit: "ms", Repeat: i})
	}
	// E1.6 as the new judge sees it: scoped to celeron-2.4 and its
	// variants, the variant's kernel named by its stratum.
	e16 := results.Claim{Claim: contract.Claim{ID: "E1.6", Statement: "threads are 10+ times faster", Profile: "celeron-2.4",
		Scope: &contract.Scope{Profiles: []string{"celeron-2.4"}, Variants: true},
		Ratio: &contract.RatioClaim{Numerator: fixture.MetricProcessMS, Denominator: fixture.MetricThreadMS, Min: 10}},
		Plugin: "forkbench", Bench: "create"}.WithKind()
	profiles := claims.Profiles{"celeron-2.4": {}, "celeron-2.4-era": {VariantOf: "celeron-2.4"}}
	claims.Judge(cr, []results.Claim{e16}, nil, profiles)
	if v := cr.Verdicts[0]; !v.Judged() || len(v.Strata) != 1 || v.Strata[0].Profile != "celeron-2.4-era" || v.Strata[0].Kernel != "era-2.4-i386" {
		t.Errorf("E1.6 on the variant: %s (%s), strata %+v", v.Verdict, v.Reason, v.Strata)
	}
	cr.Machine.Profile = map[string]any{"name": "p3-450"}
	if claims.Judge(cr, []results.Claim{e16}, nil, profiles); !strings.Contains(cr.Verdicts[0].Reason, "profile p3-450 not in scope (celeron-2.4 and its variants)") {
		t.Errorf("E1.6 on another machine: %q", cr.Verdicts[0].Reason)
	}
	other := fixture.Result()
	other.Machine.Profile = map[string]any{"name": "celeron-2.4"}
	if got := compare.ComparePublished(other, fixture.ForkbenchRefs(t, "forktime")); len(got) > 0 && got[0].Machine == fixture.MachineP4 && got[0].SameProfile {
		t.Errorf("a run on celeron-2.4 took the P4's figures as its own: %+v", got[0])
	}
}
func approx(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}
