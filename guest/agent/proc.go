package main

import (
	"os"
	"os/signal"
	"sync"

	"golang.org/x/sys/unix"
)

// reaper is the only caller of wait4 in the agent. As PID 1 the agent
// inherits every orphan, so it must reap them all; programs it started
// itself are dispatched to whoever waits for them. Never use exec.Cmd.Wait
// after the reaper has started: the reaper would steal its status.
type reaper struct {
	mu      sync.Mutex
	waiters map[int]chan unix.WaitStatus
}

func newReaper() *reaper {
	return &reaper{waiters: map[int]chan unix.WaitStatus{}}
}

// start starts a program and registers it before the reaper can see it
// exit: the lock is held from fork to registration, and the reaper takes
// the same lock before dispatching.
func (r *reaper) start(argv0 string, argv []string, attr *os.ProcAttr) (*os.Process, <-chan unix.WaitStatus, error) {
	childSignals.Do(defaultChildSignals)
	r.mu.Lock()
	defer r.mu.Unlock()
	p, err := os.StartProcess(argv0, argv, attr)
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan unix.WaitStatus, 1)
	r.waiters[p.Pid] = ch
	return p, ch, nil
}

func (r *reaper) run() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			// ECHILD: nothing to wait for; wait for a SIGCHLD-worthy event
			// by blocking on the next start. Poll gently.
			unix.Nanosleep(&unix.Timespec{Nsec: 20e6}, nil)
			continue
		}
		r.mu.Lock()
		ch, ok := r.waiters[pid]
		delete(r.waiters, pid)
		r.mu.Unlock()
		if ok {
			ch <- ws
		}
	}
}

// exitCode turns a wait status into a shell-style code and signal.
func exitCode(ws unix.WaitStatus) (code, sig int) {
	if ws.Signaled() {
		return 128 + int(ws.Signal()), int(ws.Signal())
	}
	return ws.ExitStatus(), 0
}

// childSignals makes the signal dispositions of what the agent starts the
// defaults, once.
var childSignals sync.Once

// defaultChildSignals gives the programs the agent starts the default
// disposition of every signal, as a PID 1 should. exec resets a caught
// signal to its default but keeps an ignored one ignored, and the Go
// runtime catches every signal except SIGHUP and SIGINT when they were
// ignored at start (nohup, a background job of a non-interactive shell:
// how the agent's tests may be run). Catching those two makes exec reset
// them; the agent itself goes on ignoring them, as it was started to.
//
// The signal mask needs nothing: Go restores the mask the agent started
// with in the child, and a guest's PID 1 starts with none blocked.
func defaultChildSignals() {
	for _, sig := range []os.Signal{unix.SIGHUP, unix.SIGINT} {
		if !signal.Ignored(sig) {
			continue
		}
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, sig)
		go func() {
			for range ch {
			}
		}()
	}
}
