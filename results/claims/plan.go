package claims

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"lab/plugins/contract"
	"lab/results"
)

// A claim knows how to decide itself: from its scope it yields the runs
// that decide it (DecidingRuns), and Plan merges the runs of many claims
// into the fewest (claims of one experiment, profile, clock and
// parameters share a run, their sweep points joined and the most repeats
// any of them needs).

// Run is one `lab run` that decides claims: the cell of a plan.
type Run struct {
	Plugin     string `json:"plugin"`
	Experiment string `json:"experiment"`
	Profile    string `json:"profile"`
	// Clock is the guest clock: "icount:0" where icount may decide the
	// claim (deterministic), else "host".
	Clock  string            `json:"clock"`
	Params map[string]string `json:"params,omitempty"`
	// SweepKey and Points are the points the claims are decided over.
	SweepKey string   `json:"sweep_key,omitempty"`
	Points   []string `json:"points,omitempty"`
	// Repeat is the fewest repeats the claims' rules need (MinRepeats).
	Repeat int `json:"repeat"`
	// Claims are the claims the run decides, sorted.
	Claims []string `json:"claims"`
}

// Key is what makes two runs one: everything but the points, the
// repeats and the claims.
func (r Run) Key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s/%s/%s", r.Profile, r.Plugin, r.Experiment, r.Clock)
	for _, k := range results.SortedKeys(r.Params) {
		fmt.Fprintf(&b, "/%s=%s", k, r.Params[k])
	}
	if r.SweepKey != "" {
		fmt.Fprintf(&b, "/sweep:%s", r.SweepKey)
	}
	return b.String()
}

// Unplanned is a claim that no run decides, with why: untestable here,
// or a claim without a scope to run.
type Unplanned struct {
	Claim  string `json:"claim"`
	Reason string `json:"reason"`
}

// decideClock is the clock a run deciding the claim uses: the scope's
// only clock; else icount:0 where the scope allows icount and the kind
// is not decided across two profiles (two guests' icount clocks are not
// one clock); else host.
func (s *spec) decideClock() string {
	cl := s.scope().Clocks
	switch {
	case len(cl) == 1 && cl[0] == contract.ClockHost:
		return "host"
	case len(cl) == 1 && cl[0] == contract.ClockIcount:
		return "icount:0"
	case !s.across && (len(cl) == 0 || slices.Contains(cl, contract.ClockIcount)):
		return "icount:0"
	}
	return "host"
}

// MinRepeats is the fewest repeats with which c's rule can decide, from
// the number of tests it makes (its bounds times its points, as the
// kinds count them) at alpha under Holm: the signed-rank test's 2^-n, the
// rank-sum test's 1/C(2n, n). A crash needs MinCrashRuns a point; an
// untestable claim none. The judge says so when a run falls short (a
// Decision's Need), and `lab reproduce` repeats from that.
func MinRepeats(c *results.Claim) int {
	s := newSpec(c, nil)
	return s.kind.minRepeats(s)
}

// DecidingRuns are the runs that decide c, one a profile and build (the
// scope's Builds, the default build without the parameter): its deciding
// profiles (with Scope.Variants and variants, each variant too, its own
// stratum), its experiment, the scope's parameters and those its runs
// are made with (Scope.Run), the points of its sweep key, its clock
// (decideClock) and MinRepeats. variants lists each profile's
// variants (nil: none run). A claim untestable here, or without a scope,
// has no runs; Unplanned says why.
func DecidingRuns(c *results.Claim, variants map[string][]string) ([]Run, *Unplanned) {
	s := newSpec(c, nil)
	if u, ok := s.kind.(unjudged); ok {
		return nil, &Unplanned{c.ID, u.unplanned(c)}
	}
	switch {
	case c.Scope == nil:
		return nil, &Unplanned{c.ID, "no scope: it says nothing of the runs that decide it"}
	}
	profiles := s.decidingProfiles()
	if len(profiles) == 0 && c.Profile != "" {
		profiles = []string{c.Profile}
	}
	if len(profiles) == 0 {
		return nil, &Unplanned{c.ID, "its scope names no profile to run on"}
	}
	if c.Scope.Variants {
		var all []string
		for _, p := range profiles {
			all = append(all, p)
			all = append(all, variants[p]...)
		}
		profiles = all
	}
	params := map[string]string{}
	for k, v := range c.Scope.Params {
		if k != s.pointKey {
			params[k] = v
		}
	}
	for k, v := range c.Scope.Run {
		if k != s.pointKey {
			params[k] = v
		}
	}
	// Each build the scope names is a run of its own (a stratum); the
	// default build is the run without the parameter.
	builds := c.Scope.Builds
	if len(builds) == 0 {
		builds = []string{contract.DefaultBuild}
	}
	var runs []Run
	for _, p := range profiles {
		for _, b := range builds {
			ps := params
			if b != contract.DefaultBuild {
				ps = maps.Clone(params)
				ps[contract.ParamBuild] = b
			}
			r := Run{Plugin: c.Plugin, Experiment: c.Bench, Profile: p, Clock: s.decideClock(), Params: ps,
				Repeat: max(MinRepeats(c), 1), Claims: []string{c.ID}}
			if pts := s.hintPoints(nil); s.pointKey != "" && len(pts) > 0 {
				r.SweepKey, r.Points = s.pointKey, slices.Clone(pts)
			}
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// Plan is the fewest runs that decide cs: DecidingRuns of each, runs of
// one Key merged (points joined, the most repeats); sorted by key. The
// claims no run decides are in Unplanned, in the order of cs.
func Plan(cs []results.Claim, variants map[string][]string) ([]Run, []Unplanned) {
	byKey := map[string]*Run{}
	var un []Unplanned
	for i := range cs {
		runs, u := DecidingRuns(&cs[i], variants)
		if u != nil {
			un = append(un, *u)
			continue
		}
		for _, r := range runs {
			k := r.Key()
			m, ok := byKey[k]
			if !ok {
				byKey[k] = &r
				continue
			}
			m.Repeat = max(m.Repeat, r.Repeat)
			m.Claims = append(m.Claims, r.Claims...)
			m.Points = append(m.Points, r.Points...)
		}
	}
	var out []Run
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		r := *byKey[k]
		slices.SortFunc(r.Claims, CompareIDs)
		r.Claims = slices.Compact(r.Claims)
		slices.SortFunc(r.Points, comparePoints)
		r.Points = slices.CompactFunc(r.Points, samePoint)
		out = append(out, r)
	}
	// A profile's runs before its variants' ("celeron-2.4" before
	// "celeron-2.4-era").
	slices.SortStableFunc(out, func(a, b Run) int {
		return cmp.Or(cmp.Compare(a.Profile, b.Profile), cmp.Compare(a.Key(), b.Key()))
	})
	return out, un
}

// Select is the claims of cs that ids name: an id (case aside), a
// compound id (its parts), an experiment id ("E1": every claim of it),
// or "all". An id that names none is an error listing the ids.
func Select(cs []results.Claim, ids []string) ([]results.Claim, error) {
	if len(ids) == 0 {
		ids = []string{"all"}
	}
	var out []results.Claim
	seen := map[string]bool{}
	add := func(c results.Claim) {
		k := c.Plugin + "\x00" + c.ID
		if !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	for _, id := range ids {
		n := len(out)
		for _, c := range cs {
			if strings.EqualFold(id, "all") || strings.EqualFold(c.ID, id) || strings.EqualFold(c.PartOf, id) ||
				strings.EqualFold(experimentOf(c.ID), id) {
				add(c)
			}
		}
		if len(out) == n && !slices.ContainsFunc(cs, func(c results.Claim) bool { return strings.EqualFold(c.ID, id) }) {
			var names []string
			for _, c := range cs {
				names = append(names, c.ID)
			}
			slices.SortFunc(names, CompareIDs)
			return nil, fmt.Errorf("no claim %q: give a claim id (%s), an experiment (E1..E5) or all; `lab claims` lists them",
				id, strings.Join(slices.Compact(names), ", "))
		}
	}
	slices.SortStableFunc(out, func(a, b results.Claim) int { return CompareIDs(a.ID, b.ID) })
	return out, nil
}

// experimentOf is the experiment a claim id belongs to: "E1" of "E1.2a".
func experimentOf(id string) string {
	e, _, _ := strings.Cut(id, ".")
	return e
}
