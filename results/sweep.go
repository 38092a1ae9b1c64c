package results

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"lab/plugins/contract"
)

// StatusInterrupted is the outcome of a swept run stopped by Ctrl-C (or
// SIGTERM, SIGHUP): the points that finished are whole, the one in
// flight kept what it measured, the rest did not run.
const StatusInterrupted = "interrupted"

// The outcomes a plugin reports (contract.StatusOK...), as the host names
// them.
const (
	StatusOK            = contract.StatusOK
	StatusFailed        = contract.StatusFailed
	StatusExpectedCrash = contract.StatusExpectedCrash
)

// PointNotRun is the status of a sweep point the run never reached.
const PointNotRun = "not run"

// Sweep records a swept run (`lab run --sweep KEY=V1,V2,...`): one run of
// the experiment per point of the cross product of the swept values, in
// one VM, all in one result document whose samples carry each point's
// values as labels.
type Sweep struct {
	// Axes are the swept parameters in the order given, each with its
	// values in canonical form and in the order given.
	Axes []SweepAxis `json:"axes"`
	// Points is the cross product of Axes (the first axis varying
	// slowest), in the order run, each with what became of it.
	Points []SweepPoint `json:"points"`
}

// SweepAxis is one swept parameter and its values.
type SweepAxis struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// SweepPoint is one point of a sweep and how its run ended.
type SweepPoint struct {
	// Labels are the point's values of the swept keys; its samples carry
	// them.
	Labels map[string]string `json:"labels"`
	// Status is the point's outcome: ok, failed, expected-crash,
	// interrupted, or not run (the sweep ended before it).
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Repeats is how many repeats of the point finished.
	Repeats int `json:"repeats"`
	// Seconds is the point's wall time on the host.
	Seconds float64 `json:"seconds,omitempty"`
	// StderrTail is the end of what the workload or plugin wrote to
	// stderr, for a point that failed or crashed.
	StderrTail string `json:"stderr_tail,omitempty"`
}

// Keys returns the swept keys in order.
func (s *Sweep) Keys() []string {
	keys := make([]string, len(s.Axes))
	for i, a := range s.Axes {
		keys[i] = a.Key
	}
	return keys
}

// Done counts the points that ran to their end (ok, or the expected
// crash they were run for).
func (s *Sweep) Done() int {
	n := 0
	for _, p := range s.Points {
		if p.Status == StatusOK || p.Status == StatusExpectedCrash {
			n++
		}
	}
	return n
}

// String is the sweep in --sweep form, "n=50,100 mode=process,thread".
func (s *Sweep) String() string {
	parts := make([]string, len(s.Axes))
	for i, a := range s.Axes {
		parts[i] = a.Key + "=" + strings.Join(a.Values, ",")
	}
	return strings.Join(parts, " ")
}

// Summary says how far the sweep got, for a run's summary: "sweep
// n=50,100: 1 of 2 points done: n=100 interrupted (1 repeat(s) kept)".
func (s *Sweep) Summary() string {
	line := fmt.Sprintf("sweep %s: %d of %d points done", s.String(), s.Done(), len(s.Points))
	var other []string
	for _, p := range s.Points {
		if p.Status != StatusOK {
			st := FormatLabels(p.Labels) + " " + p.Status
			if p.Status == StatusInterrupted || p.Status == StatusFailed {
				st += fmt.Sprintf(" (%d repeat(s) kept)", p.Repeats)
			}
			other = append(other, st)
		}
	}
	if len(other) > 0 {
		line += ": " + strings.Join(other, ", ")
	}
	return line
}

// SweepPoints returns the cross product of axes: one label set per point,
// the first axis varying slowest (--sweep count=5,500 --sweep
// mode=process,thread runs count=5 mode=process, count=5 mode=thread,
// count=500 mode=process, ...). No axes give no points.
func SweepPoints(axes []SweepAxis) []map[string]string {
	if len(axes) == 0 {
		return nil
	}
	points := []map[string]string{{}}
	for _, a := range axes {
		next := make([]map[string]string, 0, len(points)*len(a.Values))
		for _, p := range points {
			for _, v := range a.Values {
				q := maps.Clone(p)
				q[a.Key] = v
				next = append(next, q)
			}
		}
		points = next
	}
	return points
}

// LabelPoint returns samples with the point's labels added to each (a
// label the plugin set under a swept key is replaced: the point is what
// ran).
func LabelPoint(samples []Sample, point map[string]string) []Sample {
	out := make([]Sample, len(samples))
	for i, s := range samples {
		l := maps.Clone(s.Labels)
		if l == nil {
			l = make(map[string]string, len(point))
		}
		maps.Copy(l, point)
		s.Labels = l
		out[i] = s
	}
	return out
}

// Numeric says whether values is not empty and every one parses as a
// number.
func Numeric(values []string) bool {
	for _, v := range values {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return false
		}
	}
	return len(values) > 0
}

// AtPoint is r seen as a run of one point of its sweep: the samples of
// that point with the swept labels removed, the parameters the point ran
// with, the point's outcome. It is what a claim about one run is decided
// on. It returns nil if r is not a sweep or has no such point.
func (r *Result) AtPoint(labels map[string]string) *Result {
	if r.Sweep == nil {
		return nil
	}
	var point *SweepPoint
	for i := range r.Sweep.Points {
		if maps.Equal(r.Sweep.Points[i].Labels, labels) {
			point = &r.Sweep.Points[i]
		}
	}
	if point == nil {
		return nil
	}
	sub := *r
	sub.Sweep, sub.Summary, sub.Comparisons, sub.Verdicts = nil, nil, nil, nil
	sub.Parameters = maps.Clone(r.Parameters)
	if sub.Parameters == nil {
		sub.Parameters = map[string]string{}
	}
	maps.Copy(sub.Parameters, labels)
	sub.Outcome = Outcome{Status: point.Status, Reason: point.Reason, StderrTail: point.StderrTail}
	if point.Status == StatusInterrupted || point.Status == PointNotRun {
		// A point cut short decides what its samples can; a rule that
		// takes the outcome into account (crash) sees it did not end.
		sub.Outcome.Status = StatusFailed
	}
	sub.Samples = nil
	for _, s := range r.Samples {
		if !HasLabels(s.Labels, labels) {
			continue
		}
		rest := maps.Clone(s.Labels)
		for k := range labels {
			delete(rest, k)
		}
		if len(rest) == 0 {
			rest = nil
		}
		s.Labels = rest
		sub.Samples = append(sub.Samples, s)
	}
	return &sub
}

// HasLabels says whether labels include every label of want.
func HasLabels(labels, want map[string]string) bool {
	for k, v := range want {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
