package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"lab/plugins"
	"lab/results"
)

// version is the plugin's version; bump it when what is measured changes.
const version = "0.1.0"

// workload is how one experiment runs its C program.
type workload struct {
	binary string // under the workload dir
	param  string // the one parameter, passed as the only argument
}

var workloads = map[string]workload{
	"forktime": {binary: "forktime", param: "n"},
	"create":   {binary: "create", param: "m"},
}

// rusageMetrics are reported for every repeat of every experiment.
var rusageMetrics = []plugins.Metric{
	{Name: "real_s", Unit: "s", Help: "elapsed time of the workload, measured by itself (CLOCK_MONOTONIC)"},
	{Name: "user_s", Unit: "s", Help: "user CPU time of the workload and its children (wait4 rusage)"},
	{Name: "sys_s", Unit: "s", Help: "system CPU time of the workload and its children (wait4 rusage)"},
}

// description is what Describe returns.
func description() *plugins.Description {
	return &plugins.Description{
		Name:    "forkbench",
		Version: version,
		Summary: "cost of creating a process (fork + exit + wait) against a thread (pthread_create + join)",
		Experiments: []plugins.Experiment{
			{
				Name:    "forktime",
				Summary: "E2 (2004 lecture notes, forktime.cc): n fork+wait, then n pthread_create+join; time per call",
				Params: []plugins.Param{{
					Name: "n", Type: plugins.TypeInt, Default: "2000",
					Min: plugins.Ptr(1), Max: plugins.Ptr(1000000),
					Help: "iterations of each loop",
				}},
				Metrics: append([]plugins.Metric{
					{Name: "fork_wait_us", Unit: "µs", Help: "one fork, child _exit(0), parent waitpid"},
					{Name: "thread_create_join_us", Unit: "µs", Help: "one pthread_create of an empty function and its pthread_join"},
					{Name: "ratio", Unit: "x", Help: "fork_wait_us / thread_create_join_us"},
				}, rusageMetrics...),
				References: results.Published("forktime"),
			},
			{
				Name:    "create",
				Summary: "E1 step 4 (forkcreat.c / pthreadcreat.c): create and destroy m processes, then m threads",
				Params: []plugins.Param{{
					Name: "m", Type: plugins.TypeInt, Default: "100000",
					Min: plugins.Ptr(1), Max: plugins.Ptr(10000000),
					Help: "processes, and then threads, to create and destroy",
				}},
				Metrics: append([]plugins.Metric{
					{Name: "process_ms", Unit: "ms", Help: "one process: fork, child exits, parent waits"},
					{Name: "thread_ms", Unit: "ms", Help: "one thread: pthread_create, thread returns, pthread_join"},
					{Name: "process_s", Unit: "s", Help: "all m processes"},
					{Name: "thread_s", Unit: "s", Help: "all m threads"},
					{Name: "ratio", Unit: "x", Help: "process_s / thread_s"},
				}, rusageMetrics...),
				References: results.Published("create"),
			},
		},
	}
}

// bench is the forkbench Benchmark.
type bench struct{}

func (*bench) Describe(context.Context) (*plugins.Description, error) {
	return description(), nil
}

// Run runs the experiment's workload req.Repeat times. A workload that fails
// ends the run with a "failed" outcome and the samples of the repeats
// before it; only a bad request or a cancelled ctx is an error.
func (*bench) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	desc := description()
	exp, params, err := desc.Resolve(req.Experiment, req.Params)
	if err != nil {
		return nil, err
	}
	w := workloads[exp.Name]
	dir := req.WorkloadDir
	if dir == "" {
		if dir, err = plugins.WorkloadDir(); err != nil {
			return nil, err
		}
	}
	repeat := max(req.Repeat, 1)
	if progress == nil {
		progress = func(plugins.Progress) {}
	}
	units := map[string]string{}
	for _, m := range exp.Metrics {
		units[m.Name] = m.Unit
	}

	resp := &plugins.RunResponse{Env: plugins.CollectEnv(), Outcome: results.Outcome{Status: "ok"}}
	var log strings.Builder
	path := filepath.Join(dir, w.binary)
	arg := params[w.param]
	for i := range repeat {
		fmt.Fprintf(&log, "repeat %d/%d: %s %s\n", i+1, repeat, path, arg)
		res, err := plugins.RunWorkload(ctx, path, arg)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("forkbench %s: %w", exp.Name, err)
		}
		if res != nil {
			log.WriteString(res.Stdout)
		}
		if err != nil {
			resp.Outcome = results.Outcome{Status: "failed", Reason: fmt.Sprintf("repeat %d/%d: %v", i+1, repeat, err)}
			if res != nil {
				resp.Outcome.StderrTail = res.Stderr
			}
			break
		}
		if got := res.Values["n"].Text; got != arg {
			err = fmt.Errorf("workload %s ran %q iterations, asked for %s", w.binary, got, arg)
		}
		var samples []results.Sample
		if err == nil {
			samples, err = samplesOf(exp, res, i, units)
		}
		if err != nil {
			resp.Outcome = results.Outcome{Status: "failed", Reason: fmt.Sprintf("repeat %d/%d: %v", i+1, repeat, err)}
			break
		}
		resp.Samples = append(resp.Samples, samples...)
		if resp.Env.Libc == "" {
			resp.Env.Libc = res.Libc()
		}
		progress(plugins.Progress{Done: i + 1, Total: repeat, Message: summary(exp, samples), Samples: samples})
	}
	resp.Log = log.String()
	return resp, nil
}

// samplesOf turns one workload run into samples: the experiment's own
// metrics as the workload printed them, then rusage.
func samplesOf(exp *plugins.Experiment, res *plugins.WorkloadResult, repeat int, units map[string]string) ([]results.Sample, error) {
	var out []results.Sample
	for _, m := range exp.Metrics {
		var v float64
		switch m.Name {
		case "real_s":
			v = res.RealS
		case "user_s":
			v = res.UserS
		case "sys_s":
			v = res.SysS
		default:
			var err error
			if v, err = res.Float(m.Name); err != nil {
				return nil, err
			}
		}
		out = append(out, results.Sample{Metric: m.Name, Value: v, Unit: units[m.Name], Repeat: repeat})
	}
	return out, nil
}

// summary is a progress message: the experiment's first two metrics.
func summary(exp *plugins.Experiment, samples []results.Sample) string {
	var parts []string
	for _, s := range samples[:min(2, len(samples))] {
		parts = append(parts, fmt.Sprintf("%s %.4g %s", s.Metric, s.Value, s.Unit))
	}
	return exp.Name + ": " + strings.Join(parts, ", ")
}
