package plugins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"

	"google.golang.org/grpc"

	"lab/plugins/wire"
)

// server serves the generated Benchmark service (binary protobuf) for a
// plugin: Describe from its description.json, Run through its Benchmark.
type server struct {
	wire.UnimplementedBenchmarkServer
	desc  *Description
	wdesc *wire.Description
	impl  Benchmark
}

func newServer(d *Description, impl Benchmark) *server {
	return &server{desc: d, wdesc: descriptionToWire(d), impl: impl}
}

// RegisterBenchmark registers the Benchmark service for impl, described by
// d, on s. Serve does this for a plugin; tests that serve a Benchmark in
// process (through go-plugin's test harness) call it themselves.
func RegisterBenchmark(s grpc.ServiceRegistrar, d *Description, impl Benchmark) {
	wire.RegisterBenchmarkServer(s, newServer(d, impl))
}

// Describe returns the plugin's description.json, as parsed.
func (s *server) Describe(context.Context, *wire.DescribeRequest) (*wire.Description, error) {
	return s.wdesc, nil
}

// Run checks the request against the description (defaults filled in, so
// Run always sees every parameter), calls the Benchmark with the stream's
// context (cancelled when the host cancels) and ends with a done event. A
// failed Run is reported in the done event, not as a gRPC error, so the
// host can tell the plugin's error from a broken connection.
//
// Protobuf could carry NaN and ±Inf, but they are not measurements and the
// host's result documents (JSON) cannot hold them: such samples are dropped
// here, from progress events and the response, and the run fails naming
// each one; the finite samples get through.
func (s *server) Run(wreq *wire.RunRequest, stream wire.Benchmark_RunServer) error {
	req := requestFromWire(wreq)
	exp, params, err := s.desc.Resolve(req.Experiment, req.Params)
	if err != nil {
		return stream.Send(doneEvent(nil, err))
	}
	req.Experiment, req.Params = exp.Name, params

	// Send must not be called concurrently, and progress may be called
	// from any goroutine of the plugin, even late.
	var (
		mu        sync.Mutex
		ended     bool
		sendErr   error
		nonFinite []string
	)
	progress := func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if ended || sendErr != nil {
			return
		}
		var bad []string
		p.Samples, bad = finiteSamples(p.Samples)
		nonFinite = append(nonFinite, bad...)
		sendErr = stream.Send(&wire.RunEvent{Event: &wire.RunEvent_Progress{Progress: progressToWire(&p)}})
	}
	resp, err := s.impl.Run(stream.Context(), req, progress)
	mu.Lock()
	defer mu.Unlock()
	ended = true
	if sendErr != nil {
		return sendErr
	}
	if resp != nil {
		r := *resp
		var bad []string
		r.Samples, bad = finiteSamples(resp.Samples)
		nonFinite = append(nonFinite, bad...)
		resp = &r
	}
	if len(nonFinite) > 0 {
		err = errors.Join(err, fmt.Errorf("plugin %s: experiment %s reported values that are not finite numbers (dropped): %s",
			s.desc.Name, req.Experiment, strings.Join(unique(nonFinite), "; ")))
	}
	return stream.Send(doneEvent(resp, err))
}

// unique returns ss without repeats, in first-seen order (a sample is
// often in a progress event and in the response).
func unique(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// finiteSamples returns samples without those whose value is NaN or
// infinite, and a description of each one left out.
func finiteSamples(samples []Sample) (kept []Sample, bad []string) {
	for _, s := range samples {
		if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			bad = append(bad, fmt.Sprintf("metric %q repeat %d is %v", s.Metric, s.Repeat, s.Value))
			continue
		}
		kept = append(kept, s)
	}
	if bad == nil {
		return samples, nil
	}
	return kept, bad
}

func doneEvent(resp *RunResponse, err error) *wire.RunEvent {
	d := &wire.Done{Response: responseToWire(resp)}
	if err != nil {
		d.Error = err.Error()
	}
	return &wire.RunEvent{Event: &wire.RunEvent_Done{Done: d}}
}

// Client is the host's side of a plugin: the Benchmark service over a gRPC
// connection, in the SDK's Go types. Every call takes its caller's ctx;
// cancelling it cancels the plugin's Run.
type Client struct {
	c wire.BenchmarkClient
}

// NewClient returns a Client calling the plugin served on conn.
func NewClient(conn grpc.ClientConnInterface) *Client {
	return &Client{c: wire.NewBenchmarkClient(conn)}
}

// Describe asks the plugin what it can run.
func (c *Client) Describe(ctx context.Context) (*Description, error) {
	w, err := c.c.Describe(ctx, &wire.DescribeRequest{})
	if err != nil {
		return nil, fmt.Errorf("plugin describe: %w", err)
	}
	return descriptionFromWire(w), nil
}

// Run runs one experiment, calling progress for each progress event. It
// returns the plugin's response and its error, if it returned one (a
// *RunError); the response may then still hold what was measured before
// the error. A non-finite sample from the plugin is a *RunError too.
func (c *Client) Run(ctx context.Context, req *RunRequest, progress func(Progress)) (*RunResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream if we return early
	stream, err := c.c.Run(ctx, requestToWire(req))
	if err != nil {
		return nil, fmt.Errorf("plugin run %s: %w", req.Experiment, err)
	}
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("plugin run %s: stream ended without a done event", req.Experiment)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("plugin run %s: %w", req.Experiment, context.Cause(ctx))
			}
			return nil, fmt.Errorf("plugin run %s: %w", req.Experiment, err)
		}
		switch e := ev.GetEvent().(type) {
		case *wire.RunEvent_Progress:
			p := progressFromWire(e.Progress)
			if err := CheckFinite(p.Samples); err != nil {
				return nil, fmt.Errorf("plugin run %s: %w", req.Experiment, &RunError{Msg: "progress refused: " + err.Error()})
			}
			if progress != nil {
				progress(p)
			}
		case *wire.RunEvent_Done:
			resp := responseFromWire(e.Done.GetResponse())
			if resp != nil {
				if err := CheckFinite(resp.Samples); err != nil {
					return nil, fmt.Errorf("plugin run %s: %w", req.Experiment, &RunError{Msg: "response refused: " + err.Error()})
				}
			}
			if msg := e.Done.GetError(); msg != "" {
				return resp, fmt.Errorf("plugin run %s: %w", req.Experiment, &RunError{Msg: msg})
			}
			if resp == nil {
				return nil, fmt.Errorf("plugin run %s: done event without a response", req.Experiment)
			}
			return resp, nil
		default:
			return nil, fmt.Errorf("plugin run %s: unknown event %T (is the plugin built for a newer lab?)", req.Experiment, e)
		}
	}
}

// RunError is an error the plugin's Run returned, as seen by the host.
type RunError struct{ Msg string }

func (e *RunError) Error() string { return e.Msg }
