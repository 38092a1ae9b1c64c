package engine

import (
	"strings"
	"testing"

	"lab/images"
	"lab/plugins"
	"lab/results"
	"lab/vm"
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

// TestPeerRefusedOn2632: a run that needs a peer guest is refused before
// anything boots on a profile whose kernel is upstream 2.6.32 (no PCI
// hotplug there), naming the kernel and the 6.1 machine to use instead; a
// run without the peer is not.
func TestPeerRefusedOn2632(t *testing.T) {
	p, err := images.Lookup("", "xeon5130-1core-linux-2.6.32")
	if err != nil {
		t.Fatal(err)
	}
	peer := &plugins.Peer{Param: "clients", Value: "peer", Workload: "clientd"}
	plan := &Plan{Desc: &plugins.Description{Name: "netbench"}, Exp: &plugins.Experiment{Name: "designs", Peer: peer}, Resolved: map[string]string{"clients": "peer"}}
	err = plan.CheckNeeds(p)
	if err == nil || !strings.Contains(err.Error(), "linux-2.6.32-core2") || !strings.Contains(err.Error(), "2.6.32.28") || !strings.Contains(err.Error(), "run the peer experiment on xeon5130-1core ") {
		t.Errorf("CheckNeeds(peer on 2.6.32) = %v, want it refused naming the kernel and xeon5130-1core", err)
	}
	plan.Resolved = map[string]string{"clients": "local"}
	if err := plan.CheckNeeds(p); err != nil {
		t.Errorf("CheckNeeds(no peer on 2.6.32) = %v", err)
	}
	base, _ := images.Lookup("", "xeon5130-1core")
	plan.Resolved = map[string]string{"clients": "peer"}
	if err := plan.CheckNeeds(base); err != nil {
		t.Errorf("CheckNeeds(peer on 6.1) = %v", err)
	}
}

// TestPeerStopNothingStarted: a peer whose boot never got as far as a VM
// stops without error and records none; Stop is once.
func TestPeerStopNothingStarted(t *testing.T) {
	p := &peerRun{vms: vm.Root(t.TempDir()), rec: &results.Peer{VM: "c-peer"}}
	evs := &events{}
	p.Stop(Options{Observe: evs.observe})
	p.Stop(Options{Observe: evs.observe})
	if p.Record().Error != "" || len(eventsOf[Warning](evs)) != 0 {
		t.Errorf("error %q, warnings %v: want none", p.Record().Error, eventsOf[Warning](evs))
	}
}
