package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"

	"lab/results"
)

// codecName is the gRPC content-subtype our messages travel under
// ("application/grpc+json").
const codecName = "json"

// jsonCodec encodes our messages as JSON. Registered globally by name, it is
// only used by calls that ask for it (grpc.CallContentSubtype), so the
// protobuf services go-plugin serves on the same connection are unaffected.
type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                       { return codecName }

func init() { encoding.RegisterCodec(jsonCodec{}) }

// serviceName is the gRPC service of the Benchmark contract.
const serviceName = "lab.plugins.Benchmark"

const (
	methodDescribe = "/" + serviceName + "/Describe"
	methodRun      = "/" + serviceName + "/Run"
)

// Event types on the Run stream.
const (
	EventProgress = "progress"
	EventDone     = "done"
)

// RunEvent is one message of the Run stream: zero or more progress events,
// then exactly one done event. The host knows a run ended because it got the
// done event, not because the stream closed.
type RunEvent struct {
	Type     string       `json:"type"`
	Progress *Progress    `json:"progress,omitempty"`
	Response *RunResponse `json:"response,omitempty"`
	Error    string       `json:"error,omitempty"`
}

// describeRequest is Describe's (empty) request message.
type describeRequest struct{}

// benchmarkServer is the handler type of serviceDesc.
type benchmarkServer interface {
	describe(ctx context.Context) (*Description, error)
	run(req *RunRequest, stream grpc.ServerStream) error
}

// serviceDesc is what protoc-gen-go-grpc would generate for
//
//	service Benchmark {
//	  rpc Describe(DescribeRequest) returns (Description);
//	  rpc Run(RunRequest) returns (stream RunEvent);
//	}
var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*benchmarkServer)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Describe",
		Handler: func(srv any, ctx context.Context, dec func(any) error, intercept grpc.UnaryServerInterceptor) (any, error) {
			var in describeRequest
			if err := dec(&in); err != nil {
				return nil, err
			}
			call := func(ctx context.Context, _ any) (any, error) {
				return srv.(benchmarkServer).describe(ctx)
			}
			if intercept == nil {
				return call(ctx, &in)
			}
			return intercept(ctx, &in, &grpc.UnaryServerInfo{Server: srv, FullMethod: methodDescribe}, call)
		},
	}},
	Streams: []grpc.StreamDesc{{
		StreamName:    "Run",
		ServerStreams: true,
		Handler: func(srv any, stream grpc.ServerStream) error {
			var req RunRequest
			if err := stream.RecvMsg(&req); err != nil {
				return err
			}
			return srv.(benchmarkServer).run(&req, stream)
		},
	}},
}

// grpcServer adapts a Benchmark to serviceDesc, in the plugin.
type grpcServer struct{ impl Benchmark }

func (s *grpcServer) describe(ctx context.Context) (*Description, error) {
	return s.impl.Describe(ctx)
}

// run calls the Benchmark with the stream's context (cancelled when the
// host cancels) and ends with a done event carrying the outcome. A failed
// Run is reported in the done event, not as a gRPC error, so the host can
// tell the plugin's error from a broken connection.
func (s *grpcServer) run(req *RunRequest, stream grpc.ServerStream) error {
	// SendMsg must not be called concurrently, and progress may be called
	// from any goroutine of the plugin, even late.
	var (
		mu      sync.Mutex
		ended   bool
		sendErr error
	)
	// A NaN or ±Inf sample cannot be encoded as JSON: sending it would
	// break the stream and lose every sample. Such samples are dropped
	// here and the run fails naming them; the finite ones get through.
	var nonFinite []string
	progress := func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if !ended && sendErr == nil {
			var bad []string
			p.Samples, bad = finiteSamples(p.Samples)
			nonFinite = append(nonFinite, bad...)
			sendErr = stream.SendMsg(&RunEvent{Type: EventProgress, Progress: &p})
		}
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
	done := &RunEvent{Type: EventDone, Response: resp}
	var msgs []string
	if err != nil {
		msgs = append(msgs, err.Error())
	}
	if len(nonFinite) > 0 {
		msgs = append(msgs, fmt.Sprintf("experiment %s reported values that are not finite numbers (dropped): %s",
			req.Experiment, strings.Join(unique(nonFinite), "; ")))
	}
	done.Error = strings.Join(msgs, "; ")
	return stream.SendMsg(done)
}

// finiteSamples returns samples without those whose value is NaN or
// infinite, and a description of each one left out.
func finiteSamples(samples []results.Sample) (kept []results.Sample, bad []string) {
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

// grpcClient is the host's Benchmark, calling the plugin over conn.
type grpcClient struct{ conn *grpc.ClientConn }

func (c *grpcClient) Describe(ctx context.Context) (*Description, error) {
	var d Description
	if err := c.conn.Invoke(ctx, methodDescribe, &describeRequest{}, &d, grpc.CallContentSubtype(codecName)); err != nil {
		return nil, fmt.Errorf("plugin describe: %w", err)
	}
	return &d, nil
}

// Run returns the plugin's response and its error, if it returned one; the
// response may then still hold what was measured before the error.
func (c *grpcClient) Run(ctx context.Context, req *RunRequest, progress func(Progress)) (*RunResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream if we return early
	stream, err := c.conn.NewStream(ctx, &serviceDesc.Streams[0], methodRun, grpc.CallContentSubtype(codecName))
	if err != nil {
		return nil, fmt.Errorf("plugin run %s: %w", req.Experiment, err)
	}
	if err := stream.SendMsg(req); err != nil {
		return nil, fmt.Errorf("plugin run %s: send request: %w", req.Experiment, err)
	}
	if err := stream.CloseSend(); err != nil {
		return nil, fmt.Errorf("plugin run %s: %w", req.Experiment, err)
	}
	for {
		var ev RunEvent
		err := stream.RecvMsg(&ev)
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("plugin run %s: stream ended without a done event", req.Experiment)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("plugin run %s: %w", req.Experiment, context.Cause(ctx))
			}
			return nil, fmt.Errorf("plugin run %s: %w", req.Experiment, err)
		}
		switch ev.Type {
		case EventProgress:
			if progress != nil && ev.Progress != nil {
				progress(*ev.Progress)
			}
		case EventDone:
			if ev.Error != "" {
				return ev.Response, fmt.Errorf("plugin run %s: %w", req.Experiment, &RunError{Msg: ev.Error})
			}
			if ev.Response == nil {
				return nil, fmt.Errorf("plugin run %s: done event without a response", req.Experiment)
			}
			return ev.Response, nil
		default:
			return nil, fmt.Errorf("plugin run %s: unknown event type %q", req.Experiment, ev.Type)
		}
	}
}

// RunError is an error the plugin's Run returned, as seen by the host.
type RunError struct{ Msg string }

func (e *RunError) Error() string { return e.Msg }
