package host

import (
	"maps"

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
	var out []results.Reference
	for _, r := range e.References {
		out = append(out, results.Reference{Experiment: r.Experiment, Source: r.Source, Machine: r.Machine,
			Profile: r.Profile, Metric: r.Metric, Value: r.Value, Unit: r.Unit, Labels: maps.Clone(r.Labels),
			Note: r.Note, Bench: e.Name})
	}
	return out
}
