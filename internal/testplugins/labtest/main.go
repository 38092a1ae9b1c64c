// Command labtest is a plugin for lab's own tests: experiments that
// succeed, crash, hang, or run slowly, to exercise the failure paths of
// `lab run` through the real plugin path in a guest.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"lab/plugins"
	"lab/results"
)

// TicksFile holds the number of samples "slow" has reported so far.
const TicksFile = "/tmp/labtest.ticks"

type bench struct{}

func (bench) Describe(ctx context.Context) (*plugins.Description, error) {
	secs := plugins.Param{Name: "seconds", Type: plugins.TypeInt, Default: "3", Min: plugins.Ptr(1), Max: plugins.Ptr(3600), Help: "how long to run"}
	metric := []plugins.Metric{{Name: "tick", Unit: "x", Help: "a counter"}}
	return &plugins.Description{
		// Named after its binary, so a copy under another name (the tests'
		// wrong-arch plugin) describes itself consistently.
		Name: filepath.Base(os.Args[0]), Version: "0.0.1", Summary: "test plugin: success, crash, hang, slow",
		Experiments: []plugins.Experiment{
			{Name: "ok", Summary: "one sample per repeat", Metrics: metric},
			{Name: "crash", Summary: "report one sample, write to stderr, then exit 3", Metrics: metric},
			{Name: "hang", Summary: "block forever, ignoring cancellation", Metrics: metric},
			{Name: "slow", Summary: "one sample per second for `seconds`", Params: []plugins.Param{secs}, Metrics: metric},
		},
	}, nil
}

func (bench) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	resp := &plugins.RunResponse{Env: plugins.CollectEnv(), Outcome: results.Outcome{Status: "ok"}}
	sample := func(i int) results.Sample {
		return results.Sample{Metric: "tick", Value: float64(i + 1), Unit: "x", Repeat: i}
	}
	switch req.Experiment {
	case "ok":
		for i := range max(req.Repeat, 1) {
			resp.Samples = append(resp.Samples, sample(i))
			progress(plugins.Progress{Done: i + 1, Total: max(req.Repeat, 1), Samples: []results.Sample{sample(i)}})
		}
	case "crash":
		progress(plugins.Progress{Done: 1, Total: 2, Samples: []results.Sample{sample(0)}})
		time.Sleep(200 * time.Millisecond) // let the progress event leave
		fmt.Fprintln(os.Stderr, "labtest: about to crash")
		panic("labtest: crashing on purpose")
	case "hang":
		progress(plugins.Progress{Done: 0, Total: 1, Message: "hanging"})
		select {}
	case "slow":
		n, _ := strconv.Atoi(req.Params["seconds"])
		_ = os.Remove(TicksFile)
		for i := range n {
			select {
			case <-ctx.Done():
				return resp, ctx.Err()
			case <-time.After(time.Second):
			}
			resp.Samples = append(resp.Samples, sample(i))
			progress(plugins.Progress{Done: i + 1, Total: n, Samples: []results.Sample{sample(i)}})
			// Tests read how far the run got from inside the guest.
			_ = os.WriteFile(TicksFile, []byte(strconv.Itoa(i+1)), 0o644)
		}
	}
	return resp, nil
}

func main() { plugins.Serve(bench{}) }
