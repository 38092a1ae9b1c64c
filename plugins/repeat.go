//go:build linux

package plugins

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Trial is one repeat of a run, handed to the function Repeat calls for
// each: run the workload, map its output to samples.
type Trial struct {
	// Index is the repeat, from 0; Total is how many the run has.
	Index, Total int
	// Experiment is the experiment as the description declares it.
	Experiment *Experiment
	// Params holds every parameter of the experiment, checked and in
	// canonical form (see Description.Resolve).
	Params map[string]string
	// WorkloadDir holds the plugin's workload binaries.
	WorkloadDir string

	log    *strings.Builder
	libc   string
	stderr string
}

// RunWorkload runs workload name (a file in WorkloadDir) like the function
// RunWorkload, and keeps what Repeat reports about it: its command line and
// output in the run's log, the libc it names in the environment, and the
// end of its stderr in the outcome if the repeat fails.
func (t *Trial) RunWorkload(ctx context.Context, name string, args ...string) (*WorkloadResult, error) {
	path := filepath.Join(t.WorkloadDir, name)
	fmt.Fprintf(t.log, "repeat %d/%d: %s\n", t.Index+1, t.Total, strings.Join(append([]string{path}, args...), " "))
	res, err := RunWorkload(ctx, path, args...)
	if res != nil {
		t.log.WriteString(res.Stdout)
		t.stderr = res.Stderr
		if t.libc == "" {
			t.libc = res.Libc()
		}
	}
	return res, err
}

// stderrTail is the end of the last workload's stderr, or "".
func (t *Trial) stderrTail() string {
	if strings.TrimSpace(t.stderr) == "" {
		return ""
	}
	return tail(t.stderr)
}

// Sample is a sample of metric for this repeat, in the unit the
// description gives the metric.
func (t *Trial) Sample(metric string, value float64) Sample {
	s := Sample{Metric: metric, Value: value, Repeat: t.Index}
	for _, m := range t.Experiment.Metrics {
		if m.Name == metric {
			s.Unit = m.Unit
		}
	}
	return s
}

// Samples maps one workload run to a sample of every metric of the
// experiment, in the description's order: real_s, user_s and sys_s are the
// run's times (RealS, UserS, SysS), max_rss_kb its peak RSS, and any other
// metric is the workload's own `metric value` line, which must be there.
func (t *Trial) Samples(res *WorkloadResult) ([]Sample, error) {
	out := make([]Sample, 0, len(t.Experiment.Metrics))
	for _, m := range t.Experiment.Metrics {
		var v float64
		switch m.Name {
		case "real_s":
			v = res.RealS
		case "user_s":
			v = res.UserS
		case "sys_s":
			v = res.SysS
		case "max_rss_kb":
			v = float64(res.MaxRSSKB)
		default:
			var err error
			if v, err = res.Float(m.Name); err != nil {
				return nil, err
			}
		}
		out = append(out, t.Sample(m.Name, v))
	}
	return out, nil
}

// ExpectedCrash is what a repeat returns (wrapped or not) when its workload
// crashed the way the experiment expects, E1's thread-count segfault for
// instance: the crash is a finding, not a failure. Repeat runs the other
// repeats too and ends with outcome expected-crash, naming the first
// crash and counting them, keeping the samples every repeat returned.
type ExpectedCrash struct {
	Reason string
}

func (e *ExpectedCrash) Error() string { return "expected crash: " + e.Reason }

// Repeat runs an experiment of the plugin described by desc: it checks the
// request, then calls each once per repeat (req.Repeat times, at least
// once) and owns everything around it:
//   - a progress event after every repeat, carrying that repeat's samples,
//     so what was measured survives the plugin or the guest dying mid-run;
//   - the environment (CollectEnv, and the libc the workloads name);
//   - the outcome: ok; failed, with the repeat and the error as the reason,
//     the failing workload's stderr, the samples of the repeats before
//     and those the failing repeat returned with its error (what it
//     measured before it failed);
//     or an expected crash (see ExpectedCrash), recorded as data;
//   - refusing samples that are not finite, naming the metric (a failed
//     outcome);
//   - a log of the workloads run and what they printed.
//
// Its error is for a run that could not be carried out as asked: a bad
// request, or ctx ended (then the response holds the samples so far).
func Repeat(ctx context.Context, desc *Description, req *RunRequest, progress func(Progress), each func(ctx context.Context, t *Trial) ([]Sample, error)) (*RunResponse, error) {
	exp, params, err := desc.Resolve(req.Experiment, req.Params)
	if err != nil {
		return nil, err
	}
	// A dynamically linked build needs the guest's shared libc.
	if err := CheckBuildRuns(params[ParamBuild]); err != nil {
		return nil, fmt.Errorf("%s %s: %w", desc.Name, exp.Name, err)
	}
	dir := req.WorkloadDir
	if dir == "" {
		if dir, err = WorkloadDir(); err != nil {
			return nil, fmt.Errorf("%s %s: %w", desc.Name, exp.Name, err)
		}
	}
	if progress == nil {
		progress = func(Progress) {}
	}
	total := max(req.Repeat, 1)
	resp := &RunResponse{Env: CollectEnv(), Outcome: Outcome{Status: StatusOK}}
	var log strings.Builder
	defer func() { resp.Log = log.String() }()
	// An expected crash does not end the run: every repeat runs, and the
	// outcome names the first crash and counts them.
	crashes, first, tail := 0, "", ""
	for i := range total {
		t := &Trial{Index: i, Total: total, Experiment: exp, Params: params, WorkloadDir: dir, log: &log}
		samples, err := each(ctx, t)
		if resp.Env.Libc == "" {
			resp.Env.Libc = t.libc
		}
		if ctx.Err() != nil {
			return resp, fmt.Errorf("%s %s: repeat %d/%d: %w", desc.Name, exp.Name, i+1, total, context.Cause(ctx))
		}
		var crash *ExpectedCrash
		finite := CheckFinite(samples)
		if finite != nil {
			err = finite
		}
		if err != nil && !errors.As(err, &crash) {
			// What the failed repeat measured before it failed is kept,
			// marked with its repeat (never a non-finite value).
			if finite == nil && len(samples) > 0 {
				resp.Samples = append(resp.Samples, samples...)
				progress(Progress{Done: i, Total: total, Message: fmt.Sprintf("repeat %d/%d failed after %d sample(s)", i+1, total, len(samples)), Samples: samples})
			}
			resp.Outcome = Outcome{Status: StatusFailed, Reason: fmt.Sprintf("repeat %d/%d: %v", i+1, total, err), StderrTail: t.stderrTail()}
			return resp, nil
		}
		resp.Samples = append(resp.Samples, samples...)
		progress(Progress{Done: i + 1, Total: total, Message: summary(exp, samples), Samples: samples})
		if crash != nil {
			crashes++
			if first == "" {
				first, tail = fmt.Sprintf("repeat %d/%d: %s", i+1, total, crash.Reason), t.stderrTail()
			}
		}
	}
	if crashes > 0 {
		resp.Outcome = Outcome{Status: StatusExpectedCrash, Reason: fmt.Sprintf("%s (%d of %d repeats crashed)", first, crashes, total), StderrTail: tail}
	}
	return resp, nil
}

// summary is a progress message: the experiment's first two samples.
func summary(exp *Experiment, samples []Sample) string {
	var parts []string
	for _, s := range samples[:min(2, len(samples))] {
		parts = append(parts, fmt.Sprintf("%s %.4g %s", s.Metric, s.Value, s.Unit))
	}
	return exp.Name + ": " + strings.Join(parts, ", ")
}
