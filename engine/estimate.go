package engine

import (
	"fmt"
	"time"

	rclaims "lab/results/claims"
)

// perRepeat is a rough time of one repeat at one point of each built-in
// experiment at the sizes the claims' scopes choose, on this project's
// 2-core development host under TCG (icount:0 and host alike, two VMs at
// a time), from the runs of the nightly matrix (docs/measurements.md,
// "lab reproduce"). It is an estimate for plans and budgets, never a
// measurement.
var perRepeat = map[string]time.Duration{
	"forkbench/create":     40 * time.Second, // m=10000
	"forkbench/forktime":   8 * time.Second,  // n=2000
	"threadbench/hello":    20 * time.Second, // count 5..5000, a point
	"threadbench/limit":    2 * time.Second,
	"threadbench/requests": 4 * time.Second, // a delay point
	"printfbench/targets":  3 * time.Second,
	"printfbench/logging":  33 * time.Second,
	"netbench/designs":     180 * time.Second,
}

// cellOverhead is a throwaway VM's restore, plugin push and teardown.
const cellOverhead = 5 * time.Second

// unknownRepeat is the guess for an experiment perRepeat lacks (a
// user's plugin).
const unknownRepeat = 30 * time.Second

// EstimateRun is how long run r is expected to take at repeat repeats
// (0: r.Repeat): perRepeat x repeats x points, plus a VM's overhead.
func EstimateRun(r rclaims.Run, repeat int) time.Duration {
	if repeat == 0 {
		repeat = r.Repeat
	}
	per, ok := perRepeat[r.Plugin+"/"+r.Experiment]
	if !ok {
		per = unknownRepeat
	}
	return cellOverhead + time.Duration(repeat*max(len(r.Points), 1))*per
}

// FormatEstimate is an estimate in whole minutes ("about 3 min"), or
// seconds under a minute.
func FormatEstimate(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("about %d s", int(d.Round(time.Second)/time.Second))
	}
	return fmt.Sprintf("about %d min", int(d.Round(time.Minute)/time.Minute))
}
