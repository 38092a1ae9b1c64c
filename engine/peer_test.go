package engine

import (
	"strings"
	"testing"

	"lab/plugins"
)

func TestPeerName(t *testing.T) {
	long := strings.Repeat("v", 63)
	for in, want := range map[string]string{
		"celeron-2.4":            "celeron-2.4-peer",
		"celeron-2.4-run-0a1b2c": "celeron-2.4-run-0a1b2c-peer",
		long:                     long[:58] + "-peer",
		strings.Repeat("v", 58):  strings.Repeat("v", 58) + "-peer",
		strings.Repeat("v", 59):  strings.Repeat("v", 58) + "-peer",
	} {
		if got := PeerName(in); got != want || len(got) > 63 {
			t.Errorf("PeerName(%q) = %q, want %q (at most 63 bytes)", in, got, want)
		}
	}
}

func TestWantsPeer(t *testing.T) {
	peer := &plugins.Peer{Param: "clients", Value: "peer", Workload: "clientd"}
	for _, c := range []struct {
		name     string
		peer     *plugins.Peer
		resolved map[string]string
		points   []map[string]string
		want     bool
	}{
		{"no peer declared", nil, map[string]string{"clients": "peer"}, nil, false},
		{"the value", peer, map[string]string{"clients": "peer"}, nil, true},
		{"another value", peer, map[string]string{"clients": "local"}, nil, false},
		{"a sweep point", peer, map[string]string{"clients": "local,peer"}, []map[string]string{{"clients": "local"}, {"clients": "peer"}}, true},
		{"no sweep point", peer, map[string]string{"clients": "local"}, []map[string]string{{"clients": "local", "n": "1"}, {"clients": "local", "n": "2"}}, false},
	} {
		plan := &Plan{Exp: &plugins.Experiment{Name: "designs", Peer: c.peer}, Resolved: c.resolved}
		for _, p := range c.points {
			plan.Points = append(plan.Points, Point{Params: p})
		}
		if got := wantsPeer(plan); got != c.want {
			t.Errorf("%s: wantsPeer = %v, want %v", c.name, got, c.want)
		}
	}
}
