package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"lab/plugins"
)

// bench is the threadbench Benchmark; desc is its description.json.
type bench struct{ desc *plugins.Description }

// Run runs the experiment's workload once per repeat; plugins.Repeat owns
// the loop, progress and outcome.
func (b bench) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	return plugins.Repeat(ctx, b.desc, req, progress, func(ctx context.Context, t *plugins.Trial) ([]plugins.Sample, error) {
		switch t.Experiment.Name {
		case "hello":
			return hello(ctx, t)
		case "limit":
			return limit(ctx, t)
		case "requests":
			return requests(ctx, t)
		}
		return nil, fmt.Errorf("threadbench has no workload for experiment %s", t.Experiment.Name)
	})
}

// modes are the worker kinds a hello trial runs, in the order it runs
// them: both alternate which goes first from one repeat to the next, so
// neither always runs in the wake of the other.
func modes(mode string, repeat int) []string {
	switch mode {
	case "process", "thread":
		return []string{mode}
	}
	if repeat%2 == 1 {
		return []string{"thread", "process"}
	}
	return []string{"process", "thread"}
}

// hello runs E1's printing workers once per mode; each mode's samples
// carry the label mode.
func hello(ctx context.Context, t *plugins.Trial) ([]plugins.Sample, error) {
	dir, err := os.MkdirTemp("", "threadbench-hello-")
	if err != nil {
		return nil, fmt.Errorf("a directory for hello's log: %w", err)
	}
	defer os.RemoveAll(dir)
	p := t.Params
	var out []plugins.Sample
	for _, mode := range modes(p["mode"], t.Index) {
		res, err := t.RunWorkload(ctx, plugins.WorkloadFile("hello", p[plugins.ParamBuild]), mode, p["workers"], p["count"], p["line_bytes"], p["stdout"], p["stack_kb"], dir)
		if err != nil {
			return out, fmt.Errorf("mode %s: %w", mode, err)
		}
		if got, want := res.Values["lines"].Text, mul(p["workers"], p["count"]); got != want {
			return out, fmt.Errorf("workload hello (mode %s) wrote %q lines, want workers x count = %s", mode, got, want)
		}
		for _, m := range []string{"real_s", "user_s", "sys_s"} {
			v, err := res.Float(m)
			if err != nil {
				return out, err
			}
			s := t.Sample(m, v)
			s.Labels = map[string]string{"mode": mode}
			out = append(out, s)
		}
	}
	return out, nil
}

// mul is a*b for two canonical integers, as text.
func mul(a, b string) string {
	x, _ := strconv.ParseInt(a, 10, 64)
	y, _ := strconv.ParseInt(b, 10, 64)
	return strconv.FormatInt(x*y, 10)
}

// limit counts the threads one process can make, or (faithful) runs the
// original program, whose crash is an expected outcome recorded as data.
// Samples carry the stack limit the workload ran with as label stack_kb.
func limit(ctx context.Context, t *plugins.Trial) ([]plugins.Sample, error) {
	p := t.Params
	faithful := "0"
	if p["faithful"] == "true" {
		faithful = "1"
	}
	res, err := t.RunWorkload(ctx, plugins.WorkloadFile("limit", p[plugins.ParamBuild]), p["stack_kb"], faithful, p["workers"], p["max_threads"])
	if err != nil {
		return nil, err
	}
	stack, err := res.Float("stack_kb")
	if err != nil {
		return nil, err
	}
	labels := map[string]string{"stack_kb": strconv.FormatFloat(stack, 'f', -1, 64)}
	metrics := []string{"max_threads", "vm_size_kb", "create_s"}
	if faithful == "1" {
		metrics = []string{"max_threads"}
	}
	var out []plugins.Sample
	for _, m := range metrics {
		v, err := res.Float(m)
		if m == "max_threads" {
			v, err = res.Float("threads")
		}
		if err != nil {
			return nil, err
		}
		s := t.Sample(m, v)
		s.Labels = labels
		out = append(out, s)
	}
	if faithful == "0" {
		return out, nil
	}
	sig := res.Values["signal_name"].Text
	if sig == "" || sig == "none" {
		if st := res.Values["exit_status"].Text; st != "0" {
			return out, fmt.Errorf("the original program exited with status %s after %s threads (%s)", st, res.Values["threads"].Text, res.Values["error"].Text)
		}
		ran := t.Sample("crashed", 0)
		ran.Labels = labels
		return append(out, ran), nil
	}
	crashed := t.Sample("crashed", 1)
	crashed.Labels = map[string]string{"stack_kb": labels["stack_kb"], "signal": sig}
	out = append(out, crashed)
	return out, &plugins.ExpectedCrash{Reason: crashReason(sig, res.Values["threads"].Text, res.Values["error"].Text, p["workers"], labels["stack_kb"])}
}

// crashReason says how the original program ended, for the outcome.
func crashReason(signal, threads, errName, workers, stackKB string) string {
	words := map[string]string{"SIGSEGV": " (segmentation fault)", "SIGBUS": " (bus error)", "SIGABRT": " (abort)"}[signal]
	var b strings.Builder
	fmt.Fprintf(&b, "the original thread program was killed by %s%s after %s of %s threads were created with %s KB stacks", signal, words, threads, workers, stackKB)
	if n, err := strconv.Atoi(threads); err == nil && errName != "none" {
		fmt.Fprintf(&b, "; pthread_create #%d failed with %s, unchecked, and its unset handle was then joined", n+1, errName)
	}
	return b.String()
}

// requests runs E4's serial and thread-per-request servers.
func requests(ctx context.Context, t *plugins.Trial) ([]plugins.Sample, error) {
	p := t.Params
	res, err := t.RunWorkload(ctx, "requests", p["requests"], p["delay_ms"], p["stack_kb"])
	if err != nil {
		return nil, err
	}
	if got := res.Values["requests"].Text; got != p["requests"] {
		return nil, fmt.Errorf("workload requests served %q requests, asked for %s", got, p["requests"])
	}
	return t.Samples(res)
}
