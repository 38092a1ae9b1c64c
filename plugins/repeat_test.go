package plugins

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// repeatDescription has one experiment measuring t (ms) and real_s.
func repeatDescription() *Description {
	return &Description{Name: "rep", Version: "1", Experiments: []Experiment{{
		Name:    "e",
		Params:  []Param{{Name: "fail_at", Type: TypeInt, Default: "0", Help: "repeat (1-based) that fails; 0 for none"}},
		Metrics: []Metric{{Name: "t", Unit: "ms"}, {Name: "real_s", Unit: "s"}},
	}}}
}

// workloadDir holds one workload, "w": it prints `t N` where N is its
// first argument, `libc glibc-test`, and exits 3 with a message on stderr
// when its first argument is "fail".
func workloadDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	body := `#!/bin/sh
if [ "$1" = fail ]; then echo "w: told to fail" >&2; exit 3; fi
echo "t $1"
echo "libc glibc-test"
`
	if err := os.WriteFile(filepath.Join(dir, "w"), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// measure runs w with the repeat's number, or "fail" at fail_at.
func measure(ctx context.Context, t *Trial) ([]Sample, error) {
	arg := fmt.Sprint(t.Index + 1)
	if t.Params["fail_at"] == arg {
		arg = "fail"
	}
	res, err := t.RunWorkload(ctx, "w", arg)
	if err != nil {
		return nil, err
	}
	return t.Samples(res)
}

func TestRepeatOK(t *testing.T) {
	dir := workloadDir(t)
	var events []Progress
	resp, err := Repeat(context.Background(), repeatDescription(), &RunRequest{Repeat: 3, WorkloadDir: dir},
		func(p Progress) { events = append(events, p) }, measure)
	if err != nil {
		t.Fatalf("Repeat: %v", err)
	}
	if resp.Outcome != (Outcome{Status: StatusOK}) {
		t.Errorf("outcome = %+v, want ok", resp.Outcome)
	}
	if got, want := len(resp.Samples), 3*2; got != want {
		t.Fatalf("%d samples, want %d", got, want)
	}
	for i, s := range resp.Samples {
		if s.Repeat != i/2 {
			t.Errorf("sample %d = %+v, want repeat %d", i, s, i/2)
		}
	}
	if s := resp.Samples[2]; s.Metric != "t" || s.Value != 2 || s.Unit != "ms" {
		t.Errorf("repeat 2's first sample = %+v, want t = 2 ms (the unit from the description)", s)
	}
	if len(events) != 3 {
		t.Fatalf("%d progress events, want one per repeat: %+v", len(events), events)
	}
	for i, p := range events {
		if p.Done != i+1 || p.Total != 3 || len(p.Samples) != 2 || p.Samples[0].Repeat != i {
			t.Errorf("event %d = %+v, want %d/3 with that repeat's 2 samples", i, p, i+1)
		}
	}
	if !strings.HasPrefix(events[0].Message, "e: t 1 ms") {
		t.Errorf("progress message %q, want the first samples", events[0].Message)
	}
	if resp.Env.Libc != "glibc-test" || resp.Env.KernelRelease == "" {
		t.Errorf("env = %+v, want the workload's libc and the kernel", resp.Env)
	}
	if !strings.Contains(resp.Log, "repeat 3/3: "+filepath.Join(dir, "w")+" 3\nt 3\n") {
		t.Errorf("log does not show the workloads and their output:\n%s", resp.Log)
	}
}

// A failing repeat ends the run with a failed outcome naming the repeat,
// the workload's stderr, and the samples of the repeats before it.
func TestRepeatFailure(t *testing.T) {
	dir := workloadDir(t)
	var events int
	resp, err := Repeat(context.Background(), repeatDescription(),
		&RunRequest{Params: map[string]string{"fail_at": "2"}, Repeat: 3, WorkloadDir: dir},
		func(Progress) { events++ }, measure)
	if err != nil {
		t.Fatalf("Repeat: %v (a failing workload is an outcome, not an error)", err)
	}
	if resp.Outcome.Status != StatusFailed || !strings.Contains(resp.Outcome.Reason, "repeat 2/3") ||
		!strings.Contains(resp.Outcome.Reason, "exited with status 3") {
		t.Errorf("outcome = %+v, want failed at repeat 2/3 with the exit status", resp.Outcome)
	}
	if !strings.Contains(resp.Outcome.StderrTail, "told to fail") {
		t.Errorf("stderr tail %q, want the workload's", resp.Outcome.StderrTail)
	}
	if len(resp.Samples) != 2 || events != 1 {
		t.Errorf("%d samples, %d events; want repeat 1's 2 samples and 1 event", len(resp.Samples), events)
	}
}

func TestRepeatExpectedCrash(t *testing.T) {
	// Every repeat runs, so that a point that crashes in some repeats and
	// not others shows it (issue 30); the outcome counts the crashes.
	resp, err := Repeat(context.Background(), repeatDescription(), &RunRequest{Repeat: 5, WorkloadDir: t.TempDir()}, nil,
		func(_ context.Context, tr *Trial) ([]Sample, error) {
			if tr.Index == 1 || tr.Index == 3 {
				return []Sample{tr.Sample("t", 350)}, fmt.Errorf("sweep: %w", &ExpectedCrash{Reason: "segmentation fault at 350 threads"})
			}
			return []Sample{tr.Sample("t", 1)}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Outcome.Status != StatusExpectedCrash || resp.Outcome.Reason != "repeat 2/5: segmentation fault at 350 threads (2 of 5 repeats crashed)" {
		t.Errorf("outcome = %+v, want the expected crash at repeat 2/5, 2 of 5 crashed", resp.Outcome)
	}
	if len(resp.Samples) != 5 || resp.Samples[1].Value != 350 || resp.Samples[4].Value != 1 {
		t.Errorf("samples = %+v, want all five, the crashing repeats' included", resp.Samples)
	}
}

func TestRepeatRefusesNonFinite(t *testing.T) {
	resp, err := Repeat(context.Background(), repeatDescription(), &RunRequest{Repeat: 3, WorkloadDir: t.TempDir()}, nil,
		func(_ context.Context, tr *Trial) ([]Sample, error) {
			v := 1.0
			if tr.Index == 1 {
				v = math.Inf(-1)
			}
			return []Sample{tr.Sample("t", v)}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Outcome.Status != StatusFailed || !strings.Contains(resp.Outcome.Reason, "metric t") {
		t.Errorf("outcome = %+v, want failed naming metric t", resp.Outcome)
	}
	if len(resp.Samples) != 1 {
		t.Errorf("samples = %+v, want only repeat 1's", resp.Samples)
	}
}

// A cancelled run is an error, keeping the samples measured so far.
func TestRepeatCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := Repeat(ctx, repeatDescription(), &RunRequest{Repeat: 100, WorkloadDir: t.TempDir()}, func(Progress) { cancel() },
		func(ctx context.Context, tr *Trial) ([]Sample, error) {
			if tr.Index == 1 {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return []Sample{tr.Sample("t", 1)}, nil
		})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "repeat 2/100") {
		t.Errorf("Repeat error = %v, want context.Canceled at repeat 2/100", err)
	}
	if resp == nil || len(resp.Samples) != 1 {
		t.Errorf("response %+v, want repeat 1's sample", resp)
	}
}

func TestRepeatBadRequest(t *testing.T) {
	called := false
	_, err := Repeat(context.Background(), repeatDescription(), &RunRequest{Experiment: "nosuch", WorkloadDir: t.TempDir()}, nil,
		func(context.Context, *Trial) ([]Sample, error) { called = true; return nil, nil })
	if err == nil || !strings.Contains(err.Error(), `no experiment "nosuch"`) || called {
		t.Errorf("Repeat error = %v (measured: %v), want the bad experiment refused before measuring", err, called)
	}
}

// A deadline reaches the workload: Repeat returns promptly.
func TestRepeatDeadlineKillsWorkload(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w"), []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Repeat(ctx, repeatDescription(), &RunRequest{WorkloadDir: dir}, nil, measure)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Repeat error = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Repeat took %v after a 200ms deadline", d)
	}
}

// TestRepeatFailureKeepsPartial: a repeat that fails after measuring part
// of its work (netbench's designs before the one whose server died)
// returns those samples with its error, and they are kept, marked with
// their repeat, beside the earlier repeats'; a non-finite one still fails
// the run without being kept.
func TestRepeatFailureKeepsPartial(t *testing.T) {
	each := func(_ context.Context, tr *Trial) ([]Sample, error) {
		s := tr.Sample("t", 1)
		if tr.Index == 1 {
			return []Sample{s}, errors.New("the server of design 3 died")
		}
		return []Sample{s, tr.Sample("t", 2)}, nil
	}
	var events []Progress
	resp, err := Repeat(context.Background(), repeatDescription(), &RunRequest{Repeat: 3, WorkloadDir: t.TempDir()},
		func(p Progress) { events = append(events, p) }, each)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Outcome.Status != StatusFailed || !strings.Contains(resp.Outcome.Reason, "repeat 2/3: the server of design 3 died") {
		t.Errorf("outcome %+v", resp.Outcome)
	}
	if len(resp.Samples) != 3 || resp.Samples[2].Repeat != 1 {
		t.Errorf("samples %+v: want repeat 1's two and the failed repeat's one (repeat index 1)", resp.Samples)
	}
	if len(events) != 2 || len(events[1].Samples) != 1 {
		t.Errorf("progress %+v: want the failed repeat's sample sent too", events)
	}
	nan := func(_ context.Context, tr *Trial) ([]Sample, error) {
		return []Sample{tr.Sample("t", math.NaN())}, errors.New("broke")
	}
	resp, _ = Repeat(context.Background(), repeatDescription(), &RunRequest{WorkloadDir: t.TempDir()}, nil, nan)
	if len(resp.Samples) != 0 || resp.Outcome.Status != StatusFailed {
		t.Errorf("a non-finite partial sample was kept: %+v", resp)
	}
}

// TestRepeatDynamicBuildWithoutLibc: a dynamic build asked of a guest
// without the shared libc fails before its first repeat, naming the
// build, the missing loader and the command that adds it, and measures
// nothing; the static build runs.
func TestRepeatDynamicBuildWithoutLibc(t *testing.T) {
	old := loaders
	t.Cleanup(func() { loaders = old })
	missing := filepath.Join(t.TempDir(), "ld-linux.so.2")
	loaders = map[string]string{runtime.GOARCH: missing}

	desc := repeatDescription()
	desc.Experiments[0].Params = append(desc.Experiments[0].Params, Param{Name: ParamBuild, Type: TypeString,
		Default: "static-O2", Choices: []string{"static-O2", "dynamic-O0"}, Help: "build"})
	calls := 0
	counted := func(ctx context.Context, t *Trial) ([]Sample, error) { calls++; return measure(ctx, t) }
	_, err := Repeat(context.Background(), desc, &RunRequest{Repeat: 2, WorkloadDir: workloadDir(t),
		Params: map[string]string{ParamBuild: "dynamic-O0"}}, nil, counted)
	if err == nil || calls != 0 {
		t.Fatalf("dynamic-O0 without libc: err %v after %d repeats, want an error before any", err, calls)
	}
	for _, want := range []string{"rep e", "build dynamic-O0 is dynamically linked", missing, "lab image fetch"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	resp, err := Repeat(context.Background(), desc, &RunRequest{Repeat: 2, WorkloadDir: workloadDir(t)}, nil, counted)
	if err != nil || calls != 2 || len(resp.Samples) == 0 {
		t.Errorf("static-O2: %v after %d repeats, want 2 repeats measured", err, calls)
	}
}
