// Command sweeptest is a plugin for lab's own tests of `lab run --sweep`:
// each sweep point ends as its `point` parameter says, so the tests see a
// sweep go on past a failed point and stop at a broken plugin.
package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"lab/plugins"
)

//go:embed description.json
var description []byte

type bench struct{ desc *plugins.Description }

func (b bench) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	return plugins.Repeat(ctx, b.desc, req, progress, func(_ context.Context, t *plugins.Trial) ([]plugins.Sample, error) {
		v, _ := strconv.ParseFloat(t.Params["value"], 64)
		s := []plugins.Sample{t.Sample("t_ms", v)}
		switch t.Params["point"] {
		case "fail":
			return nil, errors.New("sweeptest: failing on purpose")
		case "expected-crash":
			return s, &plugins.ExpectedCrash{Reason: "segmentation fault (sweeptest, on purpose)"}
		case "crash":
			fmt.Fprintln(os.Stderr, "sweeptest: about to crash")
			time.Sleep(100 * time.Millisecond)
			os.Exit(3)
		}
		return s, nil
	})
}

func main() { plugins.Serve(description, bench{desc: plugins.MustParseDescription(description)}) }
