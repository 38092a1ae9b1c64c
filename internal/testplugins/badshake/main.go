// Command badshake is a go-plugin plugin with the wrong handshake, for
// lab's tests: lab must refuse it with a clear error.
package main

import (
	"github.com/hashicorp/go-plugin"

	"lab/plugins"
)

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: plugin.HandshakeConfig{ProtocolVersion: 99, MagicCookieKey: plugins.Handshake.MagicCookieKey, MagicCookieValue: plugins.Handshake.MagicCookieValue},
		Plugins:         map[string]plugin.Plugin{plugins.PluginName: &plugins.GRPCPlugin{}},
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}
