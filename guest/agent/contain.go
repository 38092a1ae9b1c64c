package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// containment is what a contained exec (link.ExecRequest.Contain) gives
// the program and takes back when it exits: a mark in the environment
// that everything it starts inherits, and a TMPDIR of its own. A process
// the program started in a session of its own (setsid) leaves the
// program's group, so killing the group misses it; the mark does not.
type containment struct {
	id  string
	tmp string
}

// markVar is the environment variable that marks a contained program's
// processes.
const markVar = "LAB_EXEC_ID"

func newContainment() (*containment, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	c := &containment{id: hex.EncodeToString(b[:])}
	c.tmp = filepath.Join(os.TempDir(), "lab-exec-"+c.id)
	if err := os.Mkdir(c.tmp, 0o700); err != nil {
		return nil, fmt.Errorf("the program's temporary directory: %w", err)
	}
	return c, nil
}

// env is the program's environment env with the mark and its TMPDIR,
// which replace any the host gave (a program reads the first of two).
func (c *containment) env(env []string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMPDIR=") && !strings.HasPrefix(kv, markVar+"=") {
			out = append(out, kv)
		}
	}
	return append(out, markVar+"="+c.id, "TMPDIR="+c.tmp)
}

// end kills every process that carries the mark (until none is left: a
// dying parent may fork once more) and removes the temporary directory.
// It returns the processes killed, "PID (COMM)" each, and the directory
// if anything was left in it.
func (c *containment) end() (killed []string, removed string) {
	seen := map[int]bool{}
	for range 10 {
		pids := c.marked()
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			if !seen[pid] {
				seen[pid] = true
				killed = append(killed, fmt.Sprintf("%d (%s)", pid, comm(pid)))
			}
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		// The agent is init: it reaps them (reaper.run).
		time.Sleep(20 * time.Millisecond)
	}
	// go-plugin's own socket directory (plugin*) is not the program's
	// leaving: its server removes it on a graceful stop, not on a kill.
	entries, _ := os.ReadDir(c.tmp)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "plugin") {
			removed = c.tmp
			break
		}
	}
	_ = os.RemoveAll(c.tmp)
	return killed, removed
}

// marked are the pids whose environment carries this containment's mark.
func (c *containment) marked() []int {
	mark := []byte(markVar + "=" + c.id + "\x00")
	self := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // gone, or a kernel thread
		}
		if bytes.HasPrefix(env, mark) || bytes.Contains(env, append([]byte{0}, mark...)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// comm is a process's name, "?" once it is gone.
func comm(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}
