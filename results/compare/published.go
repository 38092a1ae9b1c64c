package compare

import (
	"slices"
	"strings"

	"lab/results"
)

// Profiles standing for the machines of the write-ups.
const (
	profCeleron = "celeron-2.4"
	profXeon1   = "xeon5130-1core"
	profXeon2   = "xeon5130-2core"
	profSplit   = "split-3g1g"
)

const (
	srcE1Paper   = "E1: 2005 paper, as re-run by the Chinese article"
	srcE1Article = "E1: Chinese article (Xeon 5130 re-run)"
	srcStevens   = "Stevens, UNP vol. 1 ch. 30, cited by E1"
	srcHere      = "SEEDS.md, measured here (not published)"
	srcLmbench   = "lmbench lat_proc"
	srcTLPI      = "TLPI Table 28-3"
	srcNPTL      = "NPTL: 100,000 threads started"
	srcThreads32 = "32-bit thread limit"
)

const (
	mCeleron  = "Celeron 2.0 GHz, 256 MB, 1 CPU, Linux 2.4.8 (LinuxThreads)"
	mXeon1    = "Xeon 5130 2.00 GHz, 1 of 2 cores, 512 MB, RHEL 4 2.6.9-42 (NPTL), 32-bit"
	mXeon2    = "Xeon 5130 2.00 GHz, 2 cores, 512 MB, RHEL 4 2.6.9-42 (NPTL), 32-bit"
	mSplit    = "i386, 3G/1G split, 8 MB stacks (computed)"
	mGuestTCG = "i386 Debian 6.1 guest, TCG, pentium3, 256 MB"
)

// published is every figure of SEEDS.md E1 and the other anchors for fork
// and thread costs that no plugin declares, in the order of SEEDS.md.
// Claims that are bounds rather than measurements say so in Note. The
// figures a plugin's metrics compare with live in that plugin's
// description.json (E2's table and E1 step 4 in forkbench's), once only;
// the host compares a run with those (host.References) and with these.
var published = slices.Concat(e1Refs, anchorRefs)

var e1Refs = []results.Reference{
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
	// E1 step 4 (100,000 creates and destroys): forkbench's "create".
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

// Published returns copies of the figures here for experiment, which may be
// a write-up ("E1", "anchor"; case does not matter) or a plugin experiment
// (the figures whose Bench names it: none today, every plugin experiment
// declares its own). "" returns all of them.
func Published(experiment string) []results.Reference {
	var out []results.Reference
	for _, r := range published {
		if experiment == "" || strings.EqualFold(r.Experiment, experiment) || r.Bench == experiment {
			out = append(out, cloneRef(r))
		}
	}
	return out
}

// PublishedFor returns copies of the figures measured on the machine that
// profile stands for, for metric ("" for every metric).
func PublishedFor(profile, metric string) []results.Reference {
	var out []results.Reference
	for _, r := range published {
		if r.Profile == profile && (metric == "" || r.Metric == metric) {
			out = append(out, cloneRef(r))
		}
	}
	return out
}

// StandsFor describes the historical machine(s) profile stands for, from
// the figures here ("" when no figure names it). A run's result knows more:
// the figures its plugin declares (see WriteTable).
func StandsFor(profile string) string {
	return strings.Join(PublishedMachines(profile), "; ")
}

// PublishedMachines lists the machines of the figures here that profile
// stands for, in published order.
func PublishedMachines(profile string) []string {
	if profile == "" {
		return nil
	}
	var machines []string
	for _, r := range published {
		if r.Profile == profile && !slices.Contains(machines, r.Machine) {
			machines = append(machines, r.Machine)
		}
	}
	return machines
}

func cloneRef(r results.Reference) results.Reference {
	r.Labels = cloneLabels(r.Labels)
	return r
}

var anchorRefs = []results.Reference{
	{Experiment: "anchor", Source: srcLmbench, Machine: "750 MHz, Linux 2.4.20",
		Metric: "fork_exec_us", Value: 1373, Unit: "µs"},
	{Experiment: "anchor", Source: srcLmbench, Machine: "750 MHz, Linux 2.4.20",
		Metric: "shell_ms", Value: 15, Unit: "ms"},
	{Experiment: "anchor", Source: srcLmbench, Machine: "750 MHz, Linux 2.5.65",
		Metric: "fork_exec_us", Value: 1729, Unit: "µs"},
	{Experiment: "anchor", Source: srcTLPI, Machine: "x86-32, Linux 2.6.27, 1.7 MB parent",
		Metric: "vfork_us", Value: 35.2, Unit: "µs", Note: "100,000 in 3.52 s"},
	{Experiment: "anchor", Source: srcTLPI, Machine: "x86-32, Linux 2.6.27, 1.7 MB parent",
		Metric: "clone_us", Value: 29.7, Unit: "µs", Note: "100,000 in 2.97 s"},
	{Experiment: "anchor", Source: srcTLPI, Machine: "x86-32, Linux 2.6.27, 1.7 MB parent",
		Metric: "fork_exec_us", Value: 1357.2, Unit: "µs", Note: "100,000 in 135.72 s"},
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
