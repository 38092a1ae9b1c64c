package claims_test

import (
	"reflect"
	"strings"
	"testing"

	"lab/plugins/contract"
	"lab/results"
	rclaims "lab/results/claims"
)

// Each claim yields the runs that decide it, and a plan merges them.

func scoped(c contract.Claim, sc contract.Scope) results.Claim {
	c.Scope = &sc
	return claim(c)
}

func TestMinRepeats(t *testing.T) {
	sweep := &contract.ScopeSweep{Key: "count", Points: []string{"5", "500", "1000", "5000"}}
	for _, tt := range []struct {
		name  string
		claim results.Claim
		want  int
	}{
		// One bound: 2^-5 < 0.05.
		{"ratio, one bound", scoped(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "a", Denominator: "b", Min: 2}}, contract.Scope{Profiles: []string{"p"}}), 5},
		// Two bounds at 4 points: 8 tests, 2^-8 < 0.05/8.
		{"equivalence at 4 points", scoped(contract.Claim{Equivalence: &contract.EquivalenceClaim{Numerator: "a", Denominator: "b", Margin: 0.1, Sides: contract.SidesBoth}},
			contract.Scope{Profiles: []string{"p"}, Sweep: sweep}), 8},
		{"equivalence, lower side", scoped(contract.Claim{Equivalence: &contract.EquivalenceClaim{Numerator: "a", Denominator: "b", Margin: 0.1, Sides: contract.SidesLower}},
			contract.Scope{Profiles: []string{"p"}}), 5},
		// Two bounds at 3 points: 6 tests, 2^-7 < 0.05/6.
		{"ratio, two bounds, 3 points", scoped(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "a", Denominator: "b", Min: 1, Max: ptr(3)}},
			contract.Scope{Profiles: []string{"p"}, Sweep: &contract.ScopeSweep{Key: "d", Points: []string{"2", "5", "10"}}}), 7},
		// Crossover band 500..1000: 5 and 5000 are outside, 500 and 1000 on its edges.
		{"crossover", scoped(contract.Claim{Crossover: &contract.CrossoverClaim{First: "a", Second: "b", Sweep: "count", BandStart: 500, BandEnd: 1000, Before: "below"}},
			contract.Scope{Profiles: []string{"p"}, Sweep: sweep}), 7},
		{"crash", scoped(contract.Claim{Crash: &contract.CrashClaim{Param: "workers", From: 350, Signal: "SIGSEGV"}}, contract.Scope{Profiles: []string{"p"}}), rclaims.MinCrashRuns},
		// Rank-sum: 1/C(8,4) = 1/70 < 0.05 / 1; 1/C(6,3) = 1/20 is not.
		{"speedup", scoped(contract.Claim{Speedup: &contract.SpeedupClaim{Metric: "t", Baseline: "a", Profile: "b", Min: 1.5}}, contract.Scope{}), 4},
		// Two bounds at 2 points (E1.8a): 4 tests, 1/C(10,5) = 1/252 < 0.05/4; 1/70 is not.
		{"speedup, two bounds, 2 points", scoped(contract.Claim{Speedup: &contract.SpeedupClaim{Metric: "t", Baseline: "a", Profile: "b", Min: 1.5, Max: ptr(2.5)}},
			contract.Scope{Sweep: &contract.ScopeSweep{Key: "mode", Points: []string{"process", "thread"}}}), 5},
		{"equivalence across profiles, 2 points", scoped(contract.Claim{Equivalence: &contract.EquivalenceClaim{Numerator: "t", Denominator: "t", Baseline: "a", Profile: "b", Margin: 0.1, Sides: contract.SidesBoth}},
			contract.Scope{Sweep: &contract.ScopeSweep{Key: "mode", Points: []string{"process", "thread"}}}), 5},
		{"trend", scoped(contract.Claim{Trend: &contract.TrendClaim{Numerator: "a", Denominator: "b", Sweep: "w", Margin: 0.1}}, contract.Scope{Profiles: []string{"p"}}), 4},
		// 4 denominators: 2^-7 < 0.05/4.
		{"diffratio", scoped(contract.Claim{DiffRatio: &contract.DiffRatioClaim{Metric: "cpu", Label: "d", Numerator: "1", Denominators: []string{"2", "3", "5", "7"}, Baseline: "0", Factor: 10}},
			contract.Scope{Profiles: []string{"p"}}), 7},
		// 2 above x 3 below: 6 pairs, 2^-7 < 0.05/6.
		{"order", scoped(contract.Claim{Order: &contract.OrderClaim{Metric: "cpu", Label: "d", Above: []string{"1", "2"}, Below: []string{"3", "4", "5"}, Min: 1}},
			contract.Scope{Profiles: []string{"p"}}), 7},
		{"untestable", scoped(contract.Claim{Untestable: &contract.UntestableClaim{Property: "Windows"}}, contract.Scope{Profiles: []string{"p"}}), 0},
	} {
		if got := rclaims.MinRepeats(&tt.claim); got != tt.want {
			t.Errorf("%s: MinRepeats = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// MinRepeats is what the judge needs: a ratio over 3 points with a clear
// effect is reproduced at MinRepeats repeats and too short by one fewer.
func TestMinRepeatsIsWhatTheJudgeNeeds(t *testing.T) {
	c := scoped(contract.Claim{Ratio: &contract.RatioClaim{Numerator: "a", Denominator: "b", Min: 1, Max: ptr(3)}},
		contract.Scope{Profiles: []string{"celeron-2.4"}, Sweep: &contract.ScopeSweep{Key: "d", Points: []string{"2", "5", "10"}}})
	n := rclaims.MinRepeats(&c)
	for _, reps := range []int{n - 1, n} {
		r := swept(newRun("r1", "celeron-2.4", "icount:0", 1), "d", "2", "5", "10")
		for _, p := range []string{"2", "5", "10"} {
			den := make([]float64, reps)
			for i := range den {
				den[i] = 100 + float64(i)
			}
			add(r, "a", "ms", l("d", p), times(2, den...)...)
			add(r, "b", "ms", l("d", p), den...)
		}
		v := judge(c, rclaims.Options{}, r)
		want := results.Reproduced
		if reps < n {
			want = results.Inconclusive
		}
		if v.Verdict != want || reps < n && !strings.Contains(v.Reason, "too few") {
			t.Errorf("%d repeats (MinRepeats %d): %s: %s, want %s", reps, n, v.Verdict, v.Reason, want)
		}
	}
}

func TestDecidingRuns(t *testing.T) {
	c := scoped(contract.Claim{ID: "E1.1", Crossover: &contract.CrossoverClaim{First: "a", Second: "b", Sweep: "count", BandStart: 500, BandEnd: 1000, Before: "below"}},
		contract.Scope{Profiles: []string{"celeron-2.4"}, Variants: true, Params: map[string]string{"count": "9", "mode": "both"},
			Sweep: &contract.ScopeSweep{Key: "count", Points: []string{"5", "500", "1000", "5000"}}, Clocks: []string{contract.ClockHost, contract.ClockIcount}})
	runs, un := rclaims.DecidingRuns(&c, map[string][]string{"celeron-2.4": {"celeron-2.4-era"}})
	if un != nil || len(runs) != 2 {
		t.Fatalf("runs %+v, unplanned %+v", runs, un)
	}
	want := rclaims.Run{Plugin: "p", Experiment: "e", Profile: "celeron-2.4", Clock: "icount:0", Params: map[string]string{"mode": "both"},
		SweepKey: "count", Points: []string{"5", "500", "1000", "5000"}, Repeat: 7, Claims: []string{"E1.1"}}
	if !reflect.DeepEqual(runs[0], want) {
		t.Errorf("run:\n got %+v\nwant %+v", runs[0], want)
	}
	if runs[1].Profile != "celeron-2.4-era" {
		t.Errorf("variant run on %s, want celeron-2.4-era", runs[1].Profile)
	}
	// Without variants asked for, only the profile.
	if runs, _ := rclaims.DecidingRuns(&c, nil); len(runs) != 1 {
		t.Errorf("without variants: %d runs, want 1", len(runs))
	}
	// A build is a run of its own: the default without the parameter.
	b := c
	b.Scope = &contract.Scope{Profiles: []string{"celeron-2.4"}, Params: map[string]string{"m": "10"}, Builds: []string{contract.DefaultBuild, "dynamic-O0"}}
	if runs, _ := rclaims.DecidingRuns(&b, nil); len(runs) != 2 || runs[0].Params[contract.ParamBuild] != "" ||
		runs[1].Params[contract.ParamBuild] != "dynamic-O0" || runs[1].Params["m"] != "10" || runs[0].Key() == runs[1].Key() {
		t.Errorf("two builds: runs %+v, want one without the build parameter and one with build=dynamic-O0", runs)
	}
	// The host clock alone: host; across two profiles: host.
	h := scoped(contract.Claim{Speedup: &contract.SpeedupClaim{Metric: "t", Baseline: "x1", Profile: "x2", Min: 1.5}}, contract.Scope{})
	runs, _ = rclaims.DecidingRuns(&h, nil)
	if len(runs) != 2 || runs[0].Profile != "x1" || runs[1].Profile != "x2" || runs[0].Clock != "host" {
		t.Errorf("speedup runs %+v, want x1 and x2 under host", runs)
	}
	u := scoped(contract.Claim{Untestable: &contract.UntestableClaim{Property: "Windows' Sleep"}}, contract.Scope{Profiles: []string{"p"}})
	if runs, un := rclaims.DecidingRuns(&u, nil); runs != nil || un == nil || !strings.Contains(un.Reason, "untestable here: Windows' Sleep") {
		t.Errorf("untestable: runs %+v, unplanned %+v", runs, un)
	}
}

// Claims of one experiment, profile, clock and parameters share a run:
// their points joined, the most repeats; others stay apart.
func TestPlanMerges(t *testing.T) {
	sc := func(points ...string) contract.Scope {
		return contract.Scope{Profiles: []string{"x"}, Params: map[string]string{"m": "1"}, Clocks: []string{contract.ClockIcount},
			Sweep: &contract.ScopeSweep{Key: "n", Points: points}}
	}
	a := scoped(contract.Claim{ID: "E1.2", Ratio: &contract.RatioClaim{Numerator: "a", Denominator: "b", Min: 1}}, sc("1", "10"))
	b := scoped(contract.Claim{ID: "E1.10", Equivalence: &contract.EquivalenceClaim{Numerator: "a", Denominator: "b", Margin: 0.1, Sides: contract.SidesBoth}}, sc("10", "100"))
	other := sc("1")
	other.Params = map[string]string{"m": "2"}
	c := scoped(contract.Claim{ID: "E1.3", Ratio: &contract.RatioClaim{Numerator: "a", Denominator: "b", Min: 1}}, other)
	runs, un := rclaims.Plan([]results.Claim{a, b, c}, nil)
	if len(un) != 0 || len(runs) != 2 {
		t.Fatalf("plan %+v, unplanned %+v", runs, un)
	}
	m := runs[0]
	if !reflect.DeepEqual(m.Points, []string{"1", "10", "100"}) || !reflect.DeepEqual(m.Claims, []string{"E1.2", "E1.10"}) ||
		m.Repeat != rclaims.MinRepeats(&b) || m.Params["m"] != "1" {
		t.Errorf("merged run %+v", m)
	}
	if runs[1].Params["m"] != "2" || !reflect.DeepEqual(runs[1].Claims, []string{"E1.3"}) {
		t.Errorf("second run %+v", runs[1])
	}
	// The order of the claims does not change the plan.
	again, _ := rclaims.Plan([]results.Claim{c, b, a}, nil)
	if !reflect.DeepEqual(runs, again) {
		t.Errorf("plan depends on the claims' order:\n%+v\n%+v", runs, again)
	}
}

func TestSelect(t *testing.T) {
	cs := []results.Claim{
		claim(contract.Claim{ID: "E1.2a", PartOf: "E1.2", Ratio: &contract.RatioClaim{Min: 1}}),
		claim(contract.Claim{ID: "E1.2b", PartOf: "E1.2", Ratio: &contract.RatioClaim{Min: 1}}),
		claim(contract.Claim{ID: "E1.10", Ratio: &contract.RatioClaim{Min: 1}}),
		claim(contract.Claim{ID: "E3.1", Ratio: &contract.RatioClaim{Min: 1}}),
	}
	ids := func(sel []results.Claim) []string {
		var out []string
		for _, c := range sel {
			out = append(out, c.ID)
		}
		return out
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"all"}, []string{"E1.2a", "E1.2b", "E1.10", "E3.1"}},
		{[]string{"E1"}, []string{"E1.2a", "E1.2b", "E1.10"}},
		{[]string{"e1.2"}, []string{"E1.2a", "E1.2b"}},
		{[]string{"E3.1", "E1.2b", "E3.1"}, []string{"E1.2b", "E3.1"}},
	} {
		sel, err := rclaims.Select(cs, tt.args)
		if err != nil || !reflect.DeepEqual(ids(sel), tt.want) {
			t.Errorf("Select(%v) = %v, %v; want %v", tt.args, ids(sel), err, tt.want)
		}
	}
	_, err := rclaims.Select(cs, []string{"E9.9"})
	if err == nil || !strings.Contains(err.Error(), `no claim "E9.9"`) || !strings.Contains(err.Error(), "E1.10") {
		t.Errorf("unknown id: %v", err)
	}
}
