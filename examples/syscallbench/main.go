// Command syscallbench is an example lab plugin living outside lab's own
// module: it times one cheap system call (getppid) in a C workload run
// inside the guest. What it can run is data, description.json, embedded
// here and handed to plugins.Serve. Build and run it with
//
//	lab plugin build ./examples/syscallbench && lab run syscallbench
package main

import (
	"context"
	_ "embed"

	"lab/plugins"
)

//go:embed description.json
var description []byte

type bench struct{ desc *plugins.Description }

// Run is: run the workload, map its output to samples. plugins.Repeat owns
// the repeats, progress, the environment and the outcome.
func (b bench) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	return plugins.Repeat(ctx, b.desc, req, progress, func(ctx context.Context, t *plugins.Trial) ([]plugins.Sample, error) {
		// The workload is a separate C process: the measurement does not
		// include the Go runtime of this plugin.
		res, err := t.RunWorkload(ctx, "getppid", t.Params["n"])
		if err != nil {
			return nil, err
		}
		return t.Samples(res) // its `syscall_ns` line
	})
}

func main() { plugins.Serve(description, bench{desc: plugins.MustParseDescription(description)}) }
