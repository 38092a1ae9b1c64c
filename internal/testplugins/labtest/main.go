// Command labtest is a plugin for lab's own tests: experiments that
// succeed, crash, hang, run slowly, flood their output, leave processes
// behind or return samples no run can measure, to exercise the failure paths of
// `lab run` through the real plugin path in a guest.
package main

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"lab/plugins"
)

// TicksFile holds the number of samples "slow" has reported so far.
const TicksFile = "/tmp/labtest.ticks"

//go:embed description.json
var description []byte

type bench struct{ desc *plugins.Description }

func (b bench) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	resp := &plugins.RunResponse{Env: plugins.CollectEnv(), Outcome: plugins.Outcome{Status: plugins.StatusOK}}
	sample := func(i int) plugins.Sample {
		return plugins.Sample{Metric: "tick", Value: float64(i + 1), Unit: "x", Repeat: i}
	}
	switch req.Experiment {
	case "ok":
		return plugins.Repeat(ctx, b.desc, req, progress, func(_ context.Context, t *plugins.Trial) ([]plugins.Sample, error) {
			return []plugins.Sample{t.Sample("tick", float64(t.Index+1))}, nil
		})
	case "crash":
		progress(plugins.Progress{Done: 1, Total: 2, Samples: []plugins.Sample{sample(0)}})
		time.Sleep(200 * time.Millisecond) // let the progress event leave
		fmt.Fprintln(os.Stderr, "labtest: about to crash")
		panic("labtest: crashing on purpose")
	case "liar":
		// Samples no run can measure: what the host must refuse.
		n := max(req.Repeat, 1)
		for i := range n {
			switch req.Params["lie"] {
			case "negative":
				resp.Samples = append(resp.Samples, plugins.Sample{Metric: "took_ms", Value: -1, Unit: "ms", Repeat: i})
			case "repeat":
				resp.Samples = append(resp.Samples, plugins.Sample{Metric: "took_ms", Value: 1, Unit: "ms", Repeat: n + i})
			}
			resp.Samples = append(resp.Samples, plugins.Sample{Metric: "delta_ms", Value: -1, Unit: "ms", Repeat: i})
		}
		return resp, nil
	case "flood":
		// A plugin that writes without end to its stdout or stderr.
		mib, _ := strconv.Atoi(req.Params["mib"])
		w := os.Stdout
		line := []byte(strings.Repeat("flood ", 170) + "\n") // 1 KiB
		switch req.Params["stream"] {
		case "stderr":
			w = os.Stderr
		case "fd1", "fd2":
			// The process's own descriptor, under go-plugin's
			// redirection of os.Stdout and os.Stderr (what a child
			// process inherits), with no newline at all.
			w = os.NewFile(uintptr(req.Params["stream"][2]-'0'), "fd")
			line = []byte(strings.Repeat("flood ", 170) + "flood")
		}
		for range mib * 1024 {
			if _, err := w.Write(line); err != nil {
				break
			}
		}
		resp.Samples = append(resp.Samples, sample(0))
		return resp, nil
	case "leave":
		// Leave a process in a session of its own and a file in the
		// temporary directory behind.
		cmd := exec.Command("/bin/sleep", "600")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return resp, err
		}
		_ = os.WriteFile(filepath.Join(os.TempDir(), "left-behind"), []byte("x"), 0o644)
		resp.Samples = append(resp.Samples, sample(0))
		return resp, nil
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
			// One repeat: each second a sample of its own, labelled.
			tick := plugins.Sample{Metric: "tick", Value: float64(i + 1), Unit: "x", Labels: map[string]string{"second": strconv.Itoa(i + 1)}}
			resp.Samples = append(resp.Samples, tick)
			progress(plugins.Progress{Done: i + 1, Total: n, Samples: []plugins.Sample{tick}})
			// Tests read how far the run got from inside the guest.
			_ = os.WriteFile(TicksFile, []byte(strconv.Itoa(i+1)), 0o644)
		}
	}
	return resp, nil
}

func main() { plugins.Serve(description, bench{desc: plugins.MustParseDescription(description)}) }
