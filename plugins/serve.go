package plugins

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// PluginName is the name the Benchmark is served and dispensed under.
const PluginName = "benchmark"

// Handshake is shared by lab and every plugin. go-plugin refuses to talk
// when the protocol versions differ, so bump ProtocolVersion whenever the
// contract in contract.go or grpc.go changes incompatibly. The magic cookie
// is not a secret: it only makes a plugin binary run by hand say it must be
// started by lab instead of serving to nobody.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "LAB_PLUGIN",
	MagicCookieValue: "68e4a3e4b175520ff9811658e7015d75a22cabfdfbe1fa09",
}

// PluginMap is the go-plugin plugin set of a Benchmark client (the host):
// use it as ClientConfig.Plugins and Dispense(PluginName).
var PluginMap = map[string]plugin.Plugin{PluginName: &BenchmarkPlugin{}}

// BenchmarkPlugin is the go-plugin glue for Benchmark, over gRPC only. Impl
// is set on the plugin side and nil on the host side.
type BenchmarkPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl Benchmark
}

var _ plugin.GRPCPlugin = (*BenchmarkPlugin)(nil)

// GRPCServer registers the Benchmark service (plugin side).
func (p *BenchmarkPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	s.RegisterService(&serviceDesc, &grpcServer{impl: p.Impl})
	return nil
}

// GRPCClient returns a Benchmark that calls the plugin (host side). Every
// call takes its caller's ctx; cancelling it cancels the plugin's Run.
func (p *BenchmarkPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &grpcClient{conn: c}, nil
}

// Serve serves b and returns when the host is done with the plugin. It is
// all a plugin's main does:
//
//	func main() { plugins.Serve(forkbench{}) }
func Serve(b Benchmark) {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         map[string]plugin.Plugin{PluginName: &BenchmarkPlugin{Impl: b}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}
