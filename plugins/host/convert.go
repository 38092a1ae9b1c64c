package host

import (
	"maps"
	"slices"

	"lab/plugins"
	"lab/results"
)

// The one place the SDK's types become lab/results' types: results keep
// their own Go types and know nothing about plugins.

// Samples converts a plugin's samples.
func Samples(ss []plugins.Sample) []results.Sample {
	if ss == nil {
		return nil
	}
	out := make([]results.Sample, len(ss))
	for i, s := range ss {
		out[i] = results.Sample{Metric: s.Metric, Value: s.Value, Unit: s.Unit, Repeat: s.Repeat, Labels: maps.Clone(s.Labels)}
	}
	return out
}

// Env converts what a plugin saw of the guest.
func Env(e plugins.GuestEnv) results.GuestEnv {
	return results.GuestEnv{Uname: e.Uname, KernelRelease: e.KernelRelease, CPUModel: e.CPUModel, CPUFamily: e.CPUFamily,
		CPUModelNum: e.CPUModelNum, OnlineCPUs: e.OnlineCPUs, PresentCPUs: e.PresentCPUs, MemTotalKB: e.MemTotalKB,
		StackKB: e.StackKB, Libc: e.Libc}
}

// Outcome converts how a plugin says its run ended; an empty status (a
// plugin that left it unset) is ok.
func Outcome(o plugins.Outcome) results.Outcome {
	if o.Status == "" {
		o.Status = plugins.StatusOK
	}
	return results.Outcome{Status: o.Status, Reason: o.Reason, StderrTail: o.StderrTail}
}

// References converts an experiment's published figures; Bench is the
// experiment they belong to.
func References(e *plugins.Experiment) []results.Reference {
	return references(e.References, e.Name)
}

func references(rs []plugins.Reference, bench string) []results.Reference {
	var out []results.Reference
	for _, r := range rs {
		out = append(out, results.Reference{Experiment: r.Experiment, Source: r.Source, Machine: r.Machine,
			Profile: r.Profile, Metric: r.Metric, Value: r.Value, Unit: r.Unit, Labels: maps.Clone(r.Labels),
			Note: r.Note, Bench: bench})
	}
	return out
}

// Views converts what an experiment asks lab to show of its runs: its
// tables, charts and write-ups. A nil experiment (a plugin not installed)
// has none.
func Views(e *plugins.Experiment) results.Views {
	var v results.Views
	if e == nil {
		return v
	}
	for _, t := range e.Tables {
		rt := results.Table{Label: t.Label, Title: t.Title, Name: t.Name, Rows: maps.Clone(t.Rows), Notes: slices.Clone(t.Notes),
			Chart: chart(t.Chart)}
		for _, c := range t.Columns {
			rc := results.Column{Metric: c.Metric, Header: c.Header, Sum: slices.Clone(c.Sum)}
			if b := c.Baseline; b != nil {
				rc.Baseline = &results.Baseline{Metric: b.Metric, Row: b.Row}
			}
			rt.Columns = append(rt.Columns, rc)
		}
		v.Tables = append(v.Tables, rt)
	}
	for i := range e.Charts {
		v.Charts = append(v.Charts, *chart(&e.Charts[i]))
	}
	for _, w := range e.WriteUps {
		v.WriteUps = append(v.WriteUps, results.WriteUp{ID: w.ID, Title: w.Title, References: references(w.References, "")})
	}
	return v
}

func chart(c *plugins.Chart) *results.Chart {
	if c == nil {
		return nil
	}
	return &results.Chart{Label: c.Label, Stack: slices.Clone(c.Stack), Total: c.Total, Figures: slices.Clone(c.Figures),
		Title: c.Title, Axis: c.Axis, Reading: c.Reading, Params: c.Params, Room: c.Room}
}

// Claims converts the claims experiment e of plugin declares; Plugin and
// Bench say whose runs decide them.
func Claims(plugin string, e *plugins.Experiment) []results.Claim {
	var out []results.Claim
	for _, c := range e.Claims {
		rc := results.Claim{ID: c.ID, Plugin: plugin, Bench: e.Name, Source: c.Source, Statement: c.Statement,
			Machine: c.Machine, Profile: c.Profile, Rationale: c.Rationale, Params: maps.Clone(c.Params), Kind: c.Kind()}
		if r := c.Ratio; r != nil {
			rc.Ratio = &results.RatioRule{Numerator: r.Numerator, Denominator: r.Denominator, Min: r.Min, Max: clonePtr(r.Max), Labels: maps.Clone(r.Labels),
				NumeratorLabels: maps.Clone(r.NumeratorLabels), DenominatorLabels: maps.Clone(r.DenominatorLabels)}
		}
		if r := c.Range; r != nil {
			rc.Range = &results.RangeRule{Metric: r.Metric, Min: clonePtr(r.Min), Max: clonePtr(r.Max), Unit: r.Unit, Labels: maps.Clone(r.Labels)}
		}
		if n := c.Near; n != nil {
			rc.Near = &results.NearRule{Metric: n.Metric, Value: n.Value, Tolerance: n.Tolerance, Unit: n.Unit, Labels: maps.Clone(n.Labels)}
		}
		if x := c.Crossover; x != nil {
			rc.Crossover = &results.CrossoverRule{First: x.First, Second: x.Second, Sweep: x.Sweep, At: clonePtr(x.At), Tolerance: x.Tolerance, None: x.None,
				FirstLabels: maps.Clone(x.FirstLabels), SecondLabels: maps.Clone(x.SecondLabels), FirstLowerBefore: x.FirstLowerBefore}
		}
		if s := c.Speedup; s != nil {
			rc.Speedup = &results.SpeedupRule{Metric: s.Metric, Baseline: s.Baseline, Profile: s.Profile, Min: s.Min, Max: clonePtr(s.Max), Labels: maps.Clone(s.Labels)}
		}
		if k := c.Crash; k != nil {
			rc.Crash = &results.CrashRule{Signal: k.Signal, Param: k.Param, From: k.From}
		}
		if o := c.Order; o != nil {
			rc.Order = &results.OrderRule{Metric: o.Metric, Label: o.Label, Above: slices.Clone(o.Above), Below: slices.Clone(o.Below),
				Min: o.Min, Labels: maps.Clone(o.Labels)}
		}
		out = append(out, rc)
	}
	return out
}

// AllClaims converts every claim of every experiment of d.
func AllClaims(d *plugins.Description) []results.Claim {
	var out []results.Claim
	for i := range d.Experiments {
		out = append(out, Claims(d.Name, &d.Experiments[i])...)
	}
	return out
}

func clonePtr(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
