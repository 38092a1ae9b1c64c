package results

import (
	"slices"
	"strings"
)

// Metric names shared with the forkbench plugin.
const (
	// Experiment "forktime" (E2's forktime.cc).
	MetricForkWait   = "fork_wait_us"          // µs per fork + child exit + wait
	MetricThreadJoin = "thread_create_join_us" // µs per pthread_create + join
	// Experiment "create" (E1 step 4, forkcreat.c / pthreadcreat.c).
	MetricProcessMS = "process_ms" // ms per process create + destroy
	MetricThreadMS  = "thread_ms"  // ms per thread create + join
	// Both experiments: fork cost / thread cost.
	MetricRatio = "ratio"
)

// Profiles standing for the machines of the write-ups.
const (
	profCeleron    = "celeron-2.4"
	profXeon1      = "xeon5130-1core"
	profXeon2      = "xeon5130-2core"
	profP4         = "p4-2.4"
	profRockhopper = "rockhopper-2.4"
	profSplit      = "split-3g1g"
)

const (
	srcE1Paper   = "E1: 2005 paper, as re-run by the Chinese article"
	srcE1Article = "E1: Chinese article (Xeon 5130 re-run)"
	srcStevens   = "Stevens, UNP vol. 1 ch. 30, cited by E1"
	srcE2        = "E2: 2004 lecture notes, forktime.cc"
	srcHere      = "SEEDS.md, measured here (not published)"
	srcLmbench   = "lmbench lat_proc"
	srcTLPI      = "TLPI Table 28-3"
	src60k       = "60,000 fork+waitpid vs pthread_create+join"
	srcNPTL      = "NPTL: 100,000 threads started"
	srcThreads32 = "32-bit thread limit"
)

const (
	mCeleron    = "Celeron 2.0 GHz, 256 MB, 1 CPU, Linux 2.4.8 (LinuxThreads)"
	mXeon1      = "Xeon 5130 2.00 GHz, 1 of 2 cores, 512 MB, RHEL 4 2.6.9-42 (NPTL), 32-bit"
	mXeon2      = "Xeon 5130 2.00 GHz, 2 cores, 512 MB, RHEL 4 2.6.9-42 (NPTL), 32-bit"
	mSplit      = "i386, 3G/1G split, 8 MB stacks (computed)"
	mSPARC      = "SPARC 333 MHz, 128 MB, Solaris"
	mRockhopper = "Rockhopper: 2 x 728 MHz, 1.3 GB, L2 256K, Linux 2.4.20-30.9smp"
	mCslab      = "Cslab: UltraSPARC (sun4u), Solaris 9"
	mP4         = "Pentium 4 2.6 GHz, 512 MB, L2 512K, Linux 2.4.2 openMosix"
	mHost       = "lab host, native (static glibc)"
	mGuestTCG   = "i386 Debian 6.1 guest, TCG, pentium3, 256 MB"
)

// published is every figure of SEEDS.md E1 and E2 and the other anchors for
// fork and thread costs, in the order of SEEDS.md. Claims that are bounds
// rather than measurements say so in Note.
var published = slices.Concat(e1Refs, e2Refs(), anchorRefs)

var e1Refs = []Reference{
	// E1 step 1: where the process and thread curves cross (P_NUMBER 255).
	{Experiment: "E1", Source: srcE1Paper, Machine: mCeleron, Profile: profCeleron,
		Metric: "crossover_prints", Value: 600, Unit: "prints",
		Note: "P_NUMBER=255; threads faster below, processes faster above (about)"},
	{Experiment: "E1", Source: srcE1Article, Machine: mXeon1, Profile: profXeon1,
		Metric: "crossover_prints", Value: 1000, Unit: "prints",
		Note: "P_NUMBER=255; processes pull ahead only from 1000 prints, curves close"},
	// E1 step 2: the thread program runs out of address space.
	{Experiment: "E1", Source: srcE1Article, Machine: mXeon1, Profile: profXeon1,
		Metric: "thread_crash_workers", Value: 350, Unit: "threads",
		Labels: map[string]string{"stack_kb": "8192"},
		Note:   "segmentation fault at P_NUMBER >= 350 (350 was the first point tried that crashed)"},
	{Experiment: "E1", Source: srcE1Article, Machine: mSplit, Profile: profSplit,
		Metric: "max_threads", Value: 384, Unit: "threads",
		Labels: map[string]string{"stack_kb": "8192"},
		Note:   "upper bound: 3 GB / 8 MB; a bit fewer in practice"},
	{Experiment: "E1", Source: srcHere, Machine: mGuestTCG,
		Metric: "max_threads", Value: 381, Unit: "threads",
		Labels: map[string]string{"stack_kb": "8192"},
		Note:   "pthread_create #382 failed with EAGAIN"},
	{Experiment: "E1", Source: srcHere, Machine: mGuestTCG,
		Metric: "max_threads", Value: 1000, Unit: "threads",
		Labels: map[string]string{"stack_kb": "1024"},
		Note:   "lower bound: all 1000 succeeded"},
	// E1 step 4: 100,000 creates and destroys.
	{Experiment: "E1", Bench: "create", Source: srcE1Paper, Machine: mCeleron, Profile: profCeleron,
		Metric: MetricProcessMS, Value: 0.18, Unit: "ms",
		Note: "mean of 100,000 fork + exit + wait"},
	{Experiment: "E1", Bench: "create", Source: srcE1Paper, Machine: mCeleron, Profile: profCeleron,
		Metric: MetricRatio, Value: 10, Unit: "x",
		Note: "lower bound: threads \"10+ times faster\""},
	{Experiment: "E1", Source: srcStevens, Machine: "Solaris",
		Metric: "server_cpu_s", Value: 504.2, Unit: "s",
		Labels: map[string]string{"design": "fork-per-client"},
		Note:   "server CPU time beyond the iterative baseline"},
	{Experiment: "E1", Source: srcStevens, Machine: "Solaris",
		Metric: "server_cpu_s", Value: 21.5, Unit: "s",
		Labels: map[string]string{"design": "prefork"},
		Note:   "server CPU time beyond the iterative baseline"},
	// E1 step 5: both cores.
	{Experiment: "E1", Source: srcE1Article, Machine: mXeon2, Profile: profXeon2,
		Metric: "speedup_2core", Value: 2, Unit: "x",
		Note: "about; small work only, close to 1 for large work"},
}

// e2Table is E2's table (forktime.cc, 2000 iterations of each) and the
// figures SEEDS.md measured here for orientation. Rockhopper has two runs
// and one ratio; a zero leaves a figure out.
var e2Table = []struct {
	machine, profile, source, note string
	fork, thread, ratio            float64
}{
	{mSPARC, "", srcE2, "Solaris, g++ -lthread", 9076.9, 138.4, 66},
	{mSPARC, "", srcE2, "Solaris, Sun CC -mt", 5706.1, 137.7, 41},
	{mSPARC, "", srcE2, "Solaris, g++ -O", 9000.7, 127.0, 71},
	{mSPARC, "", srcE2, "Solaris, g++ -O3", 9299.2, 163.4, 57},
	{mRockhopper, profRockhopper, srcE2, "run 1 of 2", 721.7, 12.2, 0},
	{mRockhopper, profRockhopper, srcE2, "run 2 of 2", 709.4, 11.9, 0},
	{mRockhopper, profRockhopper, srcE2, "both runs", 0, 0, 59},
	{mCslab, "", srcE2, "Solaris 9, g++", 7297.5, 87.0, 84},
	{mCslab, "", srcE2, "Solaris 9, CC -mt", 5812.5, 88.7, 66},
	{mP4, profP4, srcE2, "g++", 307.3, 67.8, 4.5},
	{mP4, profP4, srcE2, "g++ -O3", 327.9, 68.9, 4.8},
	{mHost, "", srcHere, "static glibc, 2000 calls", 87, 31, 2.8},
	{mGuestTCG, "", srcHere, "static glibc, 2000 calls", 386, 87, 4.4},
}

func e2Refs() []Reference {
	var refs []Reference
	for _, row := range e2Table {
		for _, f := range []struct {
			metric, unit string
			v            float64
		}{
			{MetricForkWait, "µs", row.fork},
			{MetricThreadJoin, "µs", row.thread},
			{MetricRatio, "x", row.ratio},
		} {
			if f.v == 0 {
				continue
			}
			refs = append(refs, Reference{Experiment: "E2", Bench: "forktime", Source: row.source,
				Machine: row.machine, Profile: row.profile, Metric: f.metric, Value: f.v,
				Unit: f.unit, Note: row.note})
		}
	}
	return refs
}

// Published returns copies of the published figures for experiment, which
// may be a write-up ("E1", "E2", "anchor"; case does not matter) or a plugin
// experiment ("forktime", "create": every figure its metrics compare with,
// anchors included). "" returns all of them.
func Published(experiment string) []Reference {
	var out []Reference
	for _, r := range published {
		if experiment == "" || strings.EqualFold(r.Experiment, experiment) || r.Bench == experiment {
			out = append(out, cloneRef(r))
		}
	}
	return out
}

// PublishedFor returns copies of the figures measured on the machine that
// profile stands for, for metric ("" for every metric).
func PublishedFor(profile, metric string) []Reference {
	var out []Reference
	for _, r := range published {
		if r.Profile == profile && (metric == "" || r.Metric == metric) {
			out = append(out, cloneRef(r))
		}
	}
	return out
}

// StandsFor describes the historical machine(s) profile stands for, from
// the published figures ("" when no figure names it).
func StandsFor(profile string) string {
	if profile == "" {
		return ""
	}
	var machines []string
	for _, r := range published {
		if r.Profile == profile && !slices.Contains(machines, r.Machine) {
			machines = append(machines, r.Machine)
		}
	}
	return strings.Join(machines, "; ")
}

func cloneRef(r Reference) Reference {
	r.Labels = cloneLabels(r.Labels)
	return r
}

var anchorRefs = []Reference{
	{Experiment: "anchor", Bench: "forktime", Source: srcLmbench, Machine: "750 MHz, Linux 2.4.20",
		Metric: MetricForkWait, Value: 185, Unit: "µs", Note: "fork+exit"},
	{Experiment: "anchor", Source: srcLmbench, Machine: "750 MHz, Linux 2.4.20",
		Metric: "fork_exec_us", Value: 1373, Unit: "µs"},
	{Experiment: "anchor", Source: srcLmbench, Machine: "750 MHz, Linux 2.4.20",
		Metric: "shell_ms", Value: 15, Unit: "ms"},
	{Experiment: "anchor", Bench: "forktime", Source: srcLmbench, Machine: "750 MHz, Linux 2.5.65",
		Metric: MetricForkWait, Value: 231, Unit: "µs", Note: "fork+exit"},
	{Experiment: "anchor", Source: srcLmbench, Machine: "750 MHz, Linux 2.5.65",
		Metric: "fork_exec_us", Value: 1729, Unit: "µs"},
	{Experiment: "anchor", Bench: "forktime", Source: srcTLPI, Machine: "x86-32, Linux 2.6.27, 1.7 MB parent",
		Metric: MetricForkWait, Value: 222.7, Unit: "µs", Note: "100,000 forks in 22.27 s"},
	{Experiment: "anchor", Source: srcTLPI, Machine: "x86-32, Linux 2.6.27, 1.7 MB parent",
		Metric: "vfork_us", Value: 35.2, Unit: "µs", Note: "100,000 in 3.52 s"},
	{Experiment: "anchor", Source: srcTLPI, Machine: "x86-32, Linux 2.6.27, 1.7 MB parent",
		Metric: "clone_us", Value: 29.7, Unit: "µs", Note: "100,000 in 2.97 s"},
	{Experiment: "anchor", Source: srcTLPI, Machine: "x86-32, Linux 2.6.27, 1.7 MB parent",
		Metric: "fork_exec_us", Value: 1357.2, Unit: "µs", Note: "100,000 in 135.72 s"},
	{Experiment: "anchor", Bench: "forktime", Source: src60k, Machine: "VM, NPTL 2.27",
		Metric: MetricForkWait, Value: 183.2, Unit: "µs", Note: "60,000 in 10.993 s"},
	{Experiment: "anchor", Bench: "forktime", Source: src60k, Machine: "VM, NPTL 2.27",
		Metric: MetricThreadJoin, Value: 59.7, Unit: "µs", Note: "60,000 in 3.584 s"},
	{Experiment: "anchor", Bench: "forktime", Source: src60k, Machine: "VM, NPTL 2.27",
		Metric: MetricRatio, Value: 3.07, Unit: "x", Note: "10.993 s / 3.584 s"},
	{Experiment: "anchor", Source: srcNPTL, Machine: "IA-32, NPTL",
		Metric: "thread_start_us", Value: 20, Unit: "µs", Note: "about 2 s for 100,000"},
	{Experiment: "anchor", Source: srcNPTL, Machine: "IA-32, LinuxThreads",
		Metric: "thread_start_us", Value: 9000, Unit: "µs", Note: "about 15 minutes for 100,000"},
	{Experiment: "anchor", Source: srcThreads32, Machine: "32-bit",
		Metric: "max_threads", Value: 382, Unit: "threads",
		Labels: map[string]string{"stack_kb": "8192"}},
	{Experiment: "anchor", Source: srcThreads32, Machine: "32-bit",
		Metric: "max_threads", Value: 3055, Unit: "threads",
		Labels: map[string]string{"stack_kb": "1024"}},
}
