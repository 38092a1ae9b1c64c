package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"lab/plugins"
	"lab/results"
)

// maxSweepPoints bounds a sweep's cross product: a typo in a value list
// should not start a week of emulation.
const maxSweepPoints = 1000

// sweepValues collects --sweep flags whole. A StringSliceFlag would split
// "n=50,100" at the commas into "n=50" and "100".
type sweepValues struct{ flags []string }

func (s *sweepValues) Set(v string) error {
	s.flags = append(s.flags, v)
	return nil
}

func (s *sweepValues) String() string { return strings.Join(s.flags, " ") }

// sweepPoint is one point of a sweep: its labels (the swept keys'
// values) and every parameter of the experiment resolved for it.
type sweepPoint struct {
	labels map[string]string
	params map[string]string
}

// parseSweeps parses --sweep flags, each KEY=V1,V2,... . A key may be
// given once; values must not be empty. Values are checked against the
// experiment by planSweep.
func parseSweeps(flags []string) ([]results.SweepAxis, error) {
	var axes []results.SweepAxis
	for _, f := range flags {
		key, list, ok := strings.Cut(f, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.TrimSpace(list) == "" {
			return nil, fmt.Errorf("--sweep %q: want KEY=V1,V2,... (e.g. --sweep n=50,100)", f)
		}
		for _, a := range axes {
			if a.Key == key {
				return nil, fmt.Errorf("--sweep %s given twice; give all its values in one: --sweep %s=%s,%s", key, key,
					strings.Join(a.Values, ","), list)
			}
		}
		values := strings.Split(list, ",")
		for i, v := range values {
			values[i] = strings.TrimSpace(v)
			if values[i] == "" {
				return nil, fmt.Errorf("--sweep %s: value %d of %q is empty; want KEY=V1,V2,...", f, i+1, list)
			}
		}
		axes = append(axes, results.SweepAxis{Key: key, Values: values})
	}
	return axes, nil
}

// planSweep checks axes against the parameters experiment exp of desc
// declares, before anything boots: each key must be a parameter not also
// set with -p, each value must pass the parameter's type and range (it is
// kept in canonical form: "050" becomes "50"), and no value may be given
// twice. It returns the axes in canonical form and the points of their
// cross product, each with all parameters resolved (params, the -p
// values, filling in the rest).
func planSweep(desc *plugins.Description, exp *plugins.Experiment, params map[string]string, axes []results.SweepAxis) ([]results.SweepAxis, []sweepPoint, error) {
	where := desc.Name + "/" + exp.Name
	canon := make([]results.SweepAxis, len(axes))
	total := 1
	for i, a := range axes {
		p := findParam(exp, a.Key)
		if p == nil {
			return nil, nil, fmt.Errorf("--sweep %s: experiment %s has no parameter %q; %s (see `lab plugins show %s`)",
				a.Key, where, a.Key, paramNames(exp), desc.Name)
		}
		if v, set := params[a.Key]; set {
			return nil, nil, fmt.Errorf("--sweep %s and -p %s=%s both set %s; drop one (to run only %s, leave out --sweep; to sweep, leave out -p)",
				a.Key, a.Key, v, a.Key, v)
		}
		canon[i].Key = a.Key
		for _, v := range a.Values {
			c, err := p.Check(v)
			if err != nil {
				return nil, nil, fmt.Errorf("--sweep %s=%s: %w", a.Key, v, err)
			}
			if slices.Contains(canon[i].Values, c) {
				return nil, nil, fmt.Errorf("--sweep %s: value %s given twice", a.Key, c)
			}
			canon[i].Values = append(canon[i].Values, c)
		}
		total *= len(a.Values)
		if total > maxSweepPoints {
			return nil, nil, fmt.Errorf("--sweep %s: the sweep has more than %d points; sweep fewer values or run it in parts", (&results.Sweep{Axes: axes}).String(), maxSweepPoints)
		}
	}
	var points []sweepPoint
	for _, labels := range results.SweepPoints(canon) {
		all := maps.Clone(params)
		if all == nil {
			all = map[string]string{}
		}
		maps.Copy(all, labels)
		_, resolved, err := desc.Resolve(exp.Name, all)
		if err != nil {
			return nil, nil, fmt.Errorf("--sweep point %s: %w", results.FormatLabels(labels), err)
		}
		points = append(points, sweepPoint{labels: labels, params: resolved})
	}
	return canon, points, nil
}

func findParam(exp *plugins.Experiment, name string) *plugins.Param {
	for i := range exp.Params {
		if exp.Params[i].Name == name {
			return &exp.Params[i]
		}
	}
	return nil
}

// paramNames lists the parameters a sweep can take.
func paramNames(exp *plugins.Experiment) string {
	if len(exp.Params) == 0 {
		return "it takes no parameters, so there is nothing to sweep"
	}
	lines := make([]string, len(exp.Params))
	for i, p := range exp.Params {
		lines[i] = p.String()
	}
	return "sweep one of its parameters: " + strings.Join(lines, "; ")
}
