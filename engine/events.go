package engine

import (
	"fmt"

	"lab/vm"
)

// Event is what the engine reports while it works, to the observer in
// Options. Each event's String is the line a person reads; a display that
// draws a progress bar handles Running, PointStarted, Progress and Ended
// itself and prints the rest.
type Event interface {
	fmt.Stringer
	event()
}

// Booting: a throwaway VM is booting for the run.
type Booting struct{ VM, Profile string }

// Booted: the throwaway VM is up.
type Booted struct {
	VM           string
	Seconds      float64
	Accel, Clock string
}

// Waiting: the VM's run lock is held; the run waits for its turn. Holder
// is nil when `lab exec`/`lab cp` commands hold the guest.
type Waiting struct {
	VM     string
	Holder *vm.RunHolder
}

// Log is a line the VM's boot had to say (vm.UpOptions.Log).
type Log struct{ Line string }

// PeerBooting: the experiment asks for a peer guest, which is booting.
type PeerBooting struct {
	Plugin, Experiment string
	// Param and Value are the parameter setting that asks for the peer.
	Param, Value string
	VM, Profile  string
}

// PeerBooted: the peer guest is up.
type PeerBooted struct {
	VM      string
	Seconds float64
	Boot    string
}

// PeerJoined: the network between the run's guest and its peer is up.
type PeerJoined struct {
	Seconds                 float64
	VM, Addr, Iface         string
	Peer, PeerAddr, PeerIfc string
}

// PeerReady: the peer workload answers.
type PeerReady struct {
	Workload, VM string
	Seconds      float64
	Sent, Cached int
}

// Running: the plugin is about to run Total workload repeats (Points
// sweep points of Repeat each, or Repeat).
type Running struct {
	Plugin, Experiment, VM string
	Repeat, Points, Total  int
	Sweep                  bool
}

// PluginStarted: the plugin answers in the guest.
type PluginStarted struct {
	Plugin               string
	Seconds, PushSeconds float64
	Sent, Cached         int
}

// PointStarted: sweep point Index (from 0) of N begins; Offset repeats
// of the points before it are done.
type PointStarted struct {
	Index, N, Offset int
	Labels           string
}

// Progress: the plugin reports Done of Total repeats (of the current
// point, in a sweep).
type Progress struct {
	Done, Total int
	Message     string
}

// Ended: the plugin's runs are over; OK is false when they broke.
type Ended struct{ OK bool }

// Note is something worth knowing that needs no action.
type Note struct{ Text string }

// Warning is something that went wrong without failing the run.
type Warning struct{ Text string }

// Saved: the result is saved at Path.
type Saved struct{ Path string }

// ProfileStarted: run Index (from 0) of N on several profiles begins.
type ProfileStarted struct {
	Index, N int
	Profile  string
}

func (Booting) event()        {}
func (Booted) event()         {}
func (Waiting) event()        {}
func (Log) event()            {}
func (PeerBooting) event()    {}
func (PeerBooted) event()     {}
func (PeerJoined) event()     {}
func (PeerReady) event()      {}
func (Running) event()        {}
func (PluginStarted) event()  {}
func (PointStarted) event()   {}
func (Progress) event()       {}
func (Ended) event()          {}
func (Note) event()           {}
func (Warning) event()        {}
func (Saved) event()          {}
func (ProfileStarted) event() {}

func (e Booting) String() string {
	return fmt.Sprintf("booting throwaway vm %s (profile %s)...", e.VM, e.Profile)
}

func (e Booted) String() string {
	return fmt.Sprintf("%s up in %.2fs (%s, clock %s)", e.VM, e.Seconds, e.Accel, e.Clock)
}

func (e Waiting) String() string {
	if e.Holder == nil {
		return "vm " + e.VM + " is busy with `lab exec`/`lab cp`; waiting for it to finish..."
	}
	msg := "vm " + e.VM + " is busy with another `lab run`"
	if !e.Holder.Started.IsZero() {
		msg += " (started " + e.Holder.Started.Local().Format("15:04:05") + ")"
	}
	return msg + "; waiting for it to finish..."
}

func (e Log) String() string { return e.Line }

func (e PeerBooting) String() string {
	return fmt.Sprintf("%s/%s asks for a peer guest (%s=%s): booting throwaway vm %s (profile %s)...",
		e.Plugin, e.Experiment, e.Param, e.Value, e.VM, e.Profile)
}

func (e PeerBooted) String() string {
	return fmt.Sprintf("%s up in %.2fs (%s)", e.VM, e.Seconds, e.Boot)
}

func (e PeerJoined) String() string {
	return fmt.Sprintf("peer network up in %.2fs: %s %s (%s), %s %s (%s)", e.Seconds,
		e.VM, e.Addr, e.Iface, e.Peer, e.PeerAddr, e.PeerIfc)
}

func (e PeerReady) String() string {
	return fmt.Sprintf("%s ready in %s after %.2fs (pushed %d files, %d already there)", e.Workload, e.VM, e.Seconds, e.Sent, e.Cached)
}

// Name is what runs where: "PLUGIN/EXPERIMENT on VM".
func (e Running) Name() string { return fmt.Sprintf("%s/%s on %s", e.Plugin, e.Experiment, e.VM) }

// Count is how many runs: "N repeat(s)", or per point for a sweep.
func (e Running) Count() string {
	if e.Sweep {
		return fmt.Sprintf("%d sweep point(s) x %d repeat(s)", e.Points, e.Repeat)
	}
	return fmt.Sprintf("%d repeat(s)", e.Repeat)
}

func (e Running) String() string { return fmt.Sprintf("running %s (%s)...", e.Name(), e.Count()) }

func (e PluginStarted) String() string {
	return fmt.Sprintf("plugin %s started in %.2fs (pushed %d files in %.2fs, %d already in the guest)", e.Plugin, e.Seconds, e.Sent, e.PushSeconds, e.Cached)
}

func (e PointStarted) String() string {
	return fmt.Sprintf("point %d/%d: %s", e.Index+1, e.N, e.Labels)
}

func (e Progress) String() string { return fmt.Sprintf("[%d/%d] %s", e.Done, e.Total, e.Message) }

func (e Ended) String() string {
	if e.OK {
		return "done"
	}
	return "stopped"
}

func (e Note) String() string    { return "note: " + e.Text }
func (e Warning) String() string { return "warning: " + e.Text }
func (e Saved) String() string   { return "result: " + e.Path }

func (e ProfileStarted) String() string {
	return fmt.Sprintf("== profile %d of %d: %s", e.Index+1, e.N, e.Profile)
}
