package engine

import (
	"testing"
	"time"

	"lab/results/matrix"
	"lab/vm"
)

// TestEventLines: each event's String is the line a person reads; these
// are those lines.
func TestEventLines(t *testing.T) {
	started := time.Date(2026, 12, 7, 9, 30, 5, 0, time.Local)
	cell := matrix.CellState{Cell: matrix.Cell{ID: "celeron-2.4/forkbench/create"}, Status: "failed", Error: "the guest died", Seconds: 12.34}
	for _, tt := range []struct {
		ev   Event
		want string
	}{
		{Booting{VM: "c-run-1", Profile: "celeron-2.4"}, "booting throwaway vm c-run-1 (profile celeron-2.4)..."},
		{Booted{VM: "c-run-1", Seconds: 1.234, Accel: "tcg", Clock: "icount:0"}, "c-run-1 up in 1.23s (tcg, clock icount:0)"},
		{Waiting{VM: "c"}, "vm c is busy with `lab exec`/`lab cp`; waiting for it to finish..."},
		{Waiting{VM: "c", Holder: &vm.RunHolder{PID: 7}}, "vm c is busy with another `lab run`; waiting for it to finish..."},
		{Waiting{VM: "c", Holder: &vm.RunHolder{PID: 7, Started: started}}, "vm c is busy with another `lab run` (started 09:30:05); waiting for it to finish..."},
		{Log{Line: "building kernel linux-2.6.32-p3"}, "building kernel linux-2.6.32-p3"},
		{PeerBooting{Plugin: "netbench", Experiment: "designs", Param: "clients", Value: "peer", VM: "c-peer", Profile: "p4-2.4"},
			"netbench/designs asks for a peer guest (clients=peer): booting throwaway vm c-peer (profile p4-2.4)..."},
		{PeerBooted{VM: "c-peer", Seconds: 2, Boot: "restored"}, "c-peer up in 2.00s (restored)"},
		{PeerJoined{Seconds: 0.5, VM: "c", Addr: "169.254.0.1", Iface: "eth0", Peer: "c-peer", PeerAddr: "169.254.0.2", PeerIfc: "eth1"},
			"peer network up in 0.50s: c 169.254.0.1 (eth0), c-peer 169.254.0.2 (eth1)"},
		{PeerReady{Workload: "clientd", VM: "c-peer", Seconds: 0.25, Sent: 1, Cached: 2}, "clientd ready in c-peer after 0.25s (pushed 1 files, 2 already there)"},
		{Running{Plugin: "forkbench", Experiment: "create", VM: "c", Repeat: 5, Points: 1, Total: 5}, "running forkbench/create on c (5 repeat(s))..."},
		{Running{Plugin: "threadbench", Experiment: "hello", VM: "c", Repeat: 2, Points: 3, Total: 6, Sweep: true}, "running threadbench/hello on c (3 sweep point(s) x 2 repeat(s))..."},
		{PluginStarted{Plugin: "forkbench", Seconds: 1.5, PushSeconds: 0.25, Sent: 1, Cached: 3}, "plugin forkbench started in 1.50s (pushed 1 files in 0.25s, 3 already in the guest)"},
		{PointStarted{Index: 1, N: 3, Labels: "count=50"}, "point 2/3: count=50"},
		{Progress{Done: 2, Total: 5, Message: "repeat 2"}, "[2/5] repeat 2"},
		{Ended{OK: true}, "done"},
		{Ended{}, "stopped"},
		{Note{Text: "x"}, "note: x"},
		{Warning{Text: "y"}, "warning: y"},
		{Saved{Path: "/r/1.json"}, "result: /r/1.json"},
		{ProfileStarted{Index: 0, N: 2, Profile: "p4-2.4"}, "== profile 1 of 2: p4-2.4"},
		{RepeatChosen{Choice: RepeatChoice{Repeat: 5, Need: 5, Claims: []string{"E1.6"}, Estimate: 90 * time.Second, Budget: 5 * time.Minute}},
			"repeats: 5 (what E1.6 needs), about 2 min; --repeat N to choose"},
		{RepeatChosen{Choice: RepeatChoice{Repeat: 3, Need: 9, Claims: []string{"E1.6", "E1.7"}, NeedEstimate: 9 * time.Minute, Budget: 5 * time.Minute}},
			"repeats: 3, what fits the 5 min budget (E1.6 and E1.7 need 9, about 9 min); --repeat 9 decides, --repeat N to choose"},
		{MatrixStarted{Name: "nightly", Cells: 4, All: 8, Shard: "1/2", Todo: 3, Done: 1, Parallel: 2, StateFile: "o/matrix.json", Results: "o/results"},
			"matrix nightly: 4 cells (shard 1/2 of 8 cells), 1 already done (resumed from o/matrix.json); running 3, 2 at a time; results in o/results"},
		{MatrixStarted{Cells: 1, Todo: 1, Parallel: 1, Results: "o/results"}, "matrix -: 1 cells; running 1, 1 at a time; results in o/results"},
		{CellRetry{Cell: "a/b/c", Why: "EOF"}, "note: cell a/b/c: its VM died (EOF); running it once more"},
		{CellDone{N: 1, Todo: 2, Cell: cell, Elapsed: 65 * time.Second, ETA: 61 * time.Second},
			"[1/2] celeron-2.4/forkbench/create: failed in 12.3s: the guest died (elapsed 1m5s, ETA 1m1s)"},
	} {
		if got := tt.ev.String(); got != tt.want {
			t.Errorf("%T.String() =\n  %q\nwant\n  %q", tt.ev, got, tt.want)
		}
	}
}
