package main

// These tests run the real agent (serveConn, handle, exec, put, get, the
// reaper) on the host, against the real host client (link.Client) over a
// unix socketpair carrying the same handshake and yamux session as the
// virtio-serial port. None of the PID-1 set-up runs: no mounts, no modules.
// The test process becomes a child subreaper, so orphans of the programs
// the agent starts are reparented to it and reaped by the agent's reaper,
// as they are by PID 1 in a guest; nothing else in the test process starts
// children (the reaper would take their status).

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/yamux"
	"golang.org/x/sys/unix"

	"lab/vm/link"
)

// testReaper is the one wait4(-1) loop of the test process.
var testReaper *reaper

func TestMain(m *testing.M) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "agent tests: PR_SET_CHILD_SUBREAPER:", err)
		os.Exit(1)
	}
	flag.Parse()
	if !testing.Verbose() {
		logOutput = io.Discard
	}
	testReaper = newReaper()
	go testReaper.run()
	os.Exit(m.Run())
}

// newTestAgent returns an agent with its own blob directory.
func newTestAgent(t *testing.T) *agent {
	t.Helper()
	return &agent{
		started:  time.Now(),
		procs:    testReaper,
		blobDir:  filepath.Join(t.TempDir(), "blobs"),
		powerOff: func() { t.Error("the agent tried to power off") },
	}
}

// testLink is one host session to a test agent.
type testLink struct {
	c      *link.Client
	port   net.Conn       // the host end of the "virtio-serial port"
	served chan struct{}  // closed when serveConn has returned
	sess   *yamux.Session // the host's yamux session

	mu      sync.Mutex
	streams []net.Conn // every stream the client opened
}

// lastStream is the stream the client opened last.
func (l *testLink) lastStream() net.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.streams[len(l.streams)-1]
}

// cut drops the link the way a dying host or supervisor does, and waits
// for the agent's session to end.
func (l *testLink) cut(t *testing.T) {
	t.Helper()
	l.port.Close()
	select {
	case <-l.served:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent's session did not end 10 s after the link was cut")
	}
}

// socketPair returns the two ends of a unix stream socketpair: buffered
// like the real port, with deadlines.
func socketPair(t *testing.T) (host, guest net.Conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conns := make([]net.Conn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	return conns[0], conns[1]
}

// connect starts a session of a on a fresh socketpair, as the supervisor
// does on the port: handshake, then yamux.
func connect(t *testing.T, a *agent) *testLink {
	t.Helper()
	host, guest := socketPair(t)
	l := &testLink{port: host, served: make(chan struct{})}
	go func() {
		defer close(l.served)
		if err := a.serveConn(guest); err != nil {
			t.Logf("session ended: %v", err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := link.HostHandshake(ctx, host, 0); err != nil {
		t.Fatal(err)
	}
	sess, err := yamux.Client(host, link.Config())
	if err != nil {
		t.Fatal(err)
	}
	l.sess = sess
	l.c = link.NewClient(func(context.Context) (net.Conn, error) {
		st, err := sess.Open()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		l.streams = append(l.streams, st)
		l.mu.Unlock()
		return st, nil
	})
	t.Cleanup(func() {
		sess.Close()
		host.Close()
		<-l.served
	})
	return l
}

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// syncBuffer is a bytes.Buffer safe for the demux goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitExit waits at most d for p to end.
func waitExit(t *testing.T, p *link.Process, d time.Duration) (link.Exit, error) {
	t.Helper()
	select {
	case <-p.Done():
		return p.Wait()
	case <-time.After(d):
		t.Fatalf("program (pid %d) still running %v later", p.Pid, d)
	}
	return link.Exit{}, nil
}

// groupProcs lists the processes (zombies included) in process group pgid.
func groupProcs(pgid int) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parens.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			out = append(out, e.Name()+" "+s[strings.IndexByte(s, '(')+1:i]+" "+f[0])
		}
	}
	return out
}

// waitGroupGone waits at most d for process group pgid to be empty (its
// processes killed and reaped).
func waitGroupGone(t *testing.T, pgid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		procs := groupProcs(pgid)
		if len(procs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has %v after %v", pgid, procs, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// start runs argv with the test agent, in a temporary directory.
func start(t *testing.T, l *testLink, req *link.ExecRequest, opt link.StartOptions) *link.Process {
	t.Helper()
	if req.Dir == "" {
		req.Dir = t.TempDir()
	}
	p, err := l.c.Start(ctxT(t), req, opt)
	if err != nil {
		t.Fatalf("Start(%q): %v", req.Argv, err)
	}
	t.Cleanup(func() { _ = unix.Kill(-p.Pid, unix.SIGKILL) })
	return p
}

func TestInfo(t *testing.T) {
	a := newTestAgent(t)
	l := connect(t, a)
	info, err := l.c.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.AgentVersion != version || info.Session == "" || info.KernelRelease == "" {
		t.Errorf("Info = %+v, want agent version %s, a session id, a kernel release", info, version)
	}
}

func TestUnknownOp(t *testing.T) {
	l := connect(t, newTestAgent(t))
	conn, err := l.sess.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := link.WriteMsg(conn, &link.Request{Op: "frobnicate"}); err != nil {
		t.Fatal(err)
	}
	var resp link.Response
	if err := link.ReadMsg(conn, &resp); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Error, `unknown operation "frobnicate"`) {
		t.Errorf("error = %q, want an unknown-operation error", resp.Error)
	}
}

func TestExecOutputAndExitCode(t *testing.T) {
	l := connect(t, newTestAgent(t))
	var stdout, stderr syncBuffer
	p := start(t, l, &link.ExecRequest{Argv: []string{"sh", "-c", "echo out; echo err >&2; pwd; exit 3"}}, link.StartOptions{Stdout: &stdout, Stderr: &stderr})
	ex, err := waitExit(t, p, 10*time.Second)
	if err != nil || ex.Code != 3 || ex.Signal != 0 {
		t.Errorf("exit = %+v, %v; want code 3", ex, err)
	}
	if got := stdout.String(); !strings.HasPrefix(got, "out\n/") {
		t.Errorf("stdout = %q, want out and the directory", got)
	}
	if got := stderr.String(); got != "err\n" {
		t.Errorf("stderr = %q, want %q", got, "err\n")
	}
}

func TestExecEnv(t *testing.T) {
	l := connect(t, newTestAgent(t))
	var stdout syncBuffer
	p := start(t, l, &link.ExecRequest{Argv: []string{"/bin/sh", "-c", "echo $FOO"}, Env: []string{"FOO=bar"}}, link.StartOptions{Stdout: &stdout})
	if ex, err := waitExit(t, p, 10*time.Second); err != nil || ex.Code != 0 {
		t.Fatalf("exit = %+v, %v", ex, err)
	}
	if got := stdout.String(); got != "bar\n" {
		t.Errorf("stdout = %q, want %q", got, "bar\n")
	}
}

func TestExecNotFound(t *testing.T) {
	l := connect(t, newTestAgent(t))
	for _, argv0 := range []string{"no-such-program-here", "/no/such/program"} {
		_, err := l.c.Start(ctxT(t), &link.ExecRequest{Argv: []string{argv0}, Dir: t.TempDir()}, link.StartOptions{})
		var se *link.StartError
		if !errors.As(err, &se) || se.Code != 127 || !strings.Contains(se.Msg, argv0) {
			t.Errorf("Start(%s) = %v, want a StartError with code 127 naming it", argv0, err)
		}
	}
	_, err := l.c.Start(ctxT(t), &link.ExecRequest{}, link.StartOptions{})
	if err == nil || !strings.Contains(err.Error(), "empty command") {
		t.Errorf("Start(no argv) = %v, want an empty-command error", err)
	}
}

func TestExecSignal(t *testing.T) {
	l := connect(t, newTestAgent(t))
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGKILL} {
		p := start(t, l, &link.ExecRequest{Argv: []string{"sleep", "40"}}, link.StartOptions{})
		if err := p.Signal(int(sig)); err != nil {
			t.Fatal(err)
		}
		ex, err := waitExit(t, p, 5*time.Second)
		if err != nil || ex.Signal != int(sig) || ex.Code != 128+int(sig) {
			t.Errorf("after %v: exit = %+v, %v; want signal %d, code %d", sig, ex, err, sig, 128+int(sig))
		}
	}
}

// TestReapsOrphans: a program's background child outlives it, is
// reparented to the agent (here: the subreaper test process) and reaped
// when it exits, so no zombie piles up.
func TestReapsOrphans(t *testing.T) {
	l := connect(t, newTestAgent(t))
	var stdout syncBuffer
	p := start(t, l, &link.ExecRequest{Argv: []string{"sh", "-c", "sleep 0.2 >/dev/null 2>&1 & echo $!"}}, link.StartOptions{Stdout: &stdout})
	if ex, err := waitExit(t, p, 10*time.Second); err != nil || ex.Code != 0 {
		t.Fatalf("exit = %+v, %v", ex, err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(stdout.String()))
	if err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", orphan))
		if err != nil {
			return // reaped
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d not reaped 10 s on: %s", orphan, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPutGet(t *testing.T) {
	a := newTestAgent(t)
	l := connect(t, a)
	ctx := ctxT(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "prog")
	content := bytes.Repeat([]byte("plugin bytes "), 100000)
	if err := os.WriteFile(src, content, 0o750); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "guest", "prog")
	sent, err := l.c.PutFile(ctx, src, dst, 0)
	if err != nil || !sent {
		t.Fatalf("first PutFile = %v, %v; want true, nil", sent, err)
	}
	// The same content again: nothing crosses the link, its own mode.
	dst2 := filepath.Join(dir, "guest", "prog2")
	sent, err = l.c.PutFile(ctx, src, dst2, 0o700)
	if err != nil || sent {
		t.Fatalf("second PutFile = %v, %v; want false (the guest has it), nil", sent, err)
	}
	for path, wantMode := range map[string]os.FileMode{dst: 0o750, dst2: 0o700} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != wantMode {
			t.Errorf("%s: mode %o, want %o", path, st.Mode().Perm(), wantMode)
		}
		var got bytes.Buffer
		mode, err := l.c.Get(ctx, path, &got)
		if err != nil {
			t.Fatalf("Get(%s) = %v", path, err)
		}
		if !bytes.Equal(got.Bytes(), content) || mode != wantMode {
			t.Errorf("Get(%s) = %d bytes, mode %o; want %d bytes, mode %o", path, got.Len(), mode, len(content), wantMode)
		}
	}
}

func TestPutErrors(t *testing.T) {
	l := connect(t, newTestAgent(t))
	_, err := l.c.Put(ctxT(t), strings.NewReader("abc"), &link.PutRequest{Path: "relative/x", Size: 3})
	if err == nil || !strings.Contains(err.Error(), "must be absolute") {
		t.Errorf("Put(relative) = %v, want a must-be-absolute error", err)
	}
}

func TestGetErrors(t *testing.T) {
	l := connect(t, newTestAgent(t))
	dir := t.TempDir()
	for path, want := range map[string]string{
		filepath.Join(dir, "nope"): "no such file",
		dir:                        "is a directory",
	} {
		_, err := l.c.Get(ctxT(t), path, io.Discard)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("Get(%s) = %v, want an error naming it and saying %q", path, err, want)
		}
	}
}

// TestSessionRestart: the host goes away and comes back; the agent serves
// the new session (a new id) as it served the first.
func TestSessionRestart(t *testing.T) {
	a := newTestAgent(t)
	l1 := connect(t, a)
	info1, err := l1.c.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	l1.cut(t)
	l2 := connect(t, a)
	info2, err := l2.c.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if info2.Session == info1.Session {
		t.Errorf("second session has the first's id %s", info1.Session)
	}
	if info2.UptimeAtReady != info1.UptimeAtReady {
		t.Errorf("uptime at ready changed from %v to %v: it is the first session's", info1.UptimeAtReady, info2.UptimeAtReady)
	}
	var stdout syncBuffer
	p := start(t, l2, &link.ExecRequest{Argv: []string{"echo", "again"}}, link.StartOptions{Stdout: &stdout})
	if ex, err := waitExit(t, p, 10*time.Second); err != nil || ex.Code != 0 || stdout.String() != "again\n" {
		t.Errorf("exec in the new session = %+v, %v, stdout %q", ex, err, stdout.String())
	}
}

// TestLinkArg: lab.link= names a device under /dev, nothing else.
func TestLinkArg(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"console=ttyS0", "lab.link=hvc0"}, "/dev/hvc0"},
		{[]string{"lab.link=ttyS1"}, "/dev/ttyS1"},
		{[]string{"lab.link=../etc/passwd"}, ""},
		{[]string{"lab.link=vport/x"}, ""},
		{[]string{"lab.link="}, ""},
		{[]string{"quiet"}, ""},
	} {
		if got := linkArg(tt.args); got != tt.want {
			t.Errorf("linkArg(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
	if !isTTYLink("/dev/hvc0") || !isTTYLink("/dev/ttyS1") || isTTYLink("/dev/vport1p1") {
		t.Error("isTTYLink: hvc0 and ttyS1 are terminals, a virtio port is not")
	}
}
