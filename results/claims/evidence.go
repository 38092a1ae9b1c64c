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

// The evidence of a claim in one stratum, as its kind takes it. Every
// value is keyed (Key): Run is the unit's key (the run's id, plus the
// point's labels other than the claim's sweep key), Point the value of
// the claim's sweep key (from the sample's labels, else the parameters
// the point ran with), Repeat the sample's repeat. Pairs are built by
// key. A series is a metric with exactly the labels the rule names, the
// sweep point's labels and the claim's sweep key aside (a crossover's
// curves: at least those labels). A kind that tests several series
// (an equivalence or a ratio of differences by label) puts the series
// in the Point too, so each is tested apart.

// sample is one value of a series, with its unit of measure.
type sample struct {
	Value
	unit string
}

// ignorable says whether label k of a sample of u may be left out of a
// series' labels: a sweep point's label, the claim's sweep key.
func (s *spec) ignorable(u *unit, k string) bool {
	if _, ok := u.labels[k]; ok {
		return true
	}
	return k == s.pointKey || k == s.sweep().Key
}

// samples are the values of series metric{want} in units, sorted by key
// (then value). superset takes samples with at least the labels want.
func (s *spec) samples(us []*unit, metric string, want map[string]string, superset bool) []sample {
	var out []sample
	for _, u := range us {
	next:
		for _, smp := range u.run.Samples {
			if smp.Metric != metric || !results.HasLabels(smp.Labels, u.labels) || !results.HasLabels(smp.Labels, want) {
				continue
			}
			if !superset {
				for k := range smp.Labels {
					if _, named := want[k]; !named && !s.ignorable(u, k) {
						continue next
					}
				}
			}
			pt, ok := s.pointOf(u, smp.Labels)
			if !ok {
				continue
			}
			out = append(out, sample{Value{Key{Run: u.key, Point: pt, Repeat: smp.Repeat}, smp.Value}, smp.Unit})
		}
	}
	slices.SortFunc(out, func(a, b sample) int { return cmp.Or(compareKeys(a.Key, b.Key), cmp.Compare(a.X, b.X)) })
	return out
}

// pointOf is a sample's value of the claim's sweep key, and false when
// its value of the scope's sweep key is not one of the scope's points.
func (s *spec) pointOf(u *unit, labels map[string]string) (string, bool) {
	if k := s.sweep().Key; k != "" {
		if v, ok := labels[k]; ok && s.pointOut(v) != "" {
			return "", false
		}
	}
	if s.pointKey == "" {
		return "", true
	}
	if v, ok := labels[s.pointKey]; ok {
		return v, true
	}
	return u.params[s.pointKey], true
}

// values are the samples' values.
func values(ss []sample) []Value {
	out := make([]Value, len(ss))
	for i, x := range ss {
		out[i] = x.Value
	}
	return out
}

// series is values of metric{labels} in units.
func (s *spec) series(us []*unit, metric string, labels map[string]string) []Value {
	return values(s.samples(us, metric, labels, false))
}

// merge is the labels of every map, later ones winning.
func merge(ls ...map[string]string) map[string]string {
	var out map[string]string
	for _, l := range ls {
		out = results.MergeLabels(out, l)
	}
	return out
}

// withPoint puts a series' name before each value's point: "design=2"
// alone, or "design=2 at count=5".
func (s *spec) withPoint(name string, vs []Value) []Value {
	out := slices.Clone(vs)
	for i := range out {
		if p := out[i].Point; p != "" {
			out[i].Point = name + " at " + s.pointKey + "=" + p
		} else {
			out[i].Point = name
		}
	}
	return out
}

// pointsOf are the values of the claim's sweep key that units hold
// evidence at, sorted: where they have samples (a crash claim's: where
// they ran).
func (s *spec) pointsOf(us []*unit) []string {
	seen := map[string]bool{}
	for _, u := range us {
		if s.kind.evidence() == fromEndings && u.point != "" {
			seen[u.point] = true
		}
		for _, smp := range u.run.Samples {
			if !results.HasLabels(smp.Labels, u.labels) {
				continue
			}
			if v, in := s.pointOf(u, smp.Labels); in && v != "" {
				seen[v] = true
			}
		}
	}
	return slices.SortedFunc(maps.Keys(seen), comparePoints)
}

// lowerBound is a rule's min as a bound: none when it is 0 (a rule with
// only a max).
func lowerBound(min float64, max *float64) Bounds {
	b := Bounds{Max: max}
	if min != 0 {
		b.Min = &min
	}
	return b
}

// rowsOf are the repeats with all of a, b and z, by key.
func rowsOf(a, b, z []Value) []DiffRow {
	bs, zs := map[Key]float64{}, map[Key]float64{}
	for _, v := range b {
		bs[v.Key] = v.X
	}
	for _, v := range z {
		zs[v.Key] = v.X
	}
	var out []DiffRow
	for _, v := range a {
		bv, ok1 := bs[v.Key]
		zv, ok2 := zs[v.Key]
		if ok1 && ok2 {
			out = append(out, DiffRow{Key: v.Key, A: v.X, B: bv, Z: zv})
		}
	}
	return out
}

// calibration is the speed of the machine a claim's absolute times on
// profile p are compared with: the claim's own, else the profile's,
// else (a variant) its base's; and whose it is.
func (s *spec) calibration(p string) (*contract.Calibration, string) {
	if s.c.Calibration != nil {
		return s.c.Calibration, "the claim's"
	}
	info := s.profiles[p]
	if info.Calibration != nil {
		return info.Calibration, p + "'s"
	}
	if b := info.VariantOf; b != "" && s.profiles[b].Calibration != nil {
		return s.profiles[b].Calibration, b + "'s (the machine of its variant " + p + ")"
	}
	return nil, ""
}

// stratum is the evidence of one profile (or for a kind across profiles,
// one pair of profiles), clock and accelerator.
type stratum struct {
	profile, clock, accel, build string
	// units are every unit of the stratum; base and other, an across
	// kind's two sides.
	units, base, other []*unit
	// profiles are the profiles the units ran on, sorted.
	profiles []string
}

// strata splits units into strata, sorted by profile, clock and
// accelerator. For a kind across profiles a stratum is a clock and an
// accelerator with the two profiles' units (each profile's variants,
// with Scope.Variants, in a stratum of their own).
func (s *spec) strata(units []*unit) []*stratum {
	by := map[[4]string]*stratum{}
	var keys [][4]string
	for _, u := range units {
		k := [4]string{u.profile, u.clock, u.accel, u.build}
		variant := false
		if s.across {
			_, variant = s.side(u.profile)
			k[0] = fmt.Sprint(variant)
		}
		st := by[k]
		if st == nil {
			st = &stratum{profile: u.profile, clock: u.clock, accel: u.accel, build: u.build}
			by[k] = st
			keys = append(keys, k)
		}
		st.units = append(st.units, u)
		if !slices.Contains(st.profiles, u.profile) {
			st.profiles = append(st.profiles, u.profile)
			slices.Sort(st.profiles)
		}
		if s.across {
			if side, _ := s.side(u.profile); side == s.base {
				st.base = append(st.base, u)
			} else {
				st.other = append(st.other, u)
			}
		}
	}
	var out []*stratum
	for _, k := range keys {
		st := by[k]
		if s.across {
			st.profile = sideNames(st.base, s.base) + " vs " + sideNames(st.other, s.other)
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b *stratum) int {
		return cmp.Or(cmp.Compare(a.profile, b.profile), cmp.Compare(a.clock, b.clock), cmp.Compare(a.accel, b.accel), cmp.Compare(a.build, b.build))
	})
	return out
}

// sideNames names the profiles of one side of an across stratum: its
// units' profiles, or the rule's profile when it has none.
func sideNames(us []*unit, rule string) string {
	var names []string
	for _, u := range us {
		if !slices.Contains(names, u.profile) {
			names = append(names, u.profile)
		}
	}
	if len(names) == 0 {
		return rule
	}
	slices.Sort(names)
	return strings.Join(names, "+")
}

// runs are the ids of the runs of units, sorted, once each.
func runIDs(us []*unit) []string {
	var ids []string
	for _, u := range us {
		ids = append(ids, u.run.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// kernel is the kernel the units ran, "" if they differ.
func kernelOf(us []*unit) string {
	var ks []string
	for _, u := range us {
		ks = append(ks, u.kernel)
	}
	slices.Sort(ks)
	if ks = slices.Compact(ks); len(ks) == 1 {
		return ks[0]
	}
	return ""
}
