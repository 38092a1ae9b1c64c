package results

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Filter selects stored runs; a zero field matches everything.
type Filter struct {
	Profile    string
	Plugin     string
	Experiment string
	// Outcome is a status ("ok", "failed", "expected-crash",
	// "interrupted").
	Outcome string
	// Since keeps runs started at or after it.
	Since time.Time
}

// Outcomes are the statuses a run can end with, as Filter.Outcome takes
// them.
var Outcomes = []string{StatusOK, StatusFailed, StatusExpectedCrash, StatusInterrupted}

// Match says whether r passes the filter.
func (f Filter) Match(r *Result) bool {
	switch {
	case f.Profile != "" && ProfileName(r.Machine) != f.Profile:
		return false
	case f.Plugin != "" && r.Plugin != f.Plugin:
		return false
	case f.Experiment != "" && r.Experiment != f.Experiment:
		return false
	case f.Outcome != "" && r.Outcome.Status != f.Outcome:
		return false
	case !f.Since.IsZero() && r.Started.Before(f.Since):
		return false
	}
	return true
}

// Empty says whether the filter matches everything.
func (f Filter) Empty() bool { return f == Filter{} }

// String is the filter in the form ParseFilter reads.
func (f Filter) String() string {
	var parts []string
	for _, kv := range [][2]string{{"profile", f.Profile}, {"plugin", f.Plugin}, {"experiment", f.Experiment}, {"outcome", f.Outcome}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	if !f.Since.IsZero() {
		parts = append(parts, "since="+f.Since.UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, ",")
}

// ParseSince reads a --since value: a duration back from now ("24h",
// "90m"), a day ("2026-12-01") or an RFC 3339 time.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("since %q: give a duration back from now without a sign (24h)", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("since %q: want a duration back from now (24h, 90m), a day (2026-12-01) or an RFC 3339 time (2026-12-01T08:00:00Z)", s)
}

// ParseFilter reads a filter written as comma-separated key=value pairs:
// "profile=celeron-2.4,plugin=forkbench,since=24h". Keys: profile,
// plugin, experiment, outcome, since.
func ParseFilter(s string, now time.Time) (Filter, error) {
	var f Filter
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || v == "" {
			return f, fmt.Errorf("filter %q: %q is not key=value; keys: profile, plugin, experiment, outcome, since", s, part)
		}
		switch k {
		case "profile":
			f.Profile = v
		case "plugin":
			f.Plugin = v
		case "experiment":
			f.Experiment = v
		case "outcome":
			if !slices.Contains(Outcomes, v) {
				return f, fmt.Errorf("filter %q: outcome %q: want one of %s", s, v, strings.Join(Outcomes, ", "))
			}
			f.Outcome = v
		case "since":
			t, err := ParseSince(v, now)
			if err != nil {
				return f, fmt.Errorf("filter %q: %w", s, err)
			}
			f.Since = t
		default:
			return f, fmt.Errorf("filter %q: unknown key %q; keys: profile, plugin, experiment, outcome, since", s, k)
		}
	}
	return f, nil
}

// Select loads the runs in dir that pass f, newest first. Files that do
// not load (corrupt, truncated, from a newer lab) are skipped and
// returned as errors naming them, beside the runs that did.
func Select(dir string, f Filter) ([]*Result, []error) {
	all, errs := LoadAll(dir)
	var out []*Result
	for _, r := range all {
		if f.Match(r) {
			out = append(out, r)
		}
	}
	return out, errs
}
