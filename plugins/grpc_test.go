package plugins

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"lab/plugins/wire"
)

// fakeBench is a Benchmark whose Run is one closure.
type fakeBench struct {
	run func(ctx context.Context, req *RunRequest, progress func(Progress)) (*RunResponse, error)
}

func (f *fakeBench) Run(ctx context.Context, req *RunRequest, progress func(Progress)) (*RunResponse, error) {
	return f.run(ctx, req, progress)
}

// connect serves b, described by testDescription, in-process over
// go-plugin gRPC and returns the host's Client for it.
func connect(t *testing.T, b Benchmark, multiplex bool) *Client {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, multiplex, map[string]plugin.Plugin{
		PluginName: &testGRPCPlugin{Description: testDescription(), Impl: b},
	})
	// Close shuts the server down through go-plugin's controller;
	// calling server.Stop as well races inside go-plugin.
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(PluginName)
	if err != nil {
		t.Fatalf("Dispense: %v", err)
	}
	return raw.(*Client)
}

// testGRPCPlugin is host.GRPCPlugin (which this package cannot import),
// for go-plugin's in-process test harness.
type testGRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Description *Description
	Impl        Benchmark
}

func (p *testGRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	RegisterBenchmark(s, p.Description, p.Impl)
	return nil
}

func (p *testGRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return NewClient(c), nil
}

// Every field of every message survives the SDK -> wire -> SDK round trip
// in binary protobuf, NaN-free values and empty ones included.
func TestWireRoundTrip(t *testing.T) {
	resp := &RunResponse{
		Samples: []Sample{{Metric: "fork_wait_us", Value: 87.5, Unit: "µs", Repeat: 2, Labels: map[string]string{"n": "200"}}},
		Env: GuestEnv{Uname: "Linux 6.1.0 #1 SMP i686", KernelRelease: "6.1.0", CPUModel: "Celeron", CPUFamily: 15,
			CPUModelNum: 2, OnlineCPUs: 1, PresentCPUs: 2, MemTotalKB: 250000, StackKB: -1, Libc: "glibc-2.36"},
		Outcome: Outcome{Status: StatusExpectedCrash, Reason: "x", StderrTail: "boom\n"},
		Log:     "line 1\nline 2\n",
	}
	b, err := proto.Marshal(responseToWire(resp))
	if err != nil {
		t.Fatal(err)
	}
	var w wire.RunResponse
	if err := proto.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	if got := responseFromWire(&w); !reflect.DeepEqual(got, resp) {
		t.Errorf("response round trip: got %+v, want %+v", got, resp)
	}

	d := testDescription()
	d.Summary = "s"
	d.Experiments[0].References = []Reference{{Experiment: "E2", Source: "src", Machine: "m", Profile: "p",
		Metric: "t", Value: 1, Unit: "s", Labels: map[string]string{"k": "v"}, Note: "n"}}
	if b, err = proto.Marshal(descriptionToWire(d)); err != nil {
		t.Fatal(err)
	}
	var wd wire.Description
	if err := proto.Unmarshal(b, &wd); err != nil {
		t.Fatal(err)
	}
	if got := descriptionFromWire(&wd); !reflect.DeepEqual(got, d) {
		t.Errorf("description round trip: got %+v, want %+v", got, d)
	}

	req := &RunRequest{Experiment: "first", Params: map[string]string{"n": "5"}, Repeat: 3, WorkloadDir: "/w"}
	if got := requestFromWire(requestToWire(req)); !reflect.DeepEqual(got, req) {
		t.Errorf("request round trip: got %+v, want %+v", got, req)
	}
}

func TestDescribe(t *testing.T) {
	for _, multiplex := range []bool{false, true} {
		b := connect(t, &fakeBench{}, multiplex)
		got, err := b.Describe(context.Background())
		if err != nil {
			t.Fatalf("multiplex=%v: Describe: %v", multiplex, err)
		}
		if want := testDescription(); !reflect.DeepEqual(got, want) {
			t.Errorf("multiplex=%v: Describe = %+v, want %+v", multiplex, got, want)
		}
	}
}

func TestRunStreamsProgressThenResult(t *testing.T) {
	want := &RunResponse{
		Samples: []Sample{{Metric: "t", Value: 1.5, Unit: "s"}, {Metric: "t", Value: 1.6, Unit: "s", Repeat: 1}},
		Outcome: Outcome{Status: StatusOK},
		Log:     "ran",
	}
	var gotReq *RunRequest
	b := connect(t, &fakeBench{run: func(ctx context.Context, req *RunRequest, progress func(Progress)) (*RunResponse, error) {
		gotReq = req
		for i := range 3 {
			progress(Progress{Done: i + 1, Total: 3, Message: "step"})
		}
		return want, nil
	}}, true)

	// The server fills in the defaults the request left out.
	req := &RunRequest{Experiment: "first", Params: map[string]string{"n": "5"}, Repeat: 3, WorkloadDir: "/w"}
	wantReq := &RunRequest{Experiment: "first", Params: map[string]string{
		"n": "5", "scale": "1.5", "mode": "fast", "label": "", "verbose": "false", "timeout": "30s",
	}, Repeat: 3, WorkloadDir: "/w"}
	var events []Progress
	got, err := b.Run(context.Background(), req, func(p Progress) { events = append(events, p) })
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !reflect.DeepEqual(gotReq, wantReq) {
		t.Errorf("plugin got request %+v, want %+v", gotReq, wantReq)
	}
	wantEvents := []Progress{{Done: 1, Total: 3, Message: "step"}, {Done: 2, Total: 3, Message: "step"}, {Done: 3, Total: 3, Message: "step"}}
	if !reflect.DeepEqual(events, wantEvents) {
		t.Errorf("progress = %+v, want %+v", events, wantEvents)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("response = %+v, want %+v", got, want)
	}
}

func TestRunError(t *testing.T) {
	partial := &RunResponse{Samples: []Sample{{Metric: "t", Value: 1, Unit: "s"}}}
	b := connect(t, &fakeBench{run: func(context.Context, *RunRequest, func(Progress)) (*RunResponse, error) {
		return partial, errors.New("workload dir /w: no such directory")
	}}, true)
	got, err := b.Run(context.Background(), &RunRequest{Experiment: "first"}, nil)
	var runErr *RunError
	if !errors.As(err, &runErr) || !strings.Contains(err.Error(), "no such directory") {
		t.Fatalf("Run error = %v, want a RunError with the plugin's message", err)
	}
	if !reflect.DeepEqual(got, partial) {
		t.Errorf("response with error = %+v, want %+v", got, partial)
	}
}

func TestRunCancelReachesPlugin(t *testing.T) {
	pluginSaw := make(chan error, 1)
	b := connect(t, &fakeBench{run: func(ctx context.Context, _ *RunRequest, progress func(Progress)) (*RunResponse, error) {
		progress(Progress{Done: 0, Total: 1, Message: "started"})
		<-ctx.Done()
		pluginSaw <- ctx.Err()
		return nil, ctx.Err()
	}}, true)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := b.Run(ctx, &RunRequest{Experiment: "first"}, func(Progress) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run error = %v, want context.Canceled", err)
	}
	select {
	case perr := <-pluginSaw:
		if !errors.Is(perr, context.Canceled) {
			t.Errorf("plugin ctx error = %v, want context.Canceled", perr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("plugin's Run ctx was not cancelled within 10s of the host cancelling")
	}
}

// brokenServer ends every Run stream without a done event, as a plugin
// that dies mid-run does.
type brokenServer struct {
	wire.UnimplementedBenchmarkServer
}

func (brokenServer) Run(_ *wire.RunRequest, stream wire.Benchmark_RunServer) error {
	return stream.Send(&wire.RunEvent{Event: &wire.RunEvent_Progress{Progress: &wire.Progress{Done: 1, Total: 2}}})
}

func TestRunWithoutDoneIsError(t *testing.T) {
	conn, server := plugin.TestGRPCConn(t, func(s *grpc.Server) { wire.RegisterBenchmarkServer(s, brokenServer{}) })
	t.Cleanup(func() {
		conn.Close()
		server.Stop()
	})
	var events int
	_, err := NewClient(conn).Run(context.Background(), &RunRequest{Experiment: "x"}, func(Progress) { events++ })
	if err == nil || !strings.Contains(err.Error(), "without a done event") {
		t.Errorf("Run error = %v, want one saying the stream ended without a done event", err)
	}
	if events != 1 {
		t.Errorf("got %d progress events, want 1", events)
	}
}

// A request the description refuses never reaches the plugin's Run.
func TestRunBadRequestRefusedByServer(t *testing.T) {
	called := false
	b := connect(t, &fakeBench{run: func(context.Context, *RunRequest, func(Progress)) (*RunResponse, error) {
		called = true
		return &RunResponse{}, nil
	}}, true)
	_, err := b.Run(context.Background(), &RunRequest{Experiment: "first", Params: map[string]string{"n": "0"}}, nil)
	var runErr *RunError
	if !errors.As(err, &runErr) || !strings.Contains(err.Error(), "parameter n") {
		t.Errorf("Run(n=0) error = %v, want a RunError naming parameter n", err)
	}
	if called {
		t.Error("the plugin's Run was called with a request its description refuses")
	}
}

// A plugin in another language could send NaN anyway: the host's Client
// refuses it too.
type nanServer struct {
	wire.UnimplementedBenchmarkServer
}

func (nanServer) Run(_ *wire.RunRequest, stream wire.Benchmark_RunServer) error {
	return stream.Send(&wire.RunEvent{Event: &wire.RunEvent_Done{Done: &wire.Done{Response: &wire.RunResponse{
		Samples: []*wire.Sample{{Metric: "lat", Value: math.NaN()}},
	}}}})
}

func TestClientRefusesNonFinite(t *testing.T) {
	conn, server := plugin.TestGRPCConn(t, func(s *grpc.Server) { wire.RegisterBenchmarkServer(s, nanServer{}) })
	t.Cleanup(func() {
		conn.Close()
		server.Stop()
	})
	_, err := NewClient(conn).Run(context.Background(), &RunRequest{Experiment: "x"}, nil)
	if err == nil || !strings.Contains(err.Error(), "metric lat") {
		t.Errorf("Run error = %v, want one naming metric lat", err)
	}
}
