package compare_test

import (
	"errors"
	"lab/internal/fixture"
	"slices"
	"strings"
	"testing"

	"lab/results/compare"

	"lab/results"
)

func TestCompareSides(t *testing.T) {
	base := []float64{100, 101, 99, 100.5, 99.5, 100.2, 99.8}
	one := func(id, profile string, metric, unit string, vals []float64) compare.Side {
		return compare.Side{Name: id, Runs: []*results.Result{fixture.Run(id, profile, "host", fixture.Series(metric, unit, nil, vals...))}}
	}
	slower := scaled(base, 1.10)
	cs := compare.CompareSides(one("a", "c", "t", "ms", base), one("b", "c", "t", "ms", slower))
	if len(cs) != 1 {
		t.Fatalf("%d changes", len(cs))
	}
	c := cs[0]
	if !c.Significant || !c.Regression || c.Delta != "+10.00%" || c.A.N != 7 || c.A.CI == "" || c.P >= 0.05 {
		t.Errorf("a 10%% slowdown over 7 quiet samples: %+v", c)
	}
	if regs := compare.Regressions(cs, 5); len(regs) != 1 {
		t.Errorf("Regressions(5%%) = %d, want 1", len(regs))
	}
	if regs := compare.Regressions(cs, 15); len(regs) != 0 {
		t.Errorf("Regressions(15%%) = %d, want 0: the change is 10%%", len(regs))
	}
	// A rate that falls is the regression; one that rises is not.
	cs = compare.CompareSides(one("a", "c", "conn_per_s", "conn/s", base), one("b", "c", "conn_per_s", "conn/s", slower))
	if !cs[0].HigherIsBetter || cs[0].Regression || !cs[0].Significant {
		t.Errorf("a rate that rose 10%%: %+v", cs[0])
	}
	// Noise: the same distribution shuffled.
	cs = compare.CompareSides(one("a", "c", "t", "ms", base), one("b", "c", "t", "ms", []float64{100.2, 99.8, 100, 101, 99, 99.5, 100.5}))
	if cs[0].Significant || cs[0].Delta != "~" || cs[0].Regression {
		t.Errorf("the same samples: %+v", cs[0])
	}
	// Three samples a side: warned, never significant.
	cs = compare.CompareSides(one("a", "c", "t", "ms", base[:3]), one("b", "c", "t", "ms", slower[:3]))
	if cs[0].Significant || len(cs[0].Warnings) == 0 || !strings.Contains(strings.Join(cs[0].Warnings, " "), "--repeat 4") || cs[0].A.CI != "" {
		t.Errorf("3 samples a side: %+v", cs[0])
	}
	// Series on one side only.
	a := one("a", "c", "t", "ms", base)
	b := one("b", "c", "u", "ms", base)
	cs = compare.CompareSides(a, b)
	if len(cs) != 2 || cs[0].Only != "a" || cs[1].Only != "b" {
		t.Errorf("one-sided series: %+v", cs)
	}
	var out strings.Builder
	if err := compare.WriteChanges(&out, a, one("b", "c", "t", "ms", slower), compare.CompareSides(a, one("b", "c", "t", "ms", slower))); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"+10.00% (worse)", "p=0.001 n=7+7", "100 ms", "±", "Mann-Whitney U"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("WriteChanges lacks %q:\n%s", s, out.String())
		}
	}
}

func TestCheckComparable(t *testing.T) {
	mk := func(id, profile, clock, accel string) compare.Side {
		r := fixture.Run(id, profile, clock)
		r.Machine.Accelerator = accel
		return compare.Side{Name: id, Runs: []*results.Result{r}}
	}
	if err := compare.CheckComparable(mk("a", "c", "host", "tcg"), mk("b", "c", "host", "tcg")); err != nil {
		t.Error(err)
	}
	for _, tt := range []struct {
		b    compare.Side
		want string
	}{
		{mk("b", "p4", "host", "tcg"), "profile c and run b has p4"},
		{mk("b", "c", "icount:0", "tcg"), "clock host and run b has icount:0"},
		{mk("b", "c", "host", "kvm"), "accelerator tcg and run b has kvm"},
	} {
		err := compare.CheckComparable(mk("a", "c", "host", "tcg"), tt.b)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--force") {
			t.Errorf("CheckComparable = %v, want %q and the way out", err, tt.want)
		}
	}
}

// scaled is y with every value times k.
func scaled(y []float64, k float64) []float64 {
	out := make([]float64, len(y))
	for i, v := range y {
		out[i] = v * k
	}
	return out
}

// TestCheckComparableExperiment: runs of another experiment, or of the
// same one with other parameters, measure different things and are
// refused by name (issue 22 item 9): forktime at n=50 against n=400 is a
// +620% "regression" of real_s that no code caused. The number of
// repeats, and a swept key (its values are the samples' labels, paired
// by label), are no difference.
func TestCheckComparableExperiment(t *testing.T) {
	mk := func(id, plugin, exp string, params map[string]string) compare.Side {
		r := fixture.Run(id, "c", "host")
		r.Plugin, r.Experiment, r.Parameters = plugin, exp, params
		return compare.Side{Name: id, Runs: []*results.Result{r}}
	}
	a := mk("a", "forkbench", "forktime", map[string]string{"n": "50", "repeat": "6"})
	for _, tt := range []struct {
		name string
		b    compare.Side
		want []string // in the error; none: comparable
	}{
		{"same", mk("b", "forkbench", "forktime", map[string]string{"n": "50", "repeat": "6"}), nil},
		{"other repeats", mk("b", "forkbench", "forktime", map[string]string{"n": "50", "repeat": "10"}), nil},
		{"other n", mk("b", "forkbench", "forktime", map[string]string{"n": "400", "repeat": "6"}), []string{"n=50", "n=400", "parameters"}},
		{"n unset", mk("b", "forkbench", "forktime", map[string]string{"repeat": "6"}), []string{"n=50", "n unset"}},
		{"other experiment", mk("b", "forkbench", "create", map[string]string{"n": "50", "repeat": "6"}), []string{"forkbench/forktime", "forkbench/create", "experiment"}},
		{"other plugin", mk("b", "threadbench", "forktime", map[string]string{"n": "50", "repeat": "6"}), []string{"forkbench/forktime", "threadbench/forktime"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := compare.CheckComparable(a, tt.b)
			if tt.want == nil {
				if err != nil {
					t.Errorf("CheckComparable = %v, want comparable", err)
				}
				return
			}
			if err == nil || !errors.Is(err, compare.ErrMixedRuns) || !strings.Contains(err.Error(), "--force") {
				t.Fatalf("CheckComparable = %v, want ErrMixedRuns and the way out", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("CheckComparable = %v, want it to name %q", err, w)
				}
			}
		})
	}
	// Within one side too: a filter pooling n=50 with n=400.
	pooled := compare.Side{Name: "experiment=forktime", Runs: append(slices.Clone(a.Runs), mk("b", "forkbench", "forktime", map[string]string{"n": "400"}).Runs...)}
	if err := compare.CheckComparable(pooled, a); err == nil {
		t.Errorf("CheckComparable pooled n=50 and n=400 on one side, want them refused")
	}
	// A swept key is a label of the samples, paired point by point.
	sweep := func(id, counts string) compare.Side {
		s := mk(id, "threadbench", "hello", map[string]string{"count": counts})
		s.Runs[0].Sweep = &results.Sweep{Axes: []results.SweepAxis{{Key: "count", Values: strings.Split(counts, ",")}}}
		return s
	}
	if err := compare.CheckComparable(sweep("a", "5,20"), sweep("b", "5,20,50")); err != nil {
		t.Errorf("CheckComparable of two sweeps over count = %v, want comparable (points pair by label)", err)
	}
}

func TestSides(t *testing.T) {
	base := []float64{100, 101, 99, 100.5, 99.5, 100.2, 99.8}
	side := func(id, metric string, vals []float64) compare.Side {
		return compare.Side{Name: id, Runs: []*results.Result{fixture.Run(id, "c", "host", fixture.Series(metric, "ms", map[string]string{"n": "5"}, vals...))}}
	}
	rep, err := compare.Sides(side("a", "t", base), side("b", "t", scaled(base, 1.10)), false, 5)
	if err != nil {
		t.Fatal(err)
	}
	if rep.A.Name != "a" || !slices.Equal(rep.B.Runs, []string{"b"}) || len(rep.Changes) != 1 || len(rep.Regressions) != 1 {
		t.Errorf("report %+v", rep)
	}
	if got, want := compare.Summaries(rep.Regressions), []string{"t {n=5} +10.0%"}; !slices.Equal(got, want) {
		t.Errorf("Summaries = %q, want %q", got, want)
	}
	if rep, err := compare.Sides(side("a", "t", base), side("b", "t", base), false, -1); err != nil || rep.Regressions != nil {
		t.Errorf("no threshold: %+v, %v; want no regressions", rep, err)
	}
	if _, err := compare.Sides(side("a", "t", base), side("b", "u", base), false, -1); err == nil || !strings.Contains(err.Error(), "share no metric") {
		t.Errorf("no common metric: %v", err)
	}
}
