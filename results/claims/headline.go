package claims

import (
	"slices"

	"lab/results"
)

// The headline (`lab run PLUGIN` with no --repeat) asks two things of a
// plugin's claims before and after its run: how many repeats the claims
// its run is in scope of need (Needs), and which claims of the plugin's
// other experiments the profile's machine has (Elsewhere), so that the
// summary can point at the command that decides them.

// Covers says whether run r, as planned (its plugin, experiment, plugin
// version, profile, clock, parameters and sweep points; no samples yet),
// is in c's scope: the scope rules of a stored run (runOut, unitsOf),
// its samples aside.
func Covers(c *results.Claim, profiles Profiles, r *results.Result) bool {
	s := newSpec(c, profiles)
	if !s.ofClaim(r) || s.runOut(r) != "" {
		return false
	}
	in, _ := s.unitsOf(r)
	return len(in) > 0
}

// Needs is the most repeats (MinRepeats) the claims of cs that run r, as
// planned, is in scope of need, and those claims (sorted); 0 and none
// when r is in the scope of no claim that runs decide (untestable claims
// need none).
func Needs(cs []results.Claim, profiles Profiles, r *results.Result) (int, []string) {
	n := 0
	var ids []string
	for i := range cs {
		c := &cs[i]
		m := MinRepeats(c)
		if m == 0 || !Covers(c, profiles, r) {
			continue
		}
		n = max(n, m)
		ids = append(ids, c.ID)
	}
	slices.SortFunc(ids, CompareIDs)
	return n, slices.Compact(ids)
}

// Pointer is a set of claims of one experiment of a plugin whose machine
// is the one a profile stands for, and the runs that decide them (Plan):
// what `lab reproduce` of those claims would run.
type Pointer struct {
	Plugin, Experiment string
	// Profile is the profile the pointer is for (the run's).
	Profile string
	// Claims are the claims' ids, sorted.
	Claims []string
	Runs   []Run
}

// Elsewhere are the claims of cs, outside experiment, whose machine is
// the one profile stands for (its own, or for a variant its base's: the
// claim's Profile, or one of its deciding profiles), one Pointer an
// experiment in the order of cs. A claim no run decides (untestable
// here, or without a scope) is left out: no command decides it.
func Elsewhere(cs []results.Claim, experiment, profile string, profiles Profiles) []Pointer {
	if profile == "" {
		return nil
	}
	machine := []string{profile}
	if base := profiles[profile].VariantOf; base != "" {
		machine = append(machine, base)
	}
	var out []Pointer
	byExp := map[string][]results.Claim{}
	for _, c := range cs {
		if c.Bench == experiment {
			continue
		}
		if runs, _ := DecidingRuns(&c, nil); len(runs) == 0 {
			continue
		}
		if !slices.Contains(machine, c.Profile) && !slices.ContainsFunc(DecidingProfiles(&c), func(p string) bool { return slices.Contains(machine, p) }) {
			continue
		}
		k := c.Plugin + "/" + c.Bench
		if _, ok := byExp[k]; !ok {
			out = append(out, Pointer{Plugin: c.Plugin, Experiment: c.Bench, Profile: profile})
		}
		byExp[k] = append(byExp[k], c)
	}
	for i := range out {
		p := &out[i]
		sel := byExp[p.Plugin+"/"+p.Experiment]
		for _, c := range sel {
			p.Claims = append(p.Claims, c.ID)
		}
		slices.SortFunc(p.Claims, CompareIDs)
		p.Claims = slices.Compact(p.Claims)
		p.Runs, _ = Plan(sel, nil)
	}
	return out
}
