package compare_test

import (
	"lab/results/internal/fixture"
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
