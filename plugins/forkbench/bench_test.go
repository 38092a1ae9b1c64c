package main

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"lab/plugins"
	"lab/plugins/host"
	"lab/plugins/plugintest"
)

// testBench is forkbench as main serves it.
func testBench() bench { return bench{desc: plugins.MustParseDescription(description)} }

// buildWorkloads compiles the C workloads with cc for the host, as `lab
// plugin build` does for the guests (plugintest.BuildWorkloads).
func buildWorkloads(t *testing.T, cc string) string {
	t.Helper()
	return plugintest.BuildWorkloads(t, cc, []string{"forktime", "create", "switch"})
}

func TestDescription(t *testing.T) {
	d, err := plugins.ParseDescription(description)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "forkbench" {
		t.Errorf("name = %q, want forkbench (the directory's)", d.Name)
	}
	if got := d.Experiments[0].Name; got != "forktime" {
		t.Errorf("default experiment = %q, want forktime", got)
	}
	for _, e := range d.Experiments {
		if _, ok := workloads[e.Name]; !ok {
			t.Errorf("experiment %s has no workload", e.Name)
		}
		// E1 states its switch claim without a figure (E1.11).
		if len(e.References) == 0 && e.Name != "switch" {
			t.Errorf("experiment %s has no published figures", e.Name)
		}
		for _, r := range e.References {
			if r.Experiment == "" || r.Source == "" || r.Machine == "" || r.Value <= 0 {
				t.Errorf("experiment %s: incomplete reference %+v", e.Name, r)
			}
		}
	}
	// The claims of SEEDS.md forkbench decides, each with its experiment;
	// E2.1 is split by machine, its Solaris rows untestable here.
	want := map[string]struct{ exp, kind string }{
		"E1.6": {"create", plugins.KindRatio}, "E1.7": {"create", plugins.KindRange}, "E1.10": {"create", plugins.KindRatio},
		"E1.11": {"switch", plugins.KindRatio},
		"E2.1a": {"forktime", plugins.KindRatio}, "E2.1b": {"forktime", plugins.KindRatio}, "E2.1c": {"forktime", plugins.KindUntestable},
	}
	got := map[string]struct{ exp, kind string }{}
	for _, e := range d.Experiments {
		for _, c := range e.Claims {
			got[c.ID] = struct{ exp, kind string }{e.Name, c.Kind()}
			if c.Rationale == "" || c.Machine == "" {
				t.Errorf("claim %s does not say where its bounds come from or what it was measured on", c.ID)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("claims = %v, want %v", got, want)
	}
	_, params, err := d.Resolve("create", nil)
	if err != nil || params["m"] != "100000" {
		t.Errorf(`Resolve("create", nil) = %v, %v; want m=100000`, params, err)
	}
}

// TestClaimsScoped: every claim says which runs decide it (a scope with
// profiles, unless no run can), where its bounds come from, what the
// emulation cannot show, and the conventions it reads its words with.
func TestClaimsScoped(t *testing.T) {
	d := plugins.MustParseDescription(description)
	for _, e := range d.Experiments {
		for _, c := range e.Claims {
			untestable := c.Kind() == plugins.KindUntestable
			if !untestable && (c.Scope == nil || len(c.Scope.Profiles) == 0) {
				t.Errorf("claim %s has no scope.profiles: any run would decide it", c.ID)
			}
			if c.Rationale == "" || c.Fidelity == "" || c.SourceWords+c.DigestWords == "" || c.Machine == "" {
				t.Errorf("claim %s lacks rationale, fidelity, source words or machine", c.ID)
			}
			if len(c.Conventions) == 0 && !untestable {
				t.Errorf("claim %s names no word convention", c.ID)
			}
			// The parameter that sets the work done is fixed: the
			// verdict would otherwise mix sizes.
			if s := c.Scope; s != nil && len(s.Profiles) > 0 && s.Params[workloads[e.Name].param] == "" {
				t.Errorf("claim %s: scope params %v do not fix %s", c.ID, s.Params, workloads[e.Name].param)
			}
		}
	}
	// E1.7 is an absolute time: decided only under icount, against its
	// own calibration (the article's Celeron has no stated clock), with
	// the published figure's rounding band as bounds.
	for _, c := range d.Experiments[1].Claims {
		if c.ID != "E1.7" {
			continue
		}
		if !slices.Equal(c.Scope.Clocks, []string{plugins.ClockIcount}) {
			t.Errorf("E1.7 clocks %v, want icount only", c.Scope.Clocks)
		}
		if k := c.Calibration; k == nil || k.InstrPerNsLo != 0.4 || k.InstrPerNsHi != 2.1 || k.Confidence != "low" {
			t.Errorf("E1.7 calibration %+v, want 0.4..2.1 instructions per ns, confidence low", k)
		}
		if r := c.Range; r.Metric != "process_ms" || r.Unit != "ms" || *r.Min != 0.175 || *r.Max != 0.185 {
			t.Errorf("E1.7 range %+v, want process_ms in 0.175..0.185 ms", r)
		}
	}
}

// metricsOf groups samples by repeat, then by metric.
func metricsOf(samples []plugins.Sample) map[int]map[string]plugins.Sample {
	out := map[int]map[string]plugins.Sample{}
	for _, s := range samples {
		if out[s.Repeat] == nil {
			out[s.Repeat] = map[string]plugins.Sample{}
		}
		out[s.Repeat][s.Metric] = s
	}
	return out
}

func TestRunForktime(t *testing.T) {
	for _, cc := range []string{"gcc", "i686-linux-gnu-gcc"} {
		t.Run(cc, func(t *testing.T) {
			dir := buildWorkloads(t, cc)
			var events []plugins.Progress
			resp, err := testBench().Run(context.Background(), &plugins.RunRequest{
				Experiment: "forktime", Params: map[string]string{"n": "200"}, Repeat: 3, WorkloadDir: dir,
			}, func(p plugins.Progress) { events = append(events, p) })
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if resp.Outcome.Status != "ok" {
				t.Fatalf("outcome = %+v\nlog:\n%s", resp.Outcome, resp.Log)
			}
			if got, want := len(resp.Samples), 3*6; got != want {
				t.Errorf("%d samples, want %d (6 metrics x 3 repeats)", got, want)
			}
			byRepeat := metricsOf(resp.Samples)
			for r := range 3 {
				m := byRepeat[r]
				if u := m["fork_wait_us"].Unit; u != "µs" {
					t.Errorf("repeat %d: fork_wait_us unit %q, want µs", r, u)
				}
				for _, name := range []string{"fork_wait_us", "thread_create_join_us", "ratio", "real_s", "user_s", "sys_s"} {
					if _, ok := m[name]; !ok {
						t.Errorf("repeat %d: no %s sample", r, name)
					}
				}
				if m["real_s"].Value <= 0 || m["user_s"].Value+m["sys_s"].Value <= 0 {
					t.Errorf("repeat %d: real %v user %v sys %v; want time spent", r, m["real_s"].Value, m["user_s"].Value, m["sys_s"].Value)
				}
			}
			// The best of the repeats: a loaded host (tests run in
			// parallel) can delay one loop's wake-ups by milliseconds.
			fork, thread := best(resp.Samples, "fork_wait_us"), best(resp.Samples, "thread_create_join_us")
			if !(fork > thread && thread > 0) {
				t.Errorf("best fork_wait_us %v, thread_create_join_us %v; want fork > thread > 0", fork, thread)
			}
			if len(events) != 3 || events[2].Done != 3 || events[2].Total != 3 || !strings.Contains(events[0].Message, "fork_wait_us") {
				t.Errorf("progress = %+v, want one event per repeat", events)
			}
			if !strings.HasPrefix(resp.Env.Libc, "glibc-") || resp.Env.KernelRelease == "" {
				t.Errorf("env = %+v, want libc and kernel", resp.Env)
			}
			if !strings.Contains(resp.Log, "thread_create_join_us") {
				t.Errorf("log does not show the workload output:\n%s", resp.Log)
			}
		})
	}
}

func TestRunCreate(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	resp, err := testBench().Run(context.Background(), &plugins.RunRequest{
		Experiment: "create", Params: map[string]string{"m": "50"}, Repeat: 3, WorkloadDir: dir,
	}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if resp.Outcome.Status != "ok" {
		t.Fatalf("outcome = %+v", resp.Outcome)
	}
	if got, want := len(resp.Samples), 3*8; got != want {
		t.Errorf("%d samples, want %d (8 metrics x 3 repeats)", got, want)
	}
	if p, th := best(resp.Samples, "process_ms"), best(resp.Samples, "thread_ms"); !(p > th && th > 0) {
		t.Errorf("best process_ms %v, thread_ms %v; want process > thread > 0", p, th)
	}
	for r, m := range metricsOf(resp.Samples) {
		if ps, pms := m["process_s"].Value, m["process_ms"].Value; ps < pms*50/1000*0.99 || ps > pms*50/1000*1.01 {
			t.Errorf("repeat %d: process_s %v is not 50 x process_ms %v", r, ps, pms)
		}
	}
}

// TestRunSwitch: the switch workload passes its byte n times each way and
// reports a switch's cost for both pairs, and their ratio.
func TestRunSwitch(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	resp, err := testBench().Run(context.Background(), &plugins.RunRequest{
		Experiment: "switch", Params: map[string]string{"n": "200"}, Repeat: 2, WorkloadDir: dir,
	}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if resp.Outcome.Status != "ok" {
		t.Fatalf("outcome = %+v", resp.Outcome)
	}
	if got, want := len(resp.Samples), 2*6; got != want {
		t.Errorf("%d samples, want %d (6 metrics x 2 repeats)", got, want)
	}
	for r, m := range metricsOf(resp.Samples) {
		p, th, ratio := m["process_switch_us"].Value, m["thread_switch_us"].Value, m["ratio"].Value
		if p <= 0 || th <= 0 || math.Abs(ratio-p/th) > 0.01*ratio {
			t.Errorf("repeat %d: process %v µs, thread %v µs, ratio %v; want both > 0 and the ratio theirs", r, p, th, ratio)
		}
	}
}

// best is the smallest value of metric across repeats.
func best(samples []plugins.Sample, metric string) float64 {
	v := math.Inf(1)
	for _, s := range samples {
		if s.Metric == metric {
			v = min(v, s.Value)
		}
	}
	return v
}

func TestRunBadRequest(t *testing.T) {
	_, err := testBench().Run(context.Background(), &plugins.RunRequest{
		Experiment: "forktime", Params: map[string]string{"n": "0"}, WorkloadDir: t.TempDir(),
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "parameter n") {
		t.Errorf("Run(n=0) error = %v, want one naming parameter n", err)
	}
}

// A workload that cannot run is a failed outcome, not a Run error.
func TestRunMissingWorkload(t *testing.T) {
	resp, err := testBench().Run(context.Background(), &plugins.RunRequest{
		Experiment: "forktime", Params: map[string]string{"n": "5"}, WorkloadDir: t.TempDir(),
	}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if resp.Outcome.Status != "failed" || !strings.Contains(resp.Outcome.Reason, "forktime") {
		t.Errorf("outcome = %+v, want failed naming the workload", resp.Outcome)
	}
}

// A run past its deadline stops mid-workload (n = 1000000 takes minutes).
func TestRunDeadline(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := testBench().Run(ctx, &plugins.RunRequest{
		Experiment: "forktime", Params: map[string]string{"n": "1000000"}, WorkloadDir: dir,
	}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run error = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %v after a 300ms deadline", d)
	}
}

// The plugin as lab sees it: over go-plugin gRPC, in-process.
func TestOverGRPC(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	client, _ := plugin.TestPluginGRPCConn(t, true, map[string]plugin.Plugin{
		plugins.PluginName: &host.GRPCPlugin{Description: testBench().desc, Impl: testBench()},
	})
	// Close shuts the server down through go-plugin's controller;
	// calling server.Stop as well races inside go-plugin.
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(plugins.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	b := raw.(*plugins.Client)
	d, err := b.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d, testBench().desc) {
		t.Errorf("Describe = %+v, want description.json", d)
	}
	var events int
	resp, err := b.Run(context.Background(), &plugins.RunRequest{
		Params: map[string]string{"n": "50"}, Repeat: 1, WorkloadDir: dir,
	}, func(plugins.Progress) { events++ })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Outcome.Status != "ok" || len(resp.Samples) != 6 || events != 1 {
		t.Errorf("outcome %+v, %d samples, %d events; want ok, 6, 1", resp.Outcome, len(resp.Samples), events)
	}
}

// Cancelling on the host after the first repeat ends the plugin's run.
func TestOverGRPCCancel(t *testing.T) {
	dir := buildWorkloads(t, "gcc")
	client, _ := plugin.TestPluginGRPCConn(t, true, map[string]plugin.Plugin{
		plugins.PluginName: &host.GRPCPlugin{Description: testBench().desc, Impl: testBench()},
	})
	// Close shuts the server down through go-plugin's controller;
	// calling server.Stop as well races inside go-plugin.
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(plugins.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = raw.(*plugins.Client).Run(ctx, &plugins.RunRequest{
		Params: map[string]string{"n": "20"}, Repeat: 1000, WorkloadDir: dir,
	}, func(plugins.Progress) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run error = %v, want context.Canceled", err)
	}
}

// The built plugin, started as a subprocess the way lab starts it (minus
// the guest): handshake, Describe, Run with LAB_WORKLOAD_DIR.
func TestPluginBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin binary; skipped with -short")
	}
	dir := buildWorkloads(t, "gcc")
	exe := filepath.Join(t.TempDir(), "forkbench")
	build := exec.Command("go", "build", "-o", exe, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// The TLS material lab makes for a VM and hands the plugin, as in a
	// guest: the plugin serves only with it.
	vmTLS, err := host.EnsureTLS(t.TempDir(), "forkbench-test")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), plugins.WorkloadDirEnv+"="+dir), vmTLS.PluginEnv()...)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  host.Handshake,
		Plugins:          host.PluginMap,
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		TLSConfig:        vmTLS.ClientTLS(),
	})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rpc.Dispense(plugins.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	b := raw.(*plugins.Client)
	ctx := context.Background()
	if d, err := b.Describe(ctx); err != nil || !reflect.DeepEqual(d, testBench().desc) {
		t.Fatalf("Describe = %+v, %v; want description.json", d, err)
	}
	resp, err := b.Run(ctx, &plugins.RunRequest{Experiment: "create", Params: map[string]string{"m": "20"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Outcome.Status != "ok" || len(resp.Samples) != 8 {
		t.Errorf("outcome %+v, %d samples; want ok, 8\nlog:\n%s", resp.Outcome, len(resp.Samples), resp.Log)
	}
}
