package vm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// When a VM ends, its supervisor removes the state directory. So that an
// end is never silent, it first leaves a record of why beside the state
// root (ROOT/.ended/NAME.json), with a copy of the console and supervisor
// logs: `lab status` reports a death once, `lab console` still shows the
// log, and a run that lost its VM can tell `lab down` from a crash.

// endedDir is the directory in the state root that holds Ended records.
const endedDir = ".ended"

// Causes of a VM's end.
const (
	// EndDied: QEMU exited without being asked to (killed, crashed, or
	// the guest powered off or panicked on its own).
	EndDied = "died"
	// EndDown: `lab down` (or a Handle.Down) powered it off.
	EndDown = "down"
	// EndDiscarded: its throwaway owner discarded it, or went away.
	EndDiscarded = "discarded"
	// EndSignalled: the supervisor itself was told to stop (SIGTERM...).
	EndSignalled = "signalled"
	// EndBootTimeout: `lab up` gave up waiting for the guest's agent.
	EndBootTimeout = "boot timed out"
)

// Ended is the record of a VM that is gone.
type Ended struct {
	Name    string    `json:"name"`
	Profile string    `json:"profile"`
	Time    time.Time `json:"time"`
	Cause   string    `json:"cause"`
	// Reason says what happened, for people: "qemu killed by SIGKILL",
	// "taken down by `lab down` (pid 1234)".
	Reason string `json:"reason"`
	// By is the command line of the process that took the VM down, for
	// EndDown.
	By []string `json:"by,omitempty"`
	// Reported is set once `lab status` has shown the end.
	Reported bool `json:"reported,omitempty"`
}

// endedPaths are the record and the kept console log of VM name whose
// state directory is dir.
func endedPaths(dir string) (record, console string) {
	base := filepath.Join(filepath.Dir(dir), endedDir, filepath.Base(dir))
	return base + ".json", base + ".console.log"
}

// recordEnd writes the record of the end of the VM in dir (before dir is
// removed) and keeps a copy of its console log. Best effort: a VM's end
// must not fail for want of a record.
func recordEnd(dir string, e Ended) {
	rec, con := endedPaths(dir)
	if err := os.MkdirAll(filepath.Dir(rec), 0o700); err != nil {
		return
	}
	if b, err := os.ReadFile(filepath.Join(dir, ConsoleLog)); err == nil {
		_ = writeFileAtomic(con, b, 0o600)
	}
	if b, err := json.MarshalIndent(e, "", "  "); err == nil {
		_ = writeFileAtomic(rec, b, 0o600)
	}
	pruneEnded(filepath.Dir(rec), 7*24*time.Hour)
}

// pruneEnded removes the records (and kept logs) older than age: the end
// of a VM nobody looked at in a week is history.
func pruneEnded(dir string, age time.Duration) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, de := range des {
		if fi, err := de.Info(); err == nil && time.Since(fi.ModTime()) > age {
			os.Remove(filepath.Join(dir, de.Name()))
		}
	}
}

// ReadEnded returns the record of how VM name (whose state directory is
// r.Dir(name)) ended, or an error wrapping os.ErrNotExist if there is none.
func (r Root) ReadEnded(name string) (*Ended, error) {
	rec, _ := endedPaths(r.Dir(name))
	b, err := os.ReadFile(rec)
	if err != nil {
		return nil, err
	}
	var e Ended
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("%s: %w", rec, err)
	}
	return &e, nil
}

// EndedConsole is the path of the console log kept when VM name ended
// ("" if none was kept).
func (r Root) EndedConsole(name string) string {
	_, con := endedPaths(r.Dir(name))
	if _, err := os.Stat(con); err != nil {
		return ""
	}
	return con
}

// Unreported returns the deaths (EndDied) `lab status` has not shown yet,
// marking them shown.
func (r Root) Unreported() []Ended {
	des, err := os.ReadDir(filepath.Join(string(r), endedDir))
	if err != nil {
		return nil
	}
	var out []Ended
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".json")
		if !ok {
			continue
		}
		e, err := r.ReadEnded(name)
		if err != nil || e.Cause != EndDied || e.Reported {
			continue
		}
		out = append(out, *e)
		e.Reported = true
		if b, err := json.MarshalIndent(e, "", "  "); err == nil {
			rec, _ := endedPaths(r.Dir(name))
			_ = writeFileAtomic(rec, b, 0o600)
		}
	}
	return out
}

// forgetEnded removes the record of an earlier VM called name: a new one
// is coming up.
func forgetEnded(dir string) {
	rec, con := endedPaths(dir)
	os.Remove(rec)
	os.Remove(con)
}

// exitReason says how QEMU ended, from its Wait error: "qemu killed by
// SIGKILL", "qemu exited with status 1", "qemu exited" (status 0: the guest
// powered off or, with -no-reboot, rebooted or panicked).
func exitReason(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "qemu killed by " + unix.SignalName(ws.Signal())
		}
		return fmt.Sprintf("qemu exited with status %d", ee.ExitCode())
	}
	if err != nil {
		return "qemu ended: " + err.Error()
	}
	return "qemu exited (the guest powered off, rebooted or panicked; see its console)"
}
