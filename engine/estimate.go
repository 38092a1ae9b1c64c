package engine

import (
	"fmt"
	"time"

	"lab/plugins"
	rclaims "lab/results/claims"
	"lab/results/matrix"
)

// Estimates are the rough time of one repeat at one point of each
// experiment ("plugin/experiment"), from the plugins' descriptions
// (repeat_seconds: measured on lab's 2-core development host under TCG at
// the sizes the claims' scopes use). They estimate plans and budgets;
// they are never a measurement.
type Estimates map[string]time.Duration

// EstimatesOf are the estimates the descriptions declare.
func EstimatesOf(descs ...*plugins.Description) Estimates {
	e := Estimates{}
	for _, d := range descs {
		for _, x := range d.Experiments {
			if x.RepeatSeconds > 0 {
				e[d.Name+"/"+x.Name] = time.Duration(x.RepeatSeconds * float64(time.Second))
			}
		}
	}
	return e
}

// cellOverhead is a throwaway VM's restore, plugin push and teardown.
const cellOverhead = 5 * time.Second

// unknownRepeat is the guess for an experiment that declares no
// repeat_seconds.
const unknownRepeat = 30 * time.Second

// Run is how long run r is expected to take at repeat repeats (0:
// r.Repeat): a repeat's time x repeats x points, plus a VM's overhead.
func (e Estimates) Run(r rclaims.Run, repeat int) time.Duration {
	if repeat == 0 {
		repeat = r.Repeat
	}
	per, ok := e[r.Plugin+"/"+r.Experiment]
	if !ok {
		per = unknownRepeat
	}
	return cellOverhead + time.Duration(repeat*max(len(r.Points), 1))*per
}

// Cell is how long matrix cell c is expected to take.
func (e Estimates) Cell(c matrix.Cell) time.Duration {
	points := 1
	for _, vs := range c.Sweep {
		points *= max(len(vs), 1)
	}
	return e.Run(rclaims.Run{Plugin: c.Plugin, Experiment: c.Experiment, Points: make([]string, points)}, max(c.Repeat, 1))
}

// FormatEstimate is an estimate in whole minutes ("about 3 min"), or
// seconds under a minute.
func FormatEstimate(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("about %d s", int(d.Round(time.Second)/time.Second))
	}
	return fmt.Sprintf("about %d min", int(d.Round(time.Minute)/time.Minute))
}
