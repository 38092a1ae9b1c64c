package claims

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"lab/plugins/contract"
	"lab/results"
)

// ProfileInfo is what the judge needs to know of a profile.
type ProfileInfo struct {
	// VariantOf is the profile whose machine this one is, on another
	// kernel (images.Profile.VariantOf).
	VariantOf string
	// Calibration is the profile's speed for absolute times under
	// icount; a variant's is its base's (the caller resolves that).
	Calibration *contract.Calibration
	// Kernel, for a variant, is what its kernel is instead of the
	// original's (its profile's "kernel: ..." difference): a claim's
	// fidelity note is written for the base profile's kernel, and a
	// verdict a variant decided says which kernel that was.
	Kernel string
	// Console is the profile's console kind (images.Profile.ConsoleKind:
	// serial, vga, fb): strata of profiles whose consoles differ are
	// console strata, and a claim they decide both ways is
	// console-dependent.
	Console string
}

// Profiles are the profiles the judge knows, by name. A profile missing
// from it has no variant_of and no calibration.
type Profiles map[string]ProfileInfo

// Options say which in-scope runs decide a claim.
type Options struct {
	// All uses every in-scope run, not only the latest run of each
	// cell.
	All bool
}

// A claim's scope (docs/proposals/verdicts.md §3) says which stored runs
// may decide it. A run is in scope when
//   - its plugin and experiment are the claim's (an empty Plugin or
//     Bench in the claim matches any);
//   - its profile (results.ProfileName) is one of Scope.Profiles, or,
//     with Scope.Variants, a profile whose variant_of is one of them
//     (Profiles says which). A kind across two profiles (speedup,
//     equivalence with a baseline) takes its rule's two profiles, and
//     with Scope.Variants their variants; no Scope.Profiles: any profile;
//   - its clock's kind (host, or icount for icount:N) is one of
//     Scope.Clocks (none: any);
//   - its plugin version is Scope.MinPluginVersion or later, compared as
//     semantic versions (a run that recorded none is older);
//   - every parameter of Scope.Params has that value in the run (the
//     engine records every parameter, defaults included; numbers compare
//     as numbers, so 8192 is 8192.0; a parameter the run did not record
//     is not the scope's);
//   - it ended: a failed or interrupted run decides nothing. An
//     expected crash is evidence (of a crash claim above all).
//
// A swept run is judged point by point: each point has its own outcome
// and its own parameters (the run's, with the point's values), and only
// its points in scope are evidence; a point's value of Scope.Sweep.Key
// must be one of Scope.Sweep.Points (none: any). A run with no point in
// scope is out of scope, with each point's reason.
//
// Of the runs in scope only the latest of each cell decides, unless
// Options.All: a cell is the profile, kernel, clock, accelerator, the
// parameters the point ran with (the repeat count and the claim's sweep
// key aside) and the point. The latest is the greatest Finished, ties
// broken by the greatest ID: what the documents say, never their file
// names or the order they were read in. With it decide the runs it adds
// its repeats to (Result.AddTo, addedTo): more repeats of a cell, run
// later, pool with the ones before them, each run's repeats keyed by its
// own ID so that nothing pairs across runs. Runs that share an ID are one
// run (a copy of a file). A run (or point) without a sample of a metric
// the claim's rule reads is no evidence of it, and is listed as such.
//
// A kind across two profiles pairs nothing: each side's in-scope runs
// are pooled at each point of the claim's sweep key, so the parameters
// that must agree between the sides are the scope's Params.

// spec is a claim with what judging it needs, derived once.
type spec struct {
	c        *results.Claim
	kind     kind
	profiles Profiles
	// pointKey is the sweep key or label the claim is decided over: its
	// kind's own (a crossover's or trend's sweep, a crash's parameter),
	// else its scope's sweep key; "" for none.
	pointKey string
	// across: a kind decided between two profiles' runs, base (the
	// baseline) and other.
	across      bool
	base, other string
}

func newSpec(c *results.Claim, profiles Profiles) *spec {
	s := &spec{c: c, profiles: profiles, kind: kindOf(c)}
	s.pointKey = s.kind.pointKey()
	if s.pointKey == "" && c.Scope != nil && c.Scope.Sweep != nil {
		s.pointKey = c.Scope.Sweep.Key
	}
	s.base, s.other, s.across = s.kind.across()
	return s
}

// AcrossProfiles says whether c is decided between two profiles' runs
// (a speedup, an equivalence with a baseline): a run's own verdict on it
// takes the other profile's runs from the store.
func AcrossProfiles(c *results.Claim) bool { return newSpec(c, nil).across }

// DecidingProfiles are the profiles whose runs decide c: its scope's, or
// for a kind across two profiles the rule's two (base first); nil: any.
// With the scope's Variants their era variants decide too.
func DecidingProfiles(c *results.Claim) []string { return newSpec(c, nil).decidingProfiles() }

func (s *spec) decidingProfiles() []string {
	if s.across {
		return []string{s.base, s.other}
	}
	return slices.Clone(s.scope().Profiles)
}

func (s *spec) scope() *contract.Scope {
	if s.c.Scope == nil {
		return &contract.Scope{}
	}
	return s.c.Scope
}

func (s *spec) sweep() *contract.ScopeSweep {
	if sw := s.scope().Sweep; sw != nil {
		return sw
	}
	return &contract.ScopeSweep{}
}

// ofClaim says whether r is a run of the claim's plugin and experiment.
func (s *spec) ofClaim(r *results.Result) bool {
	return (s.c.Plugin == "" || r.Plugin == s.c.Plugin) && (s.c.Bench == "" || r.Experiment == s.c.Bench)
}

// unit is one run, or one point of a swept run, as evidence of a claim.
type unit struct {
	run *results.Result
	// labels are the sweep point's labels (its samples carry them); nil
	// for a run without a sweep.
	labels map[string]string
	// params are the parameters it ran with (the point's), the repeat
	// count aside.
	params map[string]string
	// key is the evidence key's Run: the run's id, with the point's
	// labels other than the claim's sweep key, so that every value of a
	// run has its own key.
	key                           string
	profile, clock, accel, kernel string
	// build is the workload build it ran (contract.ParamBuild).
	build string
	// point is the unit's value of the claim's sweep key, "" if it is
	// not a parameter.
	point string
}

// side is which of an across kind's two profiles p stands for: base,
// other, or "" for neither; variant says p is a variant of it.
func (s *spec) side(p string) (side string, variant bool) {
	v := s.profiles[p].VariantOf
	switch {
	case p == s.base:
		return s.base, false
	case p == s.other:
		return s.other, false
	case v != "" && v == s.base:
		return s.base, true
	case v != "" && v == s.other:
		return s.other, true
	}
	return "", false
}

// profileOut says why profile p is out of the claim's scope, "" if it
// is in.
func (s *spec) profileOut(p string) string {
	sc := s.scope()
	allowed := s.decidingProfiles()
	if len(allowed) == 0 {
		return ""
	}
	if slices.Contains(allowed, p) {
		return ""
	}
	base := s.profiles[p].VariantOf
	if sc.Variants && base != "" && slices.Contains(allowed, base) {
		return ""
	}
	names := joinAnd(allowed)
	switch {
	case sc.Variants && len(allowed) == 1:
		names += " and its variants"
	case sc.Variants:
		names += " and their variants"
	case base != "" && slices.Contains(allowed, base):
		names += "; a variant is in scope only when the scope says variants"
	}
	return fmt.Sprintf("profile %s not in scope (%s)", results.OrUnknown(p), names)
}

// runOut says why run r is out of the claim's scope as a whole (its
// profile, clock, plugin version, or a parameter or outcome that is the
// same at every point), "" if none of these puts it out.
func (s *spec) runOut(r *results.Result) string {
	sc := s.scope()
	if why := s.profileOut(results.ProfileName(r.Machine)); why != "" {
		return why
	}
	if len(sc.Clocks) > 0 && !slices.Contains(sc.Clocks, clockKind(r.Machine.Clock)) {
		return fmt.Sprintf("clock %s not in scope (%s only)", results.OrUnknown(r.Machine.Clock), strings.Join(sc.Clocks, " and "))
	}
	if min := sc.MinPluginVersion; min != "" {
		if r.PluginVersion == "" {
			return fmt.Sprintf("no plugin version recorded, scope needs %s or later", min)
		}
		if c, ok := compareVersions(r.PluginVersion, min); !ok {
			return fmt.Sprintf("plugin version %s is not a version, scope needs %s or later", r.PluginVersion, min)
		} else if c < 0 {
			return fmt.Sprintf("plugin version %s older than %s, the scope's minimum", r.PluginVersion, min)
		}
	}
	var swept []string
	if r.Sweep != nil {
		swept = r.Sweep.Keys()
	} else if why := statusOut(r.Outcome.Status, r.Outcome.Reason, "the run"); why != "" {
		return why
	}
	params := paramsOf(r, nil)
	for _, k := range results.SortedKeys(sc.Params) {
		if !slices.Contains(swept, k) {
			if why := paramOut(params, k, sc.Params[k]); why != "" {
				return why
			}
		}
	}
	builds := sc.Builds
	if len(builds) == 0 {
		builds = []string{contract.DefaultBuild}
	}
	if b := results.BuildOf(params); !slices.Contains(builds, b) {
		return fmt.Sprintf("build %s not in scope (%s)", b, strings.Join(builds, ", "))
	}
	// A run whose samples carry the sweep key as a label (mode=both
	// measures mode=process and mode=thread) has its points in the
	// samples, filtered there; else its parameter is its one point.
	if k := s.sweep().Key; k != "" && !slices.Contains(swept, k) && !labelled(r, k) {
		if v, ok := params[k]; ok {
			if why := s.pointOut(v); why != "" {
				return why
			}
		}
	}
	return ""
}

// labelled says whether some sample of r carries label k.
func labelled(r *results.Result, k string) bool {
	return slices.ContainsFunc(r.Samples, func(x results.Sample) bool { _, ok := x.Labels[k]; return ok })
}

// statusOut says why an outcome (of a run, or of a point: what names
// it) puts it out of scope: it failed, was interrupted or never ran.
func statusOut(status, reason, what string) string {
	switch status {
	case "", contract.StatusOK, contract.StatusExpectedCrash:
		return ""
	case results.StatusInterrupted:
		return what + " was interrupted"
	case results.PointNotRun:
		return what + " did not run"
	}
	why := what + " " + status
	if line, _, _ := strings.Cut(reason, "\n"); line != "" {
		why += ": " + line
	}
	return why
}

// paramOut says why parameters params are not the scope's k=want.
func paramOut(params map[string]string, k, want string) string {
	got, ok := params[k]
	switch {
	case !ok:
		return fmt.Sprintf("%s not recorded, scope needs %s=%s", k, k, want)
	case !samePoint(got, want):
		return fmt.Sprintf("%s=%s, scope needs %s=%s", k, got, k, want)
	}
	return ""
}

// pointOut says why the value v of the scope's sweep key is out of
// scope: not one of its points.
func (s *spec) pointOut(v string) string {
	sw := s.sweep()
	if len(sw.Points) == 0 || slices.ContainsFunc(sw.Points, func(p string) bool { return samePoint(p, v) }) {
		return ""
	}
	return fmt.Sprintf("%s=%s not among the scope's points (%s)", sw.Key, v, strings.Join(sw.Points, ", "))
}

// samePoint says whether two parameter values are the same: equal, or
// equal numbers.
func samePoint(a, b string) bool {
	if a == b {
		return true
	}
	fa, ea := strconv.ParseFloat(a, 64)
	fb, eb := strconv.ParseFloat(b, 64)
	return ea == nil && eb == nil && fa == fb
}

// paramsOf is the parameters a run (at a point with labels) ran with,
// without the repeat count.
func paramsOf(r *results.Result, labels map[string]string) map[string]string {
	p := maps.Clone(r.Parameters)
	if p == nil {
		p = map[string]string{}
	}
	maps.Copy(p, labels)
	delete(p, "repeat")
	return p
}

// unitsOf are r's units in the claim's scope, and why each other one is
// not (sorted). r passed runOut.
func (s *spec) unitsOf(r *results.Result) ([]*unit, []string) {
	type pt struct {
		labels         map[string]string
		status, reason string
		what           string
	}
	var pts []pt
	if r.Sweep == nil {
		pts = []pt{{status: contract.StatusOK}} // the run's outcome passed runOut
	} else {
		for _, p := range r.Sweep.Points {
			pts = append(pts, pt{labels: p.Labels, status: p.Status, reason: p.Reason, what: "point " + results.FormatLabels(p.Labels)})
		}
	}
	sc := s.scope()
	var in []*unit
	var out []string
	for _, p := range pts {
		params := paramsOf(r, p.labels)
		why := statusOut(p.status, p.reason, p.what)
		for _, k := range results.SortedKeys(sc.Params) {
			if _, swept := p.labels[k]; swept && why == "" {
				why = paramOut(params, k, sc.Params[k])
			}
		}
		if k := s.sweep().Key; k != "" && why == "" {
			if v, swept := p.labels[k]; swept {
				why = s.pointOut(v)
			}
		}
		if why != "" {
			out = append(out, why)
			continue
		}
		rest := maps.Clone(p.labels)
		delete(rest, s.pointKey)
		in = append(in, &unit{run: r, labels: p.labels, params: params, key: r.ID + results.LabelSuffix(rest),
			profile: results.ProfileName(r.Machine), clock: r.Machine.Clock, accel: r.Machine.Accelerator, kernel: r.Machine.KernelID,
			build: results.BuildOf(params), point: params[s.pointKey]})
	}
	slices.Sort(out)
	return in, slices.Compact(out)
}

// cell is the key of the cell a unit is a run of.
func (s *spec) cell(u *unit) string {
	p := maps.Clone(u.params)
	delete(p, s.pointKey)
	return strings.Join([]string{u.profile, u.kernel, u.clock, u.accel, results.LabelKey(p), u.point}, "\x00")
}

// inScope sorts runs into the units of the claim that decide it (the
// latest of each cell, or all with opt.All) and the runs of its plugin
// and experiment that do not, each with why (sorted by run).
func (s *spec) inScope(runs []*results.Result, opt Options) ([]*unit, []results.RunReason) {
	var out []results.RunReason
	var units []*unit
	for _, r := range distinct(runs) {
		if !s.ofClaim(r) {
			continue
		}
		if why := s.runOut(r); why != "" {
			out = append(out, results.RunReason{Run: r.ID, Reason: why})
			continue
		}
		in, whys := s.unitsOf(r)
		if len(in) == 0 {
			out = append(out, results.RunReason{Run: r.ID, Reason: "no point in scope: " + strings.Join(whys, "; ")})
			continue
		}
		if in = slices.DeleteFunc(in, func(u *unit) bool { return !s.measures(u) }); len(in) == 0 {
			at := ""
			if run := s.scope().Run; len(run) > 0 {
				at = " at " + results.FormatLabels(run)
			}
			out = append(out, results.RunReason{Run: r.ID, Reason: "no samples of " + joinOr(s.metrics()) + at + " in scope"})
			continue
		}
		units = append(units, in...)
	}
	if !opt.All {
		latest := map[string]*unit{}
		byRun := map[string]map[string]*unit{} // cell, run ID
		for _, u := range units {
			k := s.cell(u)
			if l, ok := latest[k]; !ok || results.Later(u.run, l.run) {
				latest[k] = u
			}
			if byRun[k] == nil {
				byRun[k] = map[string]*unit{}
			}
			byRun[k][u.run.ID] = u
		}
		decides := map[*unit]bool{}
		for k, l := range latest {
			for _, u := range addedTo(l, byRun[k]) {
				decides[u] = true
			}
		}
		kept := map[string]bool{}
		by := map[string][]string{}
		for _, u := range units {
			if decides[u] {
				kept[u.run.ID] = true
			} else {
				by[u.run.ID] = append(by[u.run.ID], latest[s.cell(u)].run.ID)
			}
		}
		units = slices.DeleteFunc(units, func(u *unit) bool { return !decides[u] })
		for _, id := range slices.Sorted(maps.Keys(by)) {
			if !kept[id] {
				newer := slices.Compact(slices.Sorted(slices.Values(by[id])))
				out = append(out, results.RunReason{Run: id, Reason: fmt.Sprintf("a later run of the same cell decides it (%s; --all uses every run)", strings.Join(newer, ", "))})
			}
		}
	}
	slices.SortFunc(units, func(a, b *unit) int { return cmp.Compare(a.key, b.key) })
	slices.SortFunc(out, func(a, b results.RunReason) int {
		return cmp.Or(cmp.Compare(a.Run, b.Run), cmp.Compare(a.Reason, b.Reason))
	})
	return units, out
}

// addedTo is the units that decide a cell whose latest unit is l: l,
// and the runs l adds its repeats to (Result.AddTo), one after another,
// while each is a run of the cell (in cell, by run ID) that finished
// before the one adding to it. A run added to that is not in the cell,
// or not earlier, ends the chain: l's repeats are then judged without it.
func addedTo(l *unit, cell map[string]*unit) []*unit {
	out := []*unit{l}
	for u := l; u.run.AddTo != ""; {
		prev, ok := cell[u.run.AddTo]
		if !ok || !results.Later(u.run, prev.run) || prev.run.PluginVersion != u.run.PluginVersion {
			break
		}
		out = append(out, prev)
		u = prev
	}
	return out
}

// distinct is runs sorted by ID, one of each ID: a copy of a result
// file is the same run. Of two documents with one ID the later
// (Finished) is kept.
func distinct(runs []*results.Result) []*results.Result {
	out := slices.Clone(runs)
	slices.SortStableFunc(out, func(a, b *results.Result) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), b.Finished.Compare(a.Finished), cmp.Compare(len(b.Samples), len(a.Samples)))
	})
	return slices.CompactFunc(out, func(a, b *results.Result) bool { return a.ID == b.ID })
}

// compareVersions compares two semantic versions ("1.2.3", "v0.2.0",
// "1.0.0-rc1"): a missing minor or patch is 0, a pre-release is older
// than its release. ok is false if either is not a version.
func compareVersions(a, b string) (int, bool) {
	pa, ok1 := parseVersion(a)
	pb, ok2 := parseVersion(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	for i := range 3 {
		if c := cmp.Compare(pa.n[i], pb.n[i]); c != 0 {
			return c, true
		}
	}
	switch {
	case pa.pre == pb.pre:
		return 0, true
	case pa.pre == "":
		return 1, true
	case pb.pre == "":
		return -1, true
	}
	return strings.Compare(pa.pre, pb.pre), true
}

type version struct {
	n   [3]int
	pre string
}

func parseVersion(s string) (version, bool) {
	var v version
	s = strings.TrimPrefix(s, "v")
	s, _, _ = strings.Cut(s, "+")
	s, v.pre, _ = strings.Cut(s, "-")
	parts := strings.Split(s, ".")
	if len(parts) > 3 || s == "" {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v.n[i] = n
	}
	return v, true
}

// metrics are the metrics the claim's rule reads; none for a crash
// claim (its evidence is how runs ended).
func (s *spec) metrics() []string {
	var m []string
	if r := s.c.Rule(); r != nil {
		m = slices.Clone(r.Metrics())
	}
	m = slices.DeleteFunc(m, func(x string) bool { return x == "" })
	slices.Sort(m)
	return slices.Compact(m)
}

// measures says whether unit u holds evidence of the claim: a sample of
// a metric its rule reads (a crash claim's, or one whose rule names no
// metric lab knows: any unit).
func (s *spec) measures(u *unit) bool {
	ms := s.metrics()
	if s.kind.evidence() == fromEndings || len(ms) == 0 {
		return true
	}
	some := false
	labelled, has := map[string]bool{}, map[string]bool{}
	for _, smp := range u.run.Samples {
		if !slices.Contains(ms, smp.Metric) || !results.HasLabels(smp.Labels, u.labels) {
			continue
		}
		some = true
		for k, want := range s.scope().Run {
			if v, ok := smp.Labels[k]; ok {
				labelled[k] = true
				has[k] = has[k] || samePoint(v, want)
			}
		}
	}
	// A run made with another value of a run parameter (Scope.Run) whose
	// samples carry it as a label holds none the rule reads: a run of
	// the pty alone, for a claim on null.
	for k := range labelled {
		if !has[k] {
			return false
		}
	}
	return some
}

// joinOr is "a", "a or b", "a, b or c".
func joinOr(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
