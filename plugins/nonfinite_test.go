//go:build linux

package plugins

// Non-finite numbers (nan, inf) cannot travel as JSON: they are refused
// where they enter the plugin (a workload's output) and at the plugin's
// edge (the samples a Run reports), naming the metric.

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseWorkloadOutputRefusesNonFinite(t *testing.T) {
	tests := []struct {
		name, out string
		wantErr   []string // nil: accepted
	}{
		{"finite", "fork_wait_us 87.5 us\nn 200\n", nil},
		{"exponent", "t 1e-9 s\n", nil},
		{"not a number at all is text", "libc glibc-2.36\n", nil},
		{"nan", "fork_wait_us nan us\n", []string{`metric "fork_wait_us"`, `"nan"`, "finite"}},
		{"NaN", "n 2\nthread_create_join_us NaN us\n", []string{"line 2", `metric "thread_create_join_us"`, `"NaN"`}},
		{"inf", "ratio inf x\n", []string{`metric "ratio"`, `"inf"`}},
		{"-Inf", "ratio -Inf\n", []string{`metric "ratio"`, `"-Inf"`}},
		{"+infinity", "real_s +infinity s\n", []string{`metric "real_s"`}},
		// strconv.ParseFloat says 1e999 is out of range and returns +Inf.
		{"overflow", "t 1e999 s\n", []string{`metric "t"`, `"1e999"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseWorkloadOutput(tt.out)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("parseWorkloadOutput(%q) = %v, want it accepted", tt.out, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("parseWorkloadOutput(%q) accepted it, want an error", tt.out)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// A real workload process printing nan: RunWorkload fails naming the
// workload and the metric.
func TestRunWorkloadRefusesNonFinite(t *testing.T) {
	res, err := RunWorkload(context.Background(), script(t, "echo 'fork_wait_us nan us'; echo 'real_s 0.1 s'"))
	if err == nil {
		t.Fatalf("RunWorkload accepted a nan: values %v", res.Values)
	}
	for _, w := range []string{"workload.sh", `metric "fork_wait_us"`, "nan"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

// Float is the other way in (a WorkloadResult built by hand or by a
// plugin's own parser).
func TestWorkloadResultFloatRefusesNonFinite(t *testing.T) {
	r := &WorkloadResult{Name: "forktime", Values: map[string]WorkloadValue{"a": {Text: "inf"}, "b": {Text: "nan"}, "c": {Text: "2.5"}}}
	for _, k := range []string{"a", "b"} {
		v, err := r.Float(k)
		if err == nil {
			t.Errorf("Float(%q) = %v, nil; want an error", k, v)
			continue
		}
		for _, w := range []string{"workload forktime", `metric "` + k + `"`, "finite"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Float(%q) error %q does not contain %q", k, err, w)
			}
		}
	}
	if v, err := r.Float("c"); err != nil || v != 2.5 {
		t.Errorf("Float(c) = %v, %v; want 2.5", v, err)
	}
}

// A plugin computing a NaN itself (0/0 for a ratio) and reporting it in
// progress and in its response: through the real go-plugin gRPC path the
// host gets the finite samples and an error naming the metric, not a
// broken stream.
func TestRunNonFiniteSampleThroughGRPC(t *testing.T) {
	nan := math.NaN()
	b := connect(t, &fakeBench{run: func(ctx context.Context, req *RunRequest, progress func(Progress)) (*RunResponse, error) {
		good := Sample{Metric: "process_ms", Value: 0.4, Unit: "ms"}
		bad := Sample{Metric: "ratio", Value: nan, Unit: "x"}
		progress(Progress{Done: 1, Total: 1, Message: "repeat 1", Samples: []Sample{good, bad}})
		return &RunResponse{Samples: []Sample{good, bad, {Metric: "thread_ms", Value: math.Inf(1), Unit: "ms", Repeat: 1}},
			Outcome: Outcome{Status: StatusOK}}, nil
	}}, true)
	var events []Progress
	resp, err := b.Run(context.Background(), &RunRequest{Experiment: "first", Repeat: 1}, func(p Progress) { events = append(events, p) })
	var rerr *RunError
	if !errors.As(err, &rerr) {
		t.Fatalf("Run error = %v, want the plugin's RunError", err)
	}
	for _, w := range []string{`metric "ratio"`, "NaN", `metric "thread_ms"`, "+Inf", "finite"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Run error %q does not contain %q", err, w)
		}
	}
	if len(events) != 1 || len(events[0].Samples) != 1 || events[0].Samples[0].Metric != "process_ms" {
		t.Errorf("progress events %+v, want one carrying only the finite sample", events)
	}
	if resp == nil || len(resp.Samples) != 1 || resp.Samples[0].Metric != "process_ms" {
		t.Errorf("response %+v, want the finite sample kept", resp)
	}
}
