package claims

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"lab/plugins/contract"
	"lab/results"
)

// A claim's verdict (docs/proposals/verdicts.md §5) comes from every
// in-scope sample (scope.go), decided apart in each stratum: a profile
// (its kernel is part of it: an era variant is its own profile), a clock
// ("host", "icount:0") and an accelerator; for a kind across two
// profiles, a clock and an accelerator with "baseline vs profile".
// Strata are never pooled, and are listed sorted by profile, clock and
// accelerator. The headline:
//  1. an untestable claim is untestable here, whatever was run: the
//     reason names the property and quotes the median of what was
//     measured instead in each stratum (or says it was not measured);
//  2. else a stratum reproduced and another not reproduced: dependent
//     on what such strata differ in (results.Dependent): clock-dependent
//     when only in clock (or accelerator), console-dependent when in
//     profiles whose consoles differ (fbcon and vgacon: E3's strata),
//     kernel-dependent when in profiles of one console (the profiles of
//     one scope are one machine and its variants), and each combination
//     ("clock- and kernel-dependent"); the reason lists every stratum,
//     with its figures;
//  3. else a stratum reproduced or not reproduced: that verdict, with
//     the other strata listed;
//  4. else a stratum inconclusive: inconclusive;
//  5. else every stratum not comparable: not comparable;
//  6. else (no stratum, or an across kind lacking one side): not run.
//
// Within a stratum a required point missing (the scope's
// Sweep.Required, a crossover's band edges) makes a verdict other than
// not reproduced inconclusive, naming the point and a command that runs
// it. A claim true by construction keeps its verdict, and its reason
// starts "by construction (why): "; a claim's fidelity note ends every
// reason but a not run's (" Fidelity: ...").

// ClaimStatus is a claim with its verdict from the stored runs.
type ClaimStatus struct {
	Claim results.Claim `json:"claim"`
	Rule  string        `json:"rule"`
	// Verdict is the headline, Judged.Verdict.
	Verdict string `json:"verdict"`
	// Judged is the headline verdict with its strata, reason, runs, the
	// runs out of scope, fidelity and by-construction note.
	Judged results.Verdict `json:"judged"`
}

// JudgeStore decides each claim of cs from the runs of store in its
// scope (the latest of each cell unless opt.All), in the order of cs.
// The same set of runs gives the same statuses whatever their order.
func JudgeStore(cs []results.Claim, store []*results.Result, profiles Profiles, opt Options) []ClaimStatus {
	out := make([]ClaimStatus, len(cs))
	for i := range cs {
		c := cs[i]
		v := judgeClaim(&c, store, profiles, opt, "")
		out[i] = ClaimStatus{Claim: c, Rule: v.Rule, Verdict: v.Verdict, Judged: v}
	}
	return out
}

// Judge records in r its own verdicts (its summary): one for each claim
// of cs of r's plugin and experiment, from r's evidence only, and that
// of the runs of store r adds its repeats to (Result.AddTo, one after
// another, each of r's cell: the judge pools them); a kind across two
// profiles (a speedup, an equivalence with a baseline) also takes the
// in-scope runs of store on the other profile (the latest of each
// cell). A swept run is one result with every point. A verdict's
// OutOfScope names r alone, if r is out of scope.
func Judge(r *results.Result, cs []results.Claim, store []*results.Result, profiles Profiles) {
	r.Verdicts = nil
	here := results.ProfileName(r.Machine)
	byID := map[string]*results.Result{}
	for _, o := range store {
		byID[o.ID] = o
	}
	var added []*results.Result
	seen := map[string]bool{r.ID: true}
	for id := r.AddTo; id != "" && !seen[id] && byID[id] != nil && results.CellKey(byID[id]) == results.CellKey(r); id = byID[id].AddTo {
		seen[id] = true
		added = append(added, byID[id])
	}
	for i := range cs {
		c := &cs[i]
		s := newSpec(c, profiles)
		if !s.ofClaim(r) {
			continue
		}
		runs := append([]*results.Result{r}, added...)
		if s.across {
			for _, o := range store {
				if o.ID != r.ID && s.ofClaim(o) && results.ProfileName(o.Machine) != here {
					runs = append(runs, o)
				}
			}
		}
		r.Verdicts = append(r.Verdicts, judgeClaim(c, runs, profiles, Options{}, r.ID))
	}
}

// decided is a stratum's verdict and its numbers in brief ("5.02x, p
// 0.016"), for the headline.
type decided struct {
	results.Stratum
	brief string
}

// judgeClaim decides c from runs; own, if set, is the run whose own
// verdict this is (only its reason is kept among those out of scope).
func judgeClaim(c *results.Claim, runs []*results.Result, profiles Profiles, opt Options, own string) results.Verdict {
	s := newSpec(c, profiles)
	units, out := s.inScope(runs, opt)
	if own != "" {
		out = slices.DeleteFunc(out, func(rr results.RunReason) bool { return rr.Run != own })
	}
	v := results.Verdict{Claim: c.ID, PartOf: c.PartOf, Kind: c.Kind, Statement: c.Statement, Rule: RuleText(c),
		ByConstruction: c.ByConstruction, Fidelity: c.Fidelity, OutOfScope: out}
	if v.Kind == "" {
		v.Kind = c.Claim.Kind()
	}
	var ds []decided
	for _, st := range s.strata(units) {
		d := s.decideStratum(st)
		ds = append(ds, d)
		v.Strata = append(v.Strata, d.Stratum)
	}
	v.Runs = runIDs(units)
	v.Verdict, v.Reason, v.Numbers = s.headline(ds, out, own)
	if c.ByConstruction != "" && v.Verdict != results.NotRun {
		v.Reason = "by construction (" + c.ByConstruction + "): " + v.Reason
	}
	// A claim no run decided has nothing to qualify: its reason says
	// which runs would, and the fidelity note stays in Fidelity.
	if c.Fidelity != "" && v.Verdict != results.NotRun {
		v.Reason = strings.TrimRight(v.Reason, ". ") + ". Fidelity: " + c.Fidelity
	}
	// The fidelity note is written for the claim's own profiles; a
	// variant's stratum ran another kernel, and says which.
	if v.Verdict != results.NotRun {
		seen := map[string]bool{}
		for _, d := range ds {
			if k := profiles[d.Profile].Kernel; k != "" && !seen[d.Profile] && d.Verdict != results.NotRun {
				seen[d.Profile] = true
				v.Reason = strings.TrimRight(v.Reason, ". ") + ". On " + d.Profile + " the kernel is " + k
			}
		}
	}
	v.Reason = oneLine(v.Reason)
	return v
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// decideStratum decides the claim on one stratum's evidence.
func (s *spec) decideStratum(st *stratum) decided {
	out := results.Stratum{Profile: st.profile, Kernel: kernelOf(st.units), Clock: st.clock, Accelerator: st.accel, Runs: runIDs(st.units)}
	if len(s.scope().Builds) > 0 {
		out.Build = st.build
	}
	if u, ok := s.kind.(unjudged); ok {
		out.Verdict = results.Untestable
		b := u.instead(s, st)
		out.Reason = "measured instead: " + b
		return decided{out, b}
	}
	var d Decision
	switch {
	case s.across && (len(st.base) == 0 || len(st.other) == 0):
		lack := s.other
		if len(st.base) == 0 {
			lack = s.base
		}
		d = Decision{Verdict: results.NotRun, Reason: fmt.Sprintf("needs an in-scope run on %s under %s too (run `%s`)", lack,
			results.OrUnknown(st.clock), s.hint([]string{lack}, st.clock, s.hintPoints(nil)))}
	default:
		d = s.kind.decide(s, st)
		if missing := s.missing(st); len(missing) > 0 && d.Verdict != results.NotReproduced && d.Verdict != results.NotComparable {
			d.Verdict = results.Inconclusive
			d.Reason = fmt.Sprintf("no in-scope run at %s=%s, %s (run `%s`); %s", s.pointKey, strings.Join(missing, ","),
				plural(len(missing), "a required point", "required points"), s.hint(st.profiles, st.clock, s.hintPoints(s.pointsOf(st.units))), d.Reason)
		}
	}
	d = refuseNonFinite(d)
	out.Verdict, out.Reason, out.Numbers = d.Verdict, oneLine(d.Reason), d.Numbers
	return decided{out, brief(d)}
}

// refuseNonFinite is d unless one of its numbers is not a finite number
// (NaN, ±Inf: finite samples far apart, 1e308 ms over 1e-300 ms, overflow
// a ratio): then no measurement lab can stand behind made it, and the
// stratum is inconclusive, saying which number, with the finite numbers
// kept.
func refuseNonFinite(d Decision) Decision {
	var bad []string
	var kept []results.Number
	for _, n := range d.Numbers {
		if math.IsNaN(n.Value) || math.IsInf(n.Value, 0) {
			bad = append(bad, fmt.Sprintf("%s is %v", n.Name, n.Value))
			continue
		}
		kept = append(kept, n)
	}
	if bad == nil {
		return d
	}
	return Decision{Verdict: results.Inconclusive, Numbers: kept, Need: d.Need,
		Reason: fmt.Sprintf("refused: %s, not a finite number: samples this far apart are not a measurement to decide from (check the runs' samples)", strings.Join(bad, "; "))}
}

// required are the points the claim cannot be decided without: the
// scope's Sweep.Required (over the claim's sweep key) and a crossover's
// band edges.
func (s *spec) required() []string {
	var req []string
	if sw := s.sweep(); sw.Key == s.pointKey {
		req = append(req, sw.Required...)
	}
	req = append(req, s.kind.required()...)
	slices.SortFunc(req, comparePoints)
	return slices.CompactFunc(req, samePoint)
}

// missing are the required points a stratum has no evidence at.
func (s *spec) missing(st *stratum) []string {
	req := s.required()
	if len(req) == 0 {
		return nil
	}
	have := s.pointsOf(st.units)
	var out []string
	for _, p := range req {
		if !slices.ContainsFunc(have, func(h string) bool { return samePoint(h, p) }) {
			out = append(out, p)
		}
	}
	return out
}

// hintPoints are the sweep points a command that decides the claim
// runs: the scope's points, else the required ones and those run.
func (s *spec) hintPoints(have []string) []string {
	if sw := s.sweep(); sw.Key == s.pointKey && len(sw.Points) > 0 {
		return sw.Points
	}
	pts := append(s.required(), have...)
	slices.SortFunc(pts, comparePoints)
	return slices.CompactFunc(pts, samePoint)
}

// hint is a command that runs what the claim needs on profiles under
// clock (either may be empty) at points of its sweep key.
func (s *spec) hint(profiles []string, clock string, points []string) string {
	plugin, bench := s.c.Plugin, s.c.Bench
	if plugin == "" {
		plugin = "PLUGIN"
	}
	if bench == "" {
		bench = "EXPERIMENT"
	}
	b := "lab run " + plugin + " -e " + bench
	for _, p := range profiles {
		b += " --profile " + p
	}
	if clock != "" {
		b += " --clock " + clock
	}
	params := maps.Clone(s.scope().Params)
	if params == nil {
		params = map[string]string{}
	}
	maps.Copy(params, s.scope().Run)
	for _, k := range results.SortedKeys(params) {
		if k != s.pointKey {
			b += " -p " + k + "=" + params[k]
		}
	}
	if s.pointKey != "" && len(points) > 0 {
		b += " --sweep " + s.pointKey + "=" + strings.Join(points, ",")
	}
	return b
}

func withSpace(unit string) string {
	if unit == "" || unit == "x" {
		return unit
	}
	return " " + unit
}

// brief is a decision's deciding numbers in brief: its first median or
// ratio, and the p-value that decided it ("5.02x, p 0.016").
func brief(d Decision) string {
	var parts []string
	for _, n := range d.Numbers {
		if strings.HasPrefix(n.Name, "median ") || strings.HasPrefix(n.Name, "ratio of medians") {
			parts = append(parts, results.FormatValue(n.Value)+withSpace(n.Unit))
			break
		}
	}
	p := -1.0
	switch d.Verdict {
	case results.NotReproduced:
		if t, ok := strongest(d.Tests, true); ok {
			p = t.P
		}
	case results.Reproduced:
		for _, t := range d.Tests {
			if !t.Refutes && t.P > p {
				p = t.P
			}
		}
	}
	if p >= 0 {
		parts = append(parts, "p "+formatP(p))
	}
	return strings.Join(parts, ", ")
}

// labels name each stratum in a headline by what differs between them:
// "host" and "icount:0" when only the clock does; the profile and clock
// of a stratum alone.
func labels(ds []decided) []string {
	vary := [4]bool{}
	for _, d := range ds[1:] {
		vary[0] = vary[0] || d.Profile != ds[0].Profile
		vary[1] = vary[1] || d.Clock != ds[0].Clock
		vary[2] = vary[2] || d.Accelerator != ds[0].Accelerator
		vary[3] = vary[3] || d.Build != ds[0].Build
	}
	if len(ds) == 1 {
		vary = [4]bool{true, true, ds[0].Accelerator != "tcg", false}
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		var parts []string
		for j, f := range []string{d.Profile, d.Clock, d.Accelerator, "build " + d.Build} {
			if vary[j] {
				parts = append(parts, results.OrUnknown(f))
			}
		}
		out[i] = strings.Join(parts, " ")
	}
	return out
}

// headline combines the strata's verdicts (§5) into the claim's, with
// its reason and numbers.
func (s *spec) headline(ds []decided, out []results.RunReason, own string) (string, string, []results.Number) {
	if len(ds) == 0 {
		if u, ok := s.kind.(unjudged); ok {
			return results.Untestable, u.reason(nil, nil), nil
		}
		if why, ok := s.oneWay(); ok {
			return results.NotComparable, "not comparable before any run: " + why + " (" + s.notRun(out, own) + ")", nil
		}
		return results.NotRun, s.notRun(out, own), nil
	}
	names := labels(ds)
	summary := func(keep func(v string) bool) string {
		var parts []string
		for i, d := range ds {
			if keep(d.Verdict) {
				p := d.Verdict + " under " + names[i]
				if d.brief != "" {
					p += " (" + d.brief + ")"
				}
				parts = append(parts, p)
			}
		}
		return strings.Join(parts, ", ")
	}
	numbers := func(keep func(v string) bool) []results.Number {
		if len(ds) == 1 {
			return ds[0].Numbers
		}
		var nums []results.Number
		for i, d := range ds {
			if keep(d.Verdict) {
				for _, n := range d.Numbers {
					n.Name = names[i] + ": " + n.Name
					nums = append(nums, n)
				}
			}
		}
		return nums
	}
	if u, ok := s.kind.(unjudged); ok {
		return results.Untestable, u.reason(ds, names), nil
	}
	has := map[string]bool{}
	for _, d := range ds {
		has[d.Verdict] = true
	}
	all := func(string) bool { return true }
	if has[results.Reproduced] && has[results.NotReproduced] {
		// What a claim depends on is read off the pairs of a reproduced
		// and a not reproduced stratum that differ least: a pair whose
		// differences hold another pair's (fbcon static against vgacon
		// dynamic, beside fbcon static against vgacon static) says
		// nothing the smaller one does not.
		var diffs [][]string
		for _, a := range ds {
			for _, b := range ds {
				if a.Verdict == results.Reproduced && b.Verdict == results.NotReproduced {
					diffs = append(diffs, s.differ(a.Stratum, b.Stratum))
				}
			}
		}
		var axes []string
		for i, d := range diffs {
			minimal := true
			for j, e := range diffs {
				if i != j && len(e) < len(d) && subset(e, d) {
					minimal = false
					break
				}
			}
			if minimal {
				axes = append(axes, d...)
			}
		}
		verdict := results.Dependent(axes...)
		decidedOnly := func(v string) bool { return v == results.Reproduced || v == results.NotReproduced }
		return verdict, summary(all), numbers(decidedOnly)
	}
	for _, v := range []string{results.Reproduced, results.NotReproduced, results.Inconclusive, results.NotComparable, results.NotRun} {
		if !has[v] || v == results.NotComparable && len(has) > 1 {
			continue
		}
		first := slices.IndexFunc(ds, func(d decided) bool { return d.Verdict == v })
		if len(ds) == 1 {
			return v, ds[0].Reason, ds[0].Numbers
		}
		this := func(x string) bool { return x == v }
		return v, summary(all) + "; " + names[first] + ": " + ds[first].Reason, numbers(this)
	}
	return results.NotRun, s.notRun(out, own), nil
}

// notRun is the reason of a claim no in-scope run decides.
func (s *spec) notRun(out []results.RunReason, own string) string {
	if own != "" {
		for _, o := range out {
			if o.Run == own {
				return "this run is out of the claim's scope: " + o.Reason
			}
		}
	}
	why := "no stored run in scope"
	if n := len(out); n > 0 {
		why += fmt.Sprintf(" (%d of %s/%s out of scope: %s: %s", n, s.c.Plugin, s.c.Bench, out[0].Run, out[0].Reason)
		if n > 1 {
			why += "; ..."
		}
		why += ")"
	}
	return why + "; run `" + s.decideCommand() + "`"
}

// DecideRepeats are the repeats DecideCommand asks for: enough for a rule
// with up to 6 refuting tests (docs/claims.md, "The frame"); a verdict
// that needs more says how many.
const DecideRepeats = 7

// DecideCommand is a `lab run` that makes a run in claim c's scope: its
// deciding profiles (else the profile standing for its machine), its
// parameters and sweep points, a clock it allows (its only one, else
// icount:0 where icount may decide it, being deterministic, and not for
// a kind across profiles) and DecideRepeats repeats.
func DecideCommand(c *results.Claim) string { return newSpec(c, nil).decideCommand() }

func (s *spec) decideCommand() string {
	profiles := s.decidingProfiles()
	if len(profiles) == 0 && s.c.Profile != "" {
		profiles = []string{s.c.Profile}
	}
	clock := ""
	switch cl := s.scope().Clocks; {
	case len(cl) == 1:
		clock = map[string]string{contract.ClockHost: "host", contract.ClockIcount: "icount:0"}[cl[0]]
	case s.c.Scope != nil && !s.across && (len(cl) == 0 || slices.Contains(cl, contract.ClockIcount)):
		clock = "icount:0"
	}
	return s.hint(profiles, clock, s.hintPoints(nil)) + fmt.Sprintf(" --repeat %d", DecideRepeats)
}

// Counts says how many of sts have each verdict, in results.VerdictOrder:
// "4 reproduced (1 by construction), 2 untestable here", or "none".
func Counts(sts []ClaimStatus) string {
	n := map[string]int{}
	bc := map[string]int{}
	for _, s := range sts {
		n[s.Verdict]++
		if s.Judged.ByConstruction != "" && s.Verdict == results.Reproduced {
			bc[s.Verdict]++
		}
	}
	var parts []string
	for _, v := range results.VerdictOrder {
		if n[v] == 0 {
			continue
		}
		p := fmt.Sprintf("%d %s", n[v], v)
		if bc[v] > 0 {
			p += fmt.Sprintf(" (%d by construction)", bc[v])
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Find is the statuses of the claims with id (case aside; two plugins
// may declare one id), else of the parts of the compound claim id (E2.1:
// E2.1a, E2.1b, E2.1c), or an error listing the ids sts has.
func Find(sts []ClaimStatus, id string) ([]ClaimStatus, error) {
	var found []ClaimStatus
	var ids []string
	for _, s := range sts {
		if strings.EqualFold(s.Claim.ID, id) {
			found = append(found, s)
		}
		ids = append(ids, s.Claim.ID)
	}
	if len(found) == 0 {
		// A compound claim's id names its parts (E2.1: E2.1a, E2.1b...).
		for _, s := range sts {
			if s.Claim.PartOf != "" && strings.EqualFold(s.Claim.PartOf, id) {
				found = append(found, s)
			}
		}
	}
	if len(found) == 0 {
		known := "no installed plugin declares any"
		if len(ids) > 0 {
			known = "known: " + strings.Join(ids, ", ")
		}
		return nil, fmt.Errorf("no claim %q among the installed plugins' claims (%s); see `lab claims`", id, known)
	}
	return found, nil
}

// differ are the axes in which strata a and b differ.
func (s *spec) differ(a, b results.Stratum) []string {
	var axes []string
	if a.Clock != b.Clock || a.Accelerator != b.Accelerator {
		axes = append(axes, results.AxisClock)
	}
	if a.Build != b.Build {
		axes = append(axes, results.AxisBuild)
	}
	if a.Profile != b.Profile {
		// The profiles of one scope are one machine: they differ in
		// their console or in their kernel.
		if s.profiles[a.Profile].Console != s.profiles[b.Profile].Console {
			axes = append(axes, results.AxisConsole)
		} else {
			axes = append(axes, results.AxisKernel)
		}
	}
	return axes
}

// subset says whether every element of a is in b.
func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
