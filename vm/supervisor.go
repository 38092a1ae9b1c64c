package vm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"lab/vm/link"

	"golang.org/x/sys/unix"
)

// readyMsg is what the supervisor reports to `lab up` on its ready pipe.
type readyMsg struct {
	Error string `json:"error,omitempty"`
	State *State `json:"state,omitempty"`
}

// Supervise is the body of the detached supervisor process
// (`lab __supervise DIR`, ready pipe on fd 3). It owns QEMU, the console
// log, the link and the control socket, and removes the state directory
// when the machine is gone. Its log (and the machine's: a snapshot that
// failed, a link that dropped) goes to logw, which `lab __supervise` points
// at the supervisor log. It returns the process exit code.
func Supervise(dir string, ready *os.File, logw io.Writer) int {
	logger := log.New(logw, "supervisor: ", log.LstdFlags|log.Lmicroseconds)
	report := func(msg readyMsg) {
		if ready == nil {
			return
		}
		_ = json.NewEncoder(ready).Encode(msg)
		ready.Close()
		ready = nil
	}
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		report(readyMsg{Error: err.Error()})
		return 1
	}
	var cfg Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		report(readyMsg{Error: fmt.Sprintf("%s: %v", ConfigFile, err)})
		return 1
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer cancel()
	// A throwaway VM's owner holds the write end of the pipe on fd 4; it
	// closes when the owner ends, however it ends. A VM with an owner
	// pid (a test binary's, a CI job's) ends with that process.
	ownerGone := make(chan struct{})
	ownerWhy := "the process that owned this throwaway vm is gone"
	gone := func() {
		logger.Printf("%s; discarding it", ownerWhy)
		close(ownerGone)
		cancel()
	}
	switch {
	case cfg.Throwaway:
		owner := os.NewFile(4, "owner")
		go func() {
			_, _ = io.Copy(io.Discard, owner)
			gone()
		}()
	case cfg.OwnerPID > 0:
		ownerWhy = fmt.Sprintf("its owner, process %d ($LAB_OWNER_PID), is gone", cfg.OwnerPID)
		wait, err := watchPID(cfg.OwnerPID)
		if err != nil {
			report(readyMsg{Error: fmt.Sprintf("watching the owner process %d ($LAB_OWNER_PID): %v", cfg.OwnerPID, err)})
			return 1
		}
		go func() {
			wait()
			gone()
		}()
	}

	st := &State{Config: cfg, Phase: PhaseBooting, SupervisorPID: os.Getpid(), Started: time.Now()}
	if err := writeState(dir, st); err != nil {
		report(readyMsg{Error: err.Error()})
		return 1
	}
	m, err := Start(ctx, dir, cfg, StartOptions{
		OnStarted: func(pid int) {
			st.QEMUPID = pid
			_ = writeState(dir, st)
		},
		Log: logger.Printf,
	})
	if err != nil {
		logger.Printf("boot failed: %v", err)
		report(readyMsg{Error: err.Error()})
		os.RemoveAll(dir)
		return 1
	}
	st.Phase = PhaseRunning
	st.Started = m.Started
	st.Ready = m.Ready
	st.BootSeconds = m.Ready.Sub(m.Started).Seconds()
	st.Guest = m.Info
	st.Boot = m.Boot
	st.Notes = m.Notes
	if err := writeState(dir, st); err != nil {
		m.Kill()
		report(readyMsg{Error: err.Error()})
		os.RemoveAll(dir)
		return 1
	}
	sock := filepath.Join(dir, CtlSock)
	os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		m.Kill()
		report(readyMsg{Error: err.Error()})
		os.RemoveAll(dir)
		return 1
	}
	_ = os.Chmod(sock, 0o600)
	logger.Printf("vm %s ready in %.2fs (%s, clock %s, %s)", cfg.Name, st.BootSeconds, cfg.Accel, cfg.Clock, st.Boot)
	for _, p := range m.Phases {
		logger.Printf("  %6.2fs %s", p.Since.Seconds(), p.Name)
	}
	report(readyMsg{State: st})

	s := &server{m: m, st: st, dir: dir, log: logger, down: make(chan ctlRequest, 1)}
	go s.serve(ln)
	var grace time.Duration
	var downConn net.Conn
	discard := false
	// Why it ends is recorded before anything goes, so that a run that
	// loses its link meanwhile can tell `lab down` from a crash.
	end := Ended{Name: cfg.Name, Profile: cfg.Profile.Name}
	select {
	case <-m.Exited():
		logger.Printf("qemu exited: %v", m.waitErr)
		end.Cause, end.Reason = EndDied, exitReason(m.waitErr)
	case <-ownerGone:
		discard = true
		end.Cause, end.Reason = EndDiscarded, ownerWhy
	case <-ctx.Done():
		if isClosed(ownerGone) {
			discard = true
			end.Cause, end.Reason = EndDiscarded, ownerWhy
			break
		}
		logger.Printf("signalled; powering off")
		grace = 5 * time.Second
		end.Cause, end.Reason = EndSignalled, "its supervisor was signalled to stop"
	case req := <-s.down:
		grace = req.Grace
		discard = req.Discard
		downConn = s.downConn
		end.Cause, end.Reason, end.By = EndDown, fmt.Sprintf("taken down by `lab down` (pid %d)", req.PID), req.By
		if discard {
			end.Cause, end.Reason = EndDiscarded, fmt.Sprintf("discarded by the run that booted it (pid %d)", req.PID)
		}
	}
	end.Time = time.Now().UTC()
	if end.Cause != EndDiscarded {
		// A throwaway VM's end is its run's business: nothing to keep.
		recordEnd(dir, end)
	}
	ln.Close()
	st.Phase = PhaseStopping
	_ = writeState(dir, st)
	var derr error
	select {
	case <-m.Exited():
	default:
		if discard {
			m.Discard(context.Background())
			break
		}
		if grace <= 0 {
			grace = 30 * time.Second
		}
		derr = m.Shutdown(context.Background(), grace)
	}
	os.RemoveAll(dir)
	if downConn != nil {
		resp := ctlResponse{}
		if derr != nil {
			resp.Error = derr.Error()
		}
		_ = link.WriteMsg(downConn, &resp)
		downConn.Close()
	}
	return 0
}

type server struct {
	m   *Machine
	st  *State
	dir string
	log *log.Logger

	once     sync.Once
	down     chan ctlRequest
	downConn net.Conn
}

func (s *server) serve(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go s.handle(conn)
	}
}

func (s *server) handle(conn net.Conn) {
	var req ctlRequest
	if err := link.ReadMsg(conn, &req); err != nil {
		conn.Close()
		return
	}
	switch req.Op {
	case ctlLink:
		// While the link reconnects this waits for it (bounded).
		st, session, err := s.m.OpenStream(context.Background())
		if err != nil {
			_ = link.WriteMsg(conn, &ctlResponse{Error: err.Error()})
			conn.Close()
			return
		}
		if err := link.WriteMsg(conn, &ctlResponse{Link: &LinkStatus{Session: session, Up: true}}); err != nil {
			st.Close()
			conn.Close()
			return
		}
		splice(conn, st)
	case ctlStatus:
		status := &Status{Uptime: time.Since(s.m.Started)}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rs, err := s.m.RunState(ctx)
		cancel()
		if err != nil {
			rs = "unknown (" + err.Error() + ")"
		}
		status.RunState = rs
		status.NIC = s.m.NIC()
		_ = link.WriteMsg(conn, &ctlResponse{Status: status})
		conn.Close()
	case ctlLinkState:
		session, up := s.m.LinkState()
		_ = link.WriteMsg(conn, &ctlResponse{Link: &LinkStatus{Session: session, Up: up}})
		conn.Close()
	case ctlDropLink:
		s.log.Printf("dropping the link at a client's request (diagnostic)")
		resp := &ctlResponse{}
		if err := s.m.DropLink(); err != nil {
			resp.Error = err.Error()
		}
		_ = link.WriteMsg(conn, resp)
		conn.Close()
	case ctlNIC:
		s.holdNIC(conn, req.NIC)
	case ctlDown:
		taken := false
		s.once.Do(func() {
			taken = true
			s.downConn = conn
			s.down <- req
		})
		if !taken {
			conn.Close() // already going down; the caller waits for the pid
		}
	default:
		_ = link.WriteMsg(conn, &ctlResponse{Error: unknownOp(req.Op)})
		conn.Close()
	}
}

// splice copies both ways until either side is done.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	go func() { io.Copy(a, b); done <- struct{}{} }()
	go func() { io.Copy(b, a); done <- struct{}{} }()
	<-done
	a.Close()
	b.Close()
	<-done
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// watchPID returns a function that returns once process pid has ended
// (at once if it is not there): a pidfd, so a pid reused meanwhile is
// not mistaken for it.
func watchPID(pid int) (wait func(), err error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	return func() {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != unix.EINTR {
				return
			}
		}
	}, nil
}
