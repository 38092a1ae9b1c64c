package claims

import (
	"slices"
	"testing"

	"lab/plugins/contract"
	"lab/results"
)

// headlineClaims are synthetic claims of one plugin "bench": two of
// experiment "create" on the celeron (a ratio, an absolute time under
// icount only), one of "forktime" on the p4, one untestable.
func headlineClaims() []results.Claim {
	one := 1.0
	mk := func(id, exp, profile string, sc *contract.Scope) results.Claim {
		c := results.Claim{Plugin: "bench", Bench: exp}
		c.ID, c.Profile, c.Scope = id, profile, sc
		c.Ratio = &contract.RatioClaim{Numerator: "a", Denominator: "b", Min: 10}
		return c
	}
	e16 := mk("E1.6", "create", "celeron", &contract.Scope{Profiles: []string{"celeron"}, Variants: true, Params: map[string]string{"m": "10000"}})
	e17 := mk("E1.7", "create", "celeron", &contract.Scope{Profiles: []string{"celeron"}, Variants: true, Params: map[string]string{"m": "10000"},
		Clocks: []string{contract.ClockIcount}})
	e17.Ratio, e17.Range = nil, &contract.RangeClaim{Metric: "a", Min: &one, Max: &one, Unit: "ms"}
	e21 := mk("E2.1a", "forktime", "p4", &contract.Scope{Profiles: []string{"p4"}, Variants: true, Params: map[string]string{"n": "2000"}})
	e21c := mk("E2.1c", "forktime", "", &contract.Scope{Profiles: []string{"p4", "celeron"}})
	e21c.Ratio, e21c.Untestable = nil, &contract.UntestableClaim{Property: "Solaris' fork"}
	return []results.Claim{e16, e17, e21, e21c}
}

// planned is a run as planned: no samples.
func planned(exp, profile, clock string, params map[string]string) *results.Result {
	return &results.Result{Plugin: "bench", Experiment: exp, Parameters: params,
		Machine: results.MachineRecord{Profile: profile, Clock: clock}, Outcome: results.Outcome{Status: contract.StatusOK}}
}

func TestNeeds(t *testing.T) {
	cs := headlineClaims()
	profiles := Profiles{"celeron-era": {VariantOf: "celeron"}}
	ratio, rng := MinRepeats(&cs[0]), MinRepeats(&cs[1])
	tests := []struct {
		name string
		run  *results.Result
		n    int
		ids  []string
	}{
		{"both in scope under icount", planned("create", "celeron", "icount:0", map[string]string{"m": "10000"}), max(ratio, rng), []string{"E1.6", "E1.7"}},
		{"the absolute time is icount's only", planned("create", "celeron", "host", map[string]string{"m": "10000"}), ratio, []string{"E1.6"}},
		{"a variant is in scope", planned("create", "celeron-era", "icount:3", map[string]string{"m": "10000"}), max(ratio, rng), []string{"E1.6", "E1.7"}},
		{"another size is out of scope", planned("create", "celeron", "icount:0", map[string]string{"m": "100000"}), 0, nil},
		{"numbers compare as numbers", planned("create", "celeron", "host", map[string]string{"m": "10000.0"}), ratio, []string{"E1.6"}},
		{"another profile", planned("create", "p4", "host", map[string]string{"m": "10000"}), 0, nil},
		{"another experiment's claims", planned("forktime", "celeron", "host", map[string]string{"n": "2000"}), 0, nil},
		{"untestable needs none", planned("forktime", "p4", "host", map[string]string{"n": "2000"}), MinRepeats(&cs[2]), []string{"E2.1a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, ids := Needs(cs, profiles, tt.run)
			if n != tt.n || !slices.Equal(ids, tt.ids) {
				t.Errorf("Needs = %d %v, want %d %v", n, ids, tt.n, tt.ids)
			}
		})
	}
	if ratio < 2 {
		t.Errorf("MinRepeats of a ratio = %d, want more than one repeat", ratio)
	}
}

func TestNeedsSweep(t *testing.T) {
	cs := headlineClaims()
	r := planned("create", "celeron", "host", map[string]string{"m": "100,10000"})
	r.Sweep = &results.Sweep{Axes: []results.SweepAxis{{Key: "m", Values: []string{"100", "10000"}}},
		Points: []results.SweepPoint{{Labels: map[string]string{"m": "100"}, Status: contract.StatusOK}, {Labels: map[string]string{"m": "10000"}, Status: contract.StatusOK}}}
	if n, ids := Needs(cs, nil, r); n != MinRepeats(&cs[0]) || !slices.Equal(ids, []string{"E1.6"}) {
		t.Errorf("a sweep with a point in scope: Needs = %d %v, want %d [E1.6]", n, ids, MinRepeats(&cs[0]))
	}
	r.Sweep.Points = r.Sweep.Points[:1]
	r.Sweep.Axes[0].Values = r.Sweep.Axes[0].Values[:1]
	if n, ids := Needs(cs, nil, r); n != 0 || ids != nil {
		t.Errorf("a sweep with no point in scope: Needs = %d %v, want 0 []", n, ids)
	}
}

func TestElsewhere(t *testing.T) {
	cs := headlineClaims()
	profiles := Profiles{"celeron-era": {VariantOf: "celeron"}}
	tests := []struct {
		name, exp, profile string
		want               []string // experiment: claims
	}{
		{"the celeron's claims from forktime", "forktime", "celeron", []string{"create: E1.6 E1.7"}},
		{"a variant stands for its base's machine", "forktime", "celeron-era", []string{"create: E1.6 E1.7"}},
		{"none outside the experiment run", "create", "celeron", nil},
		{"the p4's from create", "create", "p4", []string{"forktime: E2.1a"}},
		{"a profile no claim names", "forktime", "modern", nil},
		{"no profile", "forktime", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range Elsewhere(cs, tt.exp, tt.profile, profiles) {
				s := p.Experiment + ":"
				for _, id := range p.Claims {
					s += " " + id
				}
				got = append(got, s)
				if p.Profile != tt.profile || p.Plugin != "bench" || len(p.Runs) == 0 {
					t.Errorf("pointer %+v: want profile %s, plugin bench and the runs that decide it", p, tt.profile)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Elsewhere = %q, want %q", got, tt.want)
			}
		})
	}
	// E1.6 and E1.7 share one run: the same profile, experiment,
	// parameters and clock (icount, which E1.7 needs).
	p := Elsewhere(cs, "forktime", "celeron", profiles)[0]
	if len(p.Runs) != 1 || p.Runs[0].Clock != "icount:0" || p.Runs[0].Repeat != max(MinRepeats(&cs[0]), MinRepeats(&cs[1])) {
		t.Errorf("runs = %+v, want one icount:0 run with the most repeats of the two", p.Runs)
	}
}
