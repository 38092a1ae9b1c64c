package main

import (
	"context"
	"fmt"

	"lab/plugins"
)

// workload is how one experiment runs its C program.
type workload struct {
	binary string // under the workload dir
	param  string // the one parameter, passed as the only argument
}

var workloads = map[string]workload{
	"forktime": {binary: "forktime", param: "n"},
	"create":   {binary: "create", param: "m"},
	"switch":   {binary: "switch", param: "n"},
}

// bench is the forkbench Benchmark; desc is its description.json.
type bench struct{ desc *plugins.Description }

// Run runs the experiment's workload once per repeat; plugins.Repeat owns
// the loop, progress and outcome.
func (b bench) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	return plugins.Repeat(ctx, b.desc, req, progress, func(ctx context.Context, t *plugins.Trial) ([]plugins.Sample, error) {
		w := workloads[t.Experiment.Name]
		arg := t.Params[w.param]
		res, err := t.RunWorkload(ctx, plugins.WorkloadFile(w.binary, t.Params[plugins.ParamBuild]), arg)
		if err != nil {
			return nil, err
		}
		if got := res.Values["n"].Text; got != arg {
			return nil, fmt.Errorf("workload %s ran %q iterations, asked for %s", w.binary, got, arg)
		}
		return t.Samples(res)
	})
}
