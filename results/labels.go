package results

import (
	"cmp"
	"lab/plugins/contract"
	"maps"
	"math"

	"sort"
	"strings"

	"encoding/json"
	"strconv"
)

// seriesKey identifies one series: metric, unit and the label set in key
// order. The separators cannot occur in ordinary metric names.
func SeriesKey(metric, unit string, labels map[string]string) string {
	var b strings.Builder
	b.WriteString(metric)
	b.WriteByte(0)
	b.WriteString(unit)
	for _, k := range SortedKeys(labels) {
		b.WriteByte(0)
		b.WriteString(k)
		b.WriteByte(1)
		b.WriteString(labels[k])
	}
	return b.String()
}

// labelKey identifies a label set regardless of map order.
func LabelKey(labels map[string]string) string {
	return SeriesKey("", "", labels)
}

// FormatLabels renders labels as "k=v k=v" in key order, "" for none.
func FormatLabels(labels map[string]string) string {
	keys := SortedKeys(labels)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, " ")
}

// SortedKeys are m's keys in order.
func SortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CloneLabels copies a label set, keeping an empty one nil.
func CloneLabels(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// timeUnits are the units convert knows, in seconds.
var timeUnits = map[string]float64{
	"s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9,
}

// convert expresses v (in unit from) in unit to. Equal units (or an empty
// one) need nothing; two time units are scaled; anything else is refused.
func ConvertUnit(v float64, from, to string) (float64, bool) {
	if from == to || from == "" || to == "" {
		return v, true
	}
	f, ok1 := timeUnits[from]
	t, ok2 := timeUnits[to]
	if !ok1 || !ok2 {
		return 0, false
	}
	return v * f / t, true
}

// ProfileName returns the name of the profile a run used. Machine.Profile
// holds the resolved profile as whatever type the caller had (a struct with
// a Name field, or a map after Load); this package must not import images,
// so the name is read through its JSON form ("name" or "Name"). A string
// Profile is the name itself. Without one it falls back to Machine.Name.
func ProfileName(m MachineRecord) string {
	if s, ok := m.Profile.(string); ok && s != "" {
		return s
	}
	if n := ProfileField(m.Profile, "name", "Name"); n != "" {
		return n
	}
	return m.Name
}

// RepeatParam is the parameter a run records its repeat count in: how
// many samples it took, not what they measure.
const RepeatParam = "repeat"

// BuildOf is the workload build a run with params ran: its
// contract.ParamBuild, else contract.DefaultBuild (a run made before
// builds existed ran it).
func BuildOf(params map[string]string) string {
	if b := params[contract.ParamBuild]; b != "" {
		return b
	}
	return contract.DefaultBuild
}

// Later says whether run a is later than run b: its Finished, then its
// ID (what the documents say, never their files' names or order). Of a
// cell's runs the latest decides, with the runs it adds to (AddTo).
func Later(a, b *Result) bool {
	if c := a.Finished.Compare(b.Finished); c != 0 {
		return c > 0
	}
	return a.ID > b.ID
}

// MeasuredParams are a run's parameters but RepeatParam: what a run
// measures, the same at 4 repeats and at 6. The default build
// (contract.DefaultBuild) is left out too: a run of it measures what a
// run made before builds existed did, and is the same cell.
func MeasuredParams(params map[string]string) map[string]string {
	_, repeat := params[RepeatParam]
	if !repeat && params[contract.ParamBuild] != contract.DefaultBuild {
		return params
	}
	out := CloneLabels(params)
	delete(out, RepeatParam)
	if out[contract.ParamBuild] == contract.DefaultBuild {
		delete(out, contract.ParamBuild)
	}
	return out
}

// CellKey names a run's cell, what a nightly matrix runs once a night
// and lab compare and lab history pair runs by: profile, plugin,
// experiment, parameters (the repeat count aside) and clock,
// "celeron-2.4/forkbench/forktime/n=200 (clock host)".
func CellKey(r *Result) string {
	k := ProfileName(r.Machine) + "/" + r.Plugin + "/" + r.Experiment
	if p := MeasuredParams(r.Parameters); len(p) > 0 {
		k += "/" + strings.ReplaceAll(FormatLabels(p), " ", ",")
	}
	return k + " (clock " + OrUnknown(r.Machine.Clock) + ")"
}

// profileField reads a top-level string field of the profile's JSON form.
// FiguresProfile is the profile whose published figures and claims a run
// on m answers to: the run's profile, or, for a kernel variant (a profile
// with variant_of: the era profiles, the same machine on another kernel),
// the profile it is a variant of.
func FiguresProfile(m MachineRecord) string {
	if v := ProfileField(m.Profile, "variant_of", "VariantOf"); v != "" {
		return v
	}
	return ProfileName(m)
}

// ProfileField is the first non-empty string field of a recorded
// profile (a map, or anything that marshals to a JSON object) among keys.
func ProfileField(p any, keys ...string) string {
	if p == nil {
		return ""
	}
	var fields map[string]any
	if m, ok := p.(map[string]any); ok {
		fields = m
	} else {
		data, err := json.Marshal(p)
		if err != nil || json.Unmarshal(data, &fields) != nil {
			return ""
		}
	}
	for _, k := range keys {
		if s, ok := fields[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// FormatValue renders v with three significant digits (trailing zeros
// dropped), and values of 1000 or more as whole numbers: 0.18, 12.2, 386,
// 9077.
func FormatValue(v float64) string { return FormatSig(v, 3) }

// FormatSig is v to sig significant digits, as FormatValue: whole from
// 1000 up, trailing zeros dropped.
func FormatSig(v float64, sig int) string {
	switch {
	case v == 0:
		return "0"
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	prec := max(sig-1-int(math.Floor(math.Log10(math.Abs(v)))), 0)
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func IsTimeUnit(unit string) bool {
	_, ok := timeUnits[unit]
	return ok
}

// OrUnknown is s, or "unknown" when s is empty: for provenance lines.
func OrUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// LabelCell is labels as a table cell: "k=v ...", "-" for none.
func LabelCell(labels map[string]string) string {
	if l := FormatLabels(labels); l != "" {
		return l
	}
	return "-"
}

// SeriesLabel is a metric with the labels picking one of its series:
// "real_s at mode=thread".
func SeriesLabel(metric string, labels map[string]string) string {
	if len(labels) == 0 {
		return metric
	}
	return metric + " at " + FormatLabels(labels)
}

// SeriesBraced is a metric with the labels picking one of its series in
// braces, as benchstat names a series: "real_s {mode=thread}".
func SeriesBraced(metric string, labels map[string]string) string {
	if len(labels) == 0 {
		return metric
	}
	return metric + " {" + FormatLabels(labels) + "}"
}

// MergeLabels is a with b's labels added (b's win), nil when both are
// empty.
func MergeLabels(a, b map[string]string) map[string]string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

// NaturalCompare orders strings with their runs of digits by value.
func NaturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, _ := strconv.Atoi(a[:da])
			nb, _ := strconv.Atoi(b[:db])
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digits is the length of s's leading run of digits.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
