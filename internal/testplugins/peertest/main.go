// Command peertest is a plugin for lab's own tests of runs with a peer
// guest: experiment ask connects to its workload echod in the peer over
// the link-local network once per repeat and checks who answers (without
// a peer it says whether LAB_PEER_ADDR is set); broken's
// peer workload exits before it is ready.
package main

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"lab/plugins"
)

//go:embed description.json
var description []byte

type bench struct{ desc *plugins.Description }

func (b bench) Run(ctx context.Context, req *plugins.RunRequest, progress func(plugins.Progress)) (*plugins.RunResponse, error) {
	return plugins.Repeat(ctx, b.desc, req, progress, func(ctx context.Context, t *plugins.Trial) ([]plugins.Sample, error) {
		hold, _ := time.ParseDuration(t.Params["hold"])
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(hold):
		}
		if t.Params["where"] != "peer" {
			// Set only when the run has a peer: a sweep over both values
			// has one for all its points.
			env := 0.0
			if _, ok := plugins.PeerAddress(); ok {
				env = 1
			}
			return []plugins.Sample{t.Sample("rtt_ms", 0), t.Sample("peer_env", env)}, nil
		}
		peer, ok := plugins.PeerAddress()
		self, ok2 := plugins.SelfAddress()
		if !ok || !ok2 {
			return nil, fmt.Errorf("peertest: no peer (LAB_PEER_ADDR %q, LAB_SELF_ADDR %q)", os.Getenv("LAB_PEER_ADDR"), os.Getenv("LAB_SELF_ADDR"))
		}
		start := time.Now()
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(self)}}
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(peer, "7071"))
		if err != nil {
			return nil, fmt.Errorf("peertest: %w", err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("peertest: reading echod's answer: %w", err)
		}
		rtt := time.Since(start)
		// echod says its own address and the peer it was given: ours.
		if want := fmt.Sprintf("echod %s %s", peer, self); strings.TrimSpace(line) != want {
			return nil, fmt.Errorf("peertest: echod answered %q, want %q", strings.TrimSpace(line), want)
		}
		return []plugins.Sample{t.Sample("rtt_ms", float64(rtt.Microseconds())/1000)}, nil
	})
}

func main() { plugins.Serve(description, bench{desc: plugins.MustParseDescription(description)}) }
