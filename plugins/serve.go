package plugins

import (
	"context"
	"fmt"
	"os"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"lab/plugins/wire"
)

// WorkloadDirEnv names the environment variable that tells a plugin where
// its workload binaries are. The host sets it when it pushes the plugin.
const WorkloadDirEnv = "LAB_WORKLOAD_DIR"

// DescriptionFile is the file in a plugin's source directory that
// declares what it can run: lab.plugin.v1.Description in the proto's
// canonical JSON form, embedded in the binary and handed to Serve.
const DescriptionFile = "description.json"

// PluginName is the name the Benchmark is served and dispensed under.
const PluginName = "benchmark"

// Handshake is shared by lab and every plugin. go-plugin refuses to talk
// when the protocol versions differ, so bump ProtocolVersion whenever
// wire/benchmark.proto changes in a way an older peer would misread.
// Version 1 was the hand-written JSON service; 2 is lab.plugin.v1. The
// magic cookie is not a secret: it only makes a plugin binary run by hand
// say it must be started by lab instead of serving to nobody.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  2,
	MagicCookieKey:   "LAB_PLUGIN",
	MagicCookieValue: "68e4a3e4b175520ff9811658e7015d75a22cabfdfbe1fa09",
}

// PluginMap is the go-plugin plugin set of a Benchmark client (the host):
// use it as ClientConfig.Plugins; Dispense(PluginName) returns a *Client.
var PluginMap = map[string]plugin.Plugin{PluginName: &GRPCPlugin{}}

// GRPCPlugin is the go-plugin glue for the Benchmark service, over gRPC
// only. Description and Impl are set on the plugin side and nil on the host
// side.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Description *Description
	Impl        Benchmark
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer registers the Benchmark service (plugin side).
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Description == nil || p.Impl == nil {
		return fmt.Errorf("plugins.GRPCPlugin needs a Description and an Impl to serve")
	}
	wire.RegisterBenchmarkServer(s, newServer(p.Description, p.Impl))
	return nil
}

// GRPCClient returns a *Client that calls the plugin (host side).
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return NewClient(c), nil
}

// Serve serves b, described by description (the plugin's description.json,
// embedded), and returns when the host is done with the plugin. It is all a
// plugin's main does:
//
//	//go:embed description.json
//	var description []byte
//
//	func main() { plugins.Serve(description, bench{}) }
//
// A description that does not parse or validate ends the program with
// status 2 (`lab plugin build` refuses such a plugin before it is built).
func Serve(description []byte, b Benchmark) {
	d, err := ParseDescription(description)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(2)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         map[string]plugin.Plugin{PluginName: &GRPCPlugin{Description: d, Impl: b}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}

// MustParseDescription is ParseDescription for a plugin's own embedded
// description.json, which its tests and `lab plugin build` have already
// checked: it panics on an error.
func MustParseDescription(description []byte) *Description {
	d, err := ParseDescription(description)
	if err != nil {
		panic(err)
	}
	return d
}
