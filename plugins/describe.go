package plugins

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
)

// hostArch is the guest arch whose builds run natively on this host.
func hostArch() string {
	if runtime.GOARCH == "386" {
		return "i386"
	}
	return "x86_64"
}

// DescribeOnHost runs plugin name's build for the host's arch on the host,
// just long enough to ask Describe. Listing plugins and checking a run's
// parameters then needs no VM.
func DescribeOnHost(ctx context.Context, name string) (*Description, error) {
	b, err := Find(name, hostArch())
	if err != nil {
		return nil, err
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		Plugins:          PluginMap,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Cmd:              exec.Command(b.Binary()),
		SkipHostEnv:      true,
		StartTimeout:     30 * time.Second,
		Logger:           hclog.New(&hclog.LoggerOptions{Name: "plugin", Level: hclog.Off, Output: io.Discard}),
	})
	defer client.Kill()
	rpc, err := client.Client()
	if err != nil {
		return nil, fmt.Errorf("plugin %s (%s) did not start: %w (is it a lab plugin built with plugins.Serve and the current handshake?)", name, b.Binary(), err)
	}
	raw, err := rpc.Dispense(PluginName)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	d, err := raw.(Benchmark).Describe(ctx)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	if d.Name != name {
		return nil, fmt.Errorf("plugin in directory %s calls itself %q; the directory and the plugin name must match", name, d.Name)
	}
	return d, nil
}
