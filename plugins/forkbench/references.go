package main

import "lab/results"

// references returns the published figures experiment's metrics compare
// with (SEEDS.md E2 and E1 step 4).
//
// TODO: these duplicate results.Published; use it once results settles.
func references(experiment string) []results.Reference {
	switch experiment {
	case "forktime":
		return forktimeRefs()
	case "create":
		return createRefs()
	}
	return nil
}

const (
	srcE2 = "E2: 2004 lecture notes, forktime.cc"
	srcE1 = "E1: 2005 paper, as re-run by the Chinese article (forkcreat.c, pthreadcreat.c)"

	mSPARC      = "SPARC 333 MHz, 128 MB, Solaris"
	mRockhopper = "Rockhopper: 2 x 728 MHz, 1.3 GB, L2 256K, Linux 2.4.20-30.9smp"
	mCslab      = "Cslab: UltraSPARC (sun4u), Solaris 9"
	mP4         = "Pentium 4 2.6 GHz, 512 MB, L2 512K, Linux 2.4.2 openMosix"
	mCeleron    = "Celeron 2.0 GHz, 256 MB, 1 CPU, Linux 2.4.8 (LinuxThreads)"
)

// forktimeRefs is E2's table: 2000 iterations of each loop. A zero leaves a
// figure out (Rockhopper has two runs and one ratio).
func forktimeRefs() []results.Reference {
	rows := []struct {
		machine, profile, note string
		fork, thread, ratio    float64
	}{
		{mSPARC, "", "Solaris, g++ -lthread", 9076.9, 138.4, 66},
		{mSPARC, "", "Solaris, Sun CC -mt", 5706.1, 137.7, 41},
		{mSPARC, "", "Solaris, g++ -O", 9000.7, 127.0, 71},
		{mSPARC, "", "Solaris, g++ -O3", 9299.2, 163.4, 57},
		{mRockhopper, "rockhopper-2.4", "run 1 of 2", 721.7, 12.2, 0},
		{mRockhopper, "rockhopper-2.4", "run 2 of 2", 709.4, 11.9, 0},
		{mRockhopper, "rockhopper-2.4", "both runs", 0, 0, 59},
		{mCslab, "", "Solaris 9, g++", 7297.5, 87.0, 84},
		{mCslab, "", "Solaris 9, CC -mt", 5812.5, 88.7, 66},
		{mP4, "p4-2.4", "g++", 307.3, 67.8, 4.5},
		{mP4, "p4-2.4", "g++ -O3", 327.9, 68.9, 4.8},
	}
	var refs []results.Reference
	for _, r := range rows {
		for _, f := range []struct {
			metric, unit string
			v            float64
		}{
			{"fork_wait_us", "µs", r.fork},
			{"thread_create_join_us", "µs", r.thread},
			{"ratio", "x", r.ratio},
		} {
			if f.v != 0 {
				refs = append(refs, results.Reference{
					Experiment: "E2", Bench: "forktime", Source: srcE2,
					Machine: r.machine, Profile: r.profile,
					Metric: f.metric, Value: f.v, Unit: f.unit, Note: r.note,
				})
			}
		}
	}
	return refs
}

// createRefs is E1 step 4: 100,000 processes and threads on the Celeron.
func createRefs() []results.Reference {
	return []results.Reference{
		{Experiment: "E1", Bench: "create", Source: srcE1, Machine: mCeleron, Profile: "celeron-2.4",
			Metric: "process_ms", Value: 0.18, Unit: "ms",
			Note: "mean of 100,000 fork + exit + wait"},
		{Experiment: "E1", Bench: "create", Source: srcE1, Machine: mCeleron, Profile: "celeron-2.4",
			Metric: "ratio", Value: 10, Unit: "x",
			Note: "lower bound: threads \"10+ times faster\""},
	}
}
