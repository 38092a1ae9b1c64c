// Command syscallbench is an example lab plugin living outside lab's own
// module: it times one cheap system call (getppid) in a C workload run
// inside the guest. Build and run it with
//
//	lab plugin build ./examples/syscallbench && lab run syscallbench
package main

import (
	"context"
	"fmt"
	"path/filepath"

	"lab/plugins"
	"lab/results"
)

type bench struct{}

func (bench) Describe(ctx context.Context) (*plugins.Description, error) {
	return &plugins.Description{
		Name:    "syscallbench",
		Version: "0.1.0",
		Summary: "cost of one getppid() system call, timed inside the guest",
		Experiments: []plugins.Experiment{{
			Name:    "getppid",
			Summary: "n getppid() calls; time per call",
			Params: []plugins.Param{{Name: "n", Type: plugins.TypeInt, Default: "100000",
				Min: plugins.Ptr(1), Max: plugins.Ptr(1e8), Help: "calls to make"}},
			Metrics: []plugins.Metric{{Name: "syscall_ns", Unit: "ns", Help: "time per getppid() call"}},
		}},
	}, nil
}

func (bench) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	dir, err := plugins.WorkloadDir()
	if err != nil {
		return nil, err
	}
	resp := &plugins.RunResponse{Env: plugins.CollectEnv(), Outcome: results.Outcome{Status: "ok"}}
	repeat := max(req.Repeat, 1)
	for i := range repeat {
		// The workload is a separate C process: the measurement does not
		// include the Go runtime of this plugin.
		res, err := plugins.RunWorkload(ctx, filepath.Join(dir, "getppid"), req.Params["n"])
		if err != nil {
			resp.Outcome = results.Outcome{Status: "failed", Reason: err.Error()}
			return resp, nil
		}
		ns, err := res.Float("syscall_ns")
		if err != nil {
			return nil, fmt.Errorf("workload output: %w", err)
		}
		s := results.Sample{Metric: "syscall_ns", Value: ns, Unit: "ns", Repeat: i}
		resp.Samples = append(resp.Samples, s)
		progress(plugins.Progress{Done: i + 1, Total: repeat, Message: fmt.Sprintf("%.1f ns", ns), Samples: []results.Sample{s}})
	}
	return resp, nil
}

func main() { plugins.Serve(bench{}) }
