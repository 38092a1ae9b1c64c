// Command badshake is a go-plugin plugin with the wrong handshake, for
// lab's tests: lab must refuse it with a clear error. Everything else is
// a proper plugin, so the handshake is what fails.
package main

import (
	"context"
	_ "embed"

	"github.com/hashicorp/go-plugin"

	"lab/plugins"
	"lab/plugins/host"
)

//go:embed description.json
var description []byte

type bench struct{}

func (bench) Run(context.Context, *plugins.RunRequest, func(plugins.Progress)) (*plugins.RunResponse, error) {
	return &plugins.RunResponse{}, nil
}

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: plugin.HandshakeConfig{ProtocolVersion: 99, MagicCookieKey: plugins.Handshake.MagicCookieKey, MagicCookieValue: plugins.Handshake.MagicCookieValue},
		Plugins: map[string]plugin.Plugin{plugins.PluginName: &host.GRPCPlugin{
			Description: plugins.MustParseDescription(description), Impl: bench{}}},
		GRPCServer: plugin.DefaultGRPCServer,
	})
}
