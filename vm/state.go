package vm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"lab/vm/link"
)

// Root is the directory VM state directories live in, one per VM, named
// after it. The CLI resolves it ($LAB_STATE_DIR, $XDG_STATE_HOME/lab/vms
// or ~/.local/state/lab/vms); tests use their own.
type Root string

// Dir is the state directory of the VM called name.
func (r Root) Dir(name string) string { return filepath.Join(string(r), name) }

// Phases of a VM.
const (
	PhaseBooting  = "booting"
	PhaseRunning  = "running"
	PhaseStopping = "stopping"
)

// State is what the supervisor publishes in state.json.
type State struct {
	Config
	Phase         string    `json:"phase"`
	SupervisorPID int       `json:"supervisor_pid"`
	QEMUPID       int       `json:"qemu_pid"`
	Started       time.Time `json:"started"`
	Ready         time.Time `json:"ready,omitempty"`
	// BootSeconds is QEMU start to agent ready, host wall time.
	BootSeconds float64 `json:"boot_seconds"`
	// Boot says how the machine came up (cold, or restored from a
	// booted snapshot).
	Boot string `json:"boot"`
	// Notes are what the user should hear of the boot (a booted snapshot
	// found bad and discarded); Up prints them.
	Notes []string   `json:"notes,omitempty"`
	Guest *link.Info `json:"guest,omitempty"`
}

// ReadState reads a VM's state.json.
func ReadState(dir string) (*State, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, StateFile), err)
	}
	return &s, nil
}

func writeState(dir string, s *State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, StateFile), b, 0o600)
}

// supervisorAlive says whether pid is a live lab supervisor (not a reused
// pid of some other program).
func supervisorAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	return strings.Contains(string(b), SuperviseArg)
}

// SuperviseArg is the hidden argument that turns the lab binary into a
// supervisor.
const SuperviseArg = "__supervise"

// Entry is one VM found in a Root.
type Entry struct {
	Name  string
	Dir   string
	State *State
	// Stale is set when the supervisor is gone; the entry's state was
	// removed by List.
	Stale bool
}

// List returns the VMs in r, sorted by name. State left by a
// dead supervisor (killed, crashed host) is detected, reported as stale and
// removed, after killing any QEMU it left behind.
func (r Root) List() ([]Entry, error) {
	if r == "" {
		return nil, errors.New("vm: no state root")
	}
	root := string(r)
	des, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() || strings.HasPrefix(de.Name(), ".") {
			continue // .ended holds the records of VMs that are gone
		}
		e := Entry{Name: de.Name(), Dir: filepath.Join(root, de.Name())}
		st, err := ReadState(e.Dir)
		if err != nil {
			// A directory without state: a supervisor that died before
			// publishing, or one just starting. Young ones are left alone.
			if fi, err2 := os.Stat(e.Dir); err2 == nil && time.Since(fi.ModTime()) < 30*time.Second {
				continue
			}
			e.Stale = true
			cleanStale(e.Dir, nil)
			out = append(out, e)
			continue
		}
		e.State = st
		if !supervisorAlive(st.SupervisorPID) {
			e.Stale = true
			cleanStale(e.Dir, st)
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// cleanStale kills a QEMU a dead supervisor may have left (it should have
// died with it) and removes the state directory.
func cleanStale(dir string, st *State) {
	if st != nil && st.QEMUPID > 0 {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(st.QEMUPID) + "/cmdline"); err == nil && strings.Contains(string(b), dir) {
			_ = syscall.Kill(st.QEMUPID, syscall.SIGKILL)
		}
	}
	_ = os.RemoveAll(dir)
}

// Up lists the names of the VMs in r that are up (List's entries that
// are not stale).
func (r Root) Up() ([]string, error) {
	entries, err := r.List()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, en := range entries {
		if !en.Stale {
			names = append(names, en.Name)
		}
	}
	return names, nil
}
