package plugins

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The plugin side of go-plugin's gRPC protocol (go-plugin v1.x, "core
// protocol" 1), which lab's host side speaks with go-plugin's own client:
//
//   - the host starts the plugin with the magic cookie and
//     PLUGIN_PROTOCOL_VERSIONS (the app protocol versions it speaks) in
//     its environment, and PLUGIN_UNIX_SOCKET_DIR if it wants the socket
//     somewhere in particular;
//   - the plugin listens on a unix socket and writes one line to stdout:
//     CORE|APP|NETWORK|ADDRESS|PROTOCOL|SERVER-CERT, here
//     "1|2|unix|/tmp/plugin123|grpc|" (no server certificate: the host
//     already trusts only the VM's CA, see serverTLS);
//   - it serves gRPC there: grpc.health.v1.Health/Check with service
//     "plugin" (or "") SERVING, plugin.GRPCController/Shutdown (the host's Kill asks it to
//     stop), plugin.GRPCBroker/StartStream, and lab.plugin.v1.Benchmark.
//
// go-plugin's GRPCStdio service is not served: the plugin's stdout and
// stderr are the process's own, streamed by the link (go-plugin's client
// treats the missing service as a plugin without stdio syncing). stdout
// carries the handshake line, so a plugin writes its diagnostics to stderr.
// Nor is the broker used: StartStream is accepted and held open, and
// nothing is brokered, so broker multiplexing (PLUGIN_MULTIPLEX_GRPC) is
// not offered.

// goPluginCoreVersion is go-plugin's core protocol version (its
// CoreProtocolVersion), the first field of the handshake line.
const goPluginCoreVersion = 1

// goPluginHealthService is the service name go-plugin's client checks
// (its GRPCServiceName).
const goPluginHealthService = "plugin"

// serveGoPlugin listens, writes the handshake line to out and serves until
// the host shuts the plugin down or the listener fails.
func serveGoPlugin(d *Description, b Benchmark, tc *tls.Config, out io.Writer) error {
	if v := os.Getenv("PLUGIN_PROTOCOL_VERSIONS"); v != "" && !listsVersion(v, Handshake.ProtocolVersion) {
		// Served anyway, as go-plugin does: the host then refuses the
		// version in the handshake line and says so.
		fmt.Fprintf(os.Stderr, "plugin %s speaks lab plugin protocol %d; the host speaks %s: rebuild the plugin against this lab (`lab plugin build DIR`)\n",
			d.Name, Handshake.ProtocolVersion, v)
	}
	ln, err := listenUnix(os.Getenv("PLUGIN_UNIX_SOCKET_DIR"))
	if err != nil {
		return err
	}
	defer ln.Close()

	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(tc)))
	srv.RegisterService(&healthDesc, struct{}{})
	srv.RegisterService(&controllerDesc, &controller{stop: func() { stopServer(srv) }})
	srv.RegisterService(&brokerDesc, struct{}{})
	RegisterBenchmark(srv, d, b)

	// A Ctrl-C meant for the host's terminal must not kill the plugin
	// mid-run (go-plugin does the same): the host cancels a run over the
	// RPC instead. Notify, not Ignore, so the workloads it starts keep the
	// default disposition.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	go func() {
		for range sig {
		}
	}()

	if _, err := fmt.Fprintf(out, "%d|%d|%s|%s|grpc|\n", goPluginCoreVersion, Handshake.ProtocolVersion,
		ln.Addr().Network(), ln.Addr().String()); err != nil {
		return fmt.Errorf("writing the handshake line: %w", err)
	}
	if err := srv.Serve(ln); err != nil && err != grpc.ErrServerStopped {
		return err
	}
	return nil
}

// listsVersion reports whether the comma-separated list vs holds v.
func listsVersion(vs string, v uint) bool {
	for _, s := range strings.Split(vs, ",") {
		if n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32); err == nil && uint(n) == v {
			return true
		}
	}
	return false
}

// listenUnix listens on a fresh socket path in dir (the temp dir if
// empty), named as go-plugin names them. Closing the listener removes it.
func listenUnix(dir string) (net.Listener, error) {
	f, err := os.CreateTemp(dir, "plugin")
	if err != nil {
		return nil, fmt.Errorf("making the plugin's socket: %w", err)
	}
	path := f.Name()
	f.Close()
	if err := os.Remove(path); err != nil {
		return nil, fmt.Errorf("making the plugin's socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listening on the plugin's socket: %w", err)
	}
	return ln, nil
}

// stopServer stops srv once the Shutdown call that asked for it has been
// answered: gracefully, so the answer reaches the host, and by force if
// a call is still going after a second.
func stopServer(srv *grpc.Server) {
	done := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		srv.Stop()
	}
}

// controller is go-plugin's plugin.GRPCController service.
type controller struct{ stop func() }

type controllerServer interface {
	Shutdown(context.Context, *emptypb.Empty) (*emptypb.Empty, error)
}

// Shutdown answers, then stops the server, which ends Serve.
func (c *controller) Shutdown(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	go c.stop()
	return &emptypb.Empty{}, nil
}

// controllerDesc is plugin.GRPCController as go-plugin's
// internal/plugin/grpc_controller.proto declares it. Its messages are
// plugin.Empty, which has no fields, so google.protobuf.Empty reads and
// writes the same bytes; the service is described by hand because
// go-plugin's generated package is internal (and registering a second copy
// of its descriptors in one binary would clash).
var controllerDesc = grpc.ServiceDesc{
	ServiceName: "plugin.GRPCController",
	HandlerType: (*controllerServer)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Shutdown",
		Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := new(emptypb.Empty)
			if err := dec(in); err != nil {
				return nil, err
			}
			return srv.(controllerServer).Shutdown(ctx, in)
		},
	}},
	Metadata: "internal/plugin/grpc_controller.proto",
}

// healthDesc is grpc.health.v1.Health/Check, all go-plugin's client asks
// of it (Ping), answering SERVING for go-plugin's service name. It is
// described by hand to keep grpc's health package (143 KB of an i386
// plugin) out: HealthCheckRequest is {string service = 1} and
// HealthCheckResponse {ServingStatus status = 1}, SERVING = 1, which are
// byte for byte google.protobuf.StringValue and Int32Value.
// TestGoPluginProtocol pings it through go-plugin's client.
var healthDesc = grpc.ServiceDesc{
	ServiceName: "grpc.health.v1.Health",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Check",
		Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.StringValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			if s := in.GetValue(); s != "" && s != goPluginHealthService {
				return nil, status.Errorf(codes.NotFound, "unknown service %q", s)
			}
			const serving = 1
			return wrapperspb.Int32(serving), nil
		},
	}},
	Metadata: "grpc/health/v1/health.proto",
}

// brokerDesc is plugin.GRPCBroker: go-plugin's client opens StartStream
// when it connects. lab brokers nothing, so the stream is held open until
// the host closes it, and nothing is sent on it.
var brokerDesc = grpc.ServiceDesc{
	ServiceName: "plugin.GRPCBroker",
	HandlerType: (*any)(nil),
	Streams: []grpc.StreamDesc{{
		StreamName:    "StartStream",
		ServerStreams: true,
		ClientStreams: true,
		Handler: func(_ any, stream grpc.ServerStream) error {
			<-stream.Context().Done()
			return nil
		},
	}},
	Metadata: "internal/plugin/grpc_broker.proto",
}
