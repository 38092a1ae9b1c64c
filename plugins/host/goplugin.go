package host

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"lab/plugins"
)

// Handshake is plugins.Handshake as go-plugin's client takes it.
var Handshake = plugin.HandshakeConfig(plugins.Handshake)

// PluginMap is the go-plugin plugin set of a Benchmark client (the host):
// use it as ClientConfig.Plugins; Dispense(plugins.PluginName) returns a
// *plugins.Client.
var PluginMap = map[string]plugin.Plugin{plugins.PluginName: &GRPCPlugin{}}

// GRPCPlugin is the go-plugin glue for the Benchmark service, over gRPC
// only. The host leaves Description and Impl nil; tests that serve a
// Benchmark in process with go-plugin (plugin.TestPluginGRPCConn, or
// plugin.Serve in a test plugin) set them. Plugins themselves serve with
// plugins.Serve, which does not link go-plugin.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Description *plugins.Description
	Impl        plugins.Benchmark
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer registers the Benchmark service (plugin side).
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Description == nil || p.Impl == nil {
		return fmt.Errorf("host.GRPCPlugin needs a Description and an Impl to serve")
	}
	plugins.RegisterBenchmark(s, p.Description, p.Impl)
	return nil
}

// GRPCClient returns a *plugins.Client that calls the plugin (host side).
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return plugins.NewClient(c), nil
}
