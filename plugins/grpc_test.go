package plugins

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"

	"lab/results"
)

// fakeBench is a Benchmark whose Run is one closure.
type fakeBench struct {
	run func(ctx context.Context, req *RunRequest, progress func(Progress)) (*RunResponse, error)
}

func (f *fakeBench) Describe(context.Context) (*Description, error) { return testDescription(), nil }

func (f *fakeBench) Run(ctx context.Context, req *RunRequest, progress func(Progress)) (*RunResponse, error) {
	return f.run(ctx, req, progress)
}

// connect serves b in-process over go-plugin gRPC and returns the host's
// Benchmark for it.
func connect(t *testing.T, b Benchmark, multiplex bool) Benchmark {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, multiplex, map[string]plugin.Plugin{PluginName: &BenchmarkPlugin{Impl: b}})
	// Close shuts the server down through go-plugin's controller;
	// calling server.Stop as well races inside go-plugin.
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(PluginName)
	if err != nil {
		t.Fatalf("Dispense: %v", err)
	}
	return raw.(Benchmark)
}

func TestCodecRoundTrip(t *testing.T) {
	codec := encoding.GetCodec(codecName)
	if codec == nil {
		t.Fatalf("no codec registered for %q", codecName)
	}
	in := &RunEvent{Type: EventDone, Response: &RunResponse{
		Samples: []results.Sample{{Metric: "fork_wait_us", Value: 87.5, Unit: "µs", Repeat: 2, Labels: map[string]string{"n": "200"}}},
		Env:     results.GuestEnv{Uname: "Linux 6.1.0 #1 SMP i686", OnlineCPUs: 1, StackKB: -1, Libc: "glibc-2.36"},
		Outcome: results.Outcome{Status: "failed", Reason: "x", StderrTail: "boom\n"},
		Log:     "line 1\nline 2\n",
	}}
	b, err := codec.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"type":"done"`) {
		t.Errorf("wire form %s is not the readable JSON we promise", b)
	}
	var out RunEvent
	if err := codec.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&out, in) {
		t.Errorf("round trip: got %+v, want %+v", out, in)
	}

	d := testDescription()
	d.Experiments[0].References = []results.Reference{{Experiment: "E2", Metric: "t", Value: 1, Unit: "s"}}
	if b, err = codec.Marshal(d); err != nil {
		t.Fatal(err)
	}
	var d2 Description
	if err := codec.Unmarshal(b, &d2); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&d2, d) {
		t.Errorf("description round trip: got %+v, want %+v", d2, d)
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
		Samples: []results.Sample{{Metric: "t", Value: 1.5, Unit: "s"}, {Metric: "t", Value: 1.6, Unit: "s", Repeat: 1}},
		Outcome: results.Outcome{Status: "ok"},
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

	req := &RunRequest{Experiment: "first", Params: map[string]string{"n": "5"}, Repeat: 3, WorkloadDir: "/w"}
	var events []Progress
	got, err := b.Run(context.Background(), req, func(p Progress) { events = append(events, p) })
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !reflect.DeepEqual(gotReq, req) {
		t.Errorf("plugin got request %+v, want %+v", gotReq, req)
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
	partial := &RunResponse{Samples: []results.Sample{{Metric: "t", Value: 1, Unit: "s"}}}
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
type brokenServer struct{}

func (brokenServer) describe(context.Context) (*Description, error) { return &Description{}, nil }

func (brokenServer) run(_ *RunRequest, stream grpc.ServerStream) error {
	return stream.SendMsg(&RunEvent{Type: EventProgress, Progress: &Progress{Done: 1, Total: 2}})
}

func TestRunWithoutDoneIsError(t *testing.T) {
	conn, server := plugin.TestGRPCConn(t, func(s *grpc.Server) { s.RegisterService(&serviceDesc, brokenServer{}) })
	t.Cleanup(func() {
		conn.Close()
		server.Stop()
	})
	var events int
	_, err := (&grpcClient{conn: conn}).Run(context.Background(), &RunRequest{Experiment: "x"}, func(Progress) { events++ })
	if err == nil || !strings.Contains(err.Error(), "without a done event") {
		t.Errorf("Run error = %v, want one saying the stream ended without a done event", err)
	}
	if events != 1 {
		t.Errorf("got %d progress events, want 1", events)
	}
}
