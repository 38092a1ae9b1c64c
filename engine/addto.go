package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"lab/results"
)

// Adding repeats to a stored run (Request.AddTo, lab run --add-to): the
// new run is of the same cell, its result names the run it adds to, and
// the claims' judge pools the two (results.Result.AddTo). What makes a
// cell is checked twice: the plugin, experiment and parameters before
// anything boots (addTo), the machine once the VM is up and before the
// plugin starts (addToMachine). A run that is not of the cell is refused,
// saying what differs; nothing is measured.

// addTo loads the run req adds to from req.Out and fills in what req
// leaves to choose: with no experiment, parameter or sweep given, the
// stored run's. It refuses what cannot add to one run.
func addTo(req Request) (Request, *results.Result, error) {
	flag := "--add-to " + req.AddTo
	if len(req.Profiles) > 1 {
		return req, nil, fmt.Errorf("%s adds repeats to one run, on its profile: give one --profile (or --vm), not %d", flag, len(req.Profiles))
	}
	if req.ChooseRepeat {
		return req, nil, fmt.Errorf("%s needs --repeat N: the number of repeats to add", flag)
	}
	prev, _, err := results.LoadRef(req.Out, req.AddTo)
	if err != nil {
		return req, nil, fmt.Errorf("%s: %w; `lab results --results %s` lists the runs there (nothing was started)", flag, err, req.Out)
	}
	if s := prev.Outcome.Status; s != results.StatusOK && s != results.StatusExpectedCrash {
		return req, nil, fmt.Errorf("%s: that run %s (%s); repeats add only to a run that finished: run the cell again without --add-to", flag, s, prev.Outcome.Reason)
	}
	if prev.Plugin != req.Plugin {
		return req, nil, fmt.Errorf("%s is a run of plugin %s, not %s: run `lab run %s --add-to %s`", flag, prev.Plugin, req.Plugin, prev.Plugin, req.AddTo)
	}
	if len(req.Profiles) == 1 && req.Profiles[0] == results.ProfileName(prev.Machine) && req.Clock == "" {
		req.Clock = prev.Machine.Clock
	}
	if req.ChooseExperiment {
		req.Experiment, req.ChooseExperiment = prev.Experiment, false
		req.Params = results.CloneLabels(results.MeasuredParams(prev.Parameters))
		if prev.Sweep != nil {
			req.Sweep = slices.Clone(prev.Sweep.Axes)
			for _, a := range prev.Sweep.Axes {
				delete(req.Params, a.Key)
			}
		}
	}
	return req, prev, nil
}

// checkAddTo says how plan's run is not of the cell of prev, the run it
// adds to, as far as the plan knows it (the machine is checked by
// addToMachine); "" when it is.
func checkAddTo(plan *Plan, prev *results.Result) string {
	var diffs []string
	if prev.PluginVersion != plan.Desc.Version {
		diffs = append(diffs, fmt.Sprintf("plugin version %s, not %s", prev.PluginVersion, plan.Desc.Version))
	}
	if prev.Experiment != plan.Exp.Name {
		diffs = append(diffs, fmt.Sprintf("experiment %s, not %s", prev.Experiment, plan.Exp.Name))
	} else {
		was, now := results.MeasuredParams(prev.Parameters), results.MeasuredParams(plan.Resolved)
		for _, k := range slices.Sorted(maps.Keys(joinKeys(was, now))) {
			if was[k] != now[k] {
				diffs = append(diffs, fmt.Sprintf("%s=%s, not %s", k, orNone(was[k]), orNone(now[k])))
			}
		}
	}
	if len(diffs) > 0 {
		return strings.Join(diffs, ", ")
	}
	return ""
}

// addToMachine says how a run on machine m is not on prev's ("" when it
// is): the profile, kernel, clock and accelerator make the cell.
func addToMachine(prev *results.Result, m results.MachineRecord) string {
	var diffs []string
	for _, f := range []struct{ what, was, now string }{
		{"profile", results.ProfileName(prev.Machine), results.ProfileName(m)},
		{"kernel", prev.Machine.KernelID, m.KernelID},
		{"clock", prev.Machine.Clock, m.Clock},
		{"accelerator", prev.Machine.Accelerator, m.Accelerator},
	} {
		if f.was != f.now {
			diffs = append(diffs, fmt.Sprintf("%s %s, not %s", f.what, orNone(f.was), orNone(f.now)))
		}
	}
	return strings.Join(diffs, ", ")
}

func joinKeys(a, b map[string]string) map[string]string {
	m := maps.Clone(a)
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, b)
	return m
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
