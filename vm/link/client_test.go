package link

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/yamux"

	"lab/internal/labtest"
)

// fakeAgent serves the link protocol over a yamux session the way the
// guest agent does, with an in-memory file system and a few scripted
// programs instead of real ones.
type fakeAgent struct {
	mu       sync.Mutex
	files    map[string][]byte
	modes    map[string]uint32
	blobs    map[string]bool // content the guest holds, by sha256
	received int64           // bytes pushed by the host
	setTime  int64

	// running is closed when a "hang" program has written its output.
	running chan struct{}
}

func newFakeAgent() *fakeAgent {
	return &fakeAgent{files: map[string][]byte{}, modes: map[string]uint32{}, blobs: map[string]bool{}, running: make(chan struct{})}
}

// serve accepts streams until the session ends.
func (a *fakeAgent) serve(sess *yamux.Session) {
	for {
		st, err := sess.Accept()
		if err != nil {
			return
		}
		go a.handle(st)
	}
}

func (a *fakeAgent) handle(conn net.Conn) {
	defer conn.Close()
	var req Request
	if err := ReadMsg(conn, &req); err != nil {
		return
	}
	switch req.Op {
	case OpInfo:
		_ = WriteMsg(conn, &Response{Info: &Info{Uname: "Linux fake 6.1.0 i686", CPUModel: "Intel(R) Celeron(R) CPU 2.00GHz", OnlineCPUs: 1, PresentCPUs: 1, StackKB: 8192, Session: "s1"}})
	case OpSetTime:
		a.mu.Lock()
		a.setTime = req.UnixNano
		a.mu.Unlock()
		_ = WriteMsg(conn, &Response{})
	case OpPut:
		a.put(conn, req.Put)
	case OpGet:
		a.mu.Lock()
		b, ok := a.files[req.Path]
		mode := a.modes[req.Path]
		a.mu.Unlock()
		if !ok {
			_ = WriteMsg(conn, &Response{Error: req.Path + ": no such file or directory"})
			return
		}
		if WriteMsg(conn, &Response{Mode: mode}) != nil {
			return
		}
		fw := NewFrameWriter(conn)
		switch {
		case strings.HasSuffix(req.Path, ".cut"): // half the content, then the stream ends
			_ = fw.Write(FrameData, b[:len(b)/2])
		case strings.HasSuffix(req.Path, ".short"): // claims more than it sent
			_ = fw.Write(FrameData, b)
			_ = fw.WriteJSON(FrameEnd, GetEnd{Size: int64(len(b)) + 1})
		case strings.HasSuffix(req.Path, ".eio"): // a read error half-way
			_ = fw.Write(FrameData, b[:len(b)/2])
			_ = fw.WriteJSON(FrameEnd, GetEnd{Size: int64(len(b) / 2), Error: "read: input/output error"})
		case strings.HasSuffix(req.Path, ".odd"): // a frame get does not know
			_ = fw.Write(FrameStdout, b)
		default:
			_, _ = ChunkWriter{F: fw, Typ: FrameData}.Write(b)
			_ = fw.WriteJSON(FrameEnd, GetEnd{Size: int64(len(b))})
		}
	case OpExec:
		a.exec(conn, req.Exec)
	default:
		_ = WriteMsg(conn, &Response{Error: fmt.Sprintf("unknown operation %q (agent fake)", req.Op)})
	}
}

func (a *fakeAgent) put(conn net.Conn, req *PutRequest) {
	a.mu.Lock()
	have := a.blobs[req.SHA256]
	a.mu.Unlock()
	if have {
		a.store(req, nil)
		_ = WriteMsg(conn, &Response{Have: true})
		return
	}
	if WriteMsg(conn, &Response{}) != nil {
		return
	}
	b := make([]byte, req.Size)
	if _, err := io.ReadFull(conn, b); err != nil {
		return
	}
	a.mu.Lock()
	a.received += req.Size
	a.mu.Unlock()
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != req.SHA256 {
		_ = WriteMsg(conn, &Response{Error: fmt.Sprintf("content hash %s, expected %s", got, req.SHA256)})
		return
	}
	a.store(req, b)
	_ = WriteMsg(conn, &Response{})
}

// store installs content (nil: the blob already held) at req.Path.
func (a *fakeAgent) store(req *PutRequest, b []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if b == nil {
		for _, c := range a.files {
			if sum := sha256.Sum256(c); hex.EncodeToString(sum[:]) == req.SHA256 {
				b = c
				break
			}
		}
	}
	a.files[req.Path] = b
	a.modes[req.Path] = req.Mode
	a.blobs[req.SHA256] = true
}

// exec runs a scripted program named by argv[0].
func (a *fakeAgent) exec(conn net.Conn, req *ExecRequest) {
	fw := NewFrameWriter(conn)
	_ = WriteMsg(conn, &Response{})
	stdout := ChunkWriter{F: fw, Typ: FrameStdout}
	stderr := ChunkWriter{F: fw, Typ: FrameStderr}
	switch req.Argv[0] {
	case "missing":
		_ = fw.WriteJSON(FrameExit, Exit{Code: 127, Error: "missing: command not found in the guest"})
		return
	case "no-start":
		_ = fw.WriteJSON(FrameExit, Exit{Code: 1})
		return
	}
	started := Started{Pid: 42}
	if req.Argv[0] == "window" {
		started.StdinWindow = 10
	}
	_ = fw.WriteJSON(FrameStarted, started)
	switch req.Argv[0] {
	case "talk": // talk CODE: some output on both streams, then exit CODE
		io.WriteString(stdout, "hello ")
		io.WriteString(stderr, "oops\n")
		io.WriteString(stdout, "world\n")
		stdout.Write(bytes.Repeat([]byte("x"), 100<<10))
		var code int
		fmt.Sscan(req.Argv[1], &code)
		_ = fw.WriteJSON(FrameExit, Exit{Code: code})
	case "cat": // echo stdin frames to stdout until EOF
		for {
			typ, p, err := ReadFrame(conn)
			if err != nil {
				return
			}
			if typ != FrameStdin {
				continue
			}
			if len(p) == 0 {
				break
			}
			stdout.Write(p)
		}
		_ = fw.WriteJSON(FrameExit, Exit{Code: 0})
	case "wait-signal": // exits as killed by the first signal it gets
		for {
			typ, p, err := ReadFrame(conn)
			if err != nil {
				return
			}
			if typ == FrameSignal && len(p) == 1 {
				_ = fw.WriteJSON(FrameExit, Exit{Code: 128 + int(p[0]), Signal: int(p[0])})
				return
			}
		}
	case "window": // takes 10 bytes of stdin, then 10 more per signal frame
		for {
			typ, p, err := ReadFrame(conn)
			if err != nil {
				return
			}
			switch typ {
			case FrameStdin:
				if len(p) == 0 {
					_ = fw.WriteJSON(FrameExit, Exit{Code: 0})
					return
				}
				stdout.Write(p)
			case FrameSignal:
				_ = fw.Write(FrameStdinAck, []byte{0, 0, 0, 10})
			}
		}
	case "hang": // writes, then runs until the link goes
		io.WriteString(stdout, "partial")
		close(a.running)
		_, _, _ = ReadFrame(conn)
	}
}

// fakeLink connects a Client to a fakeAgent over net.Pipe and yamux. cut
// drops the link (the guest dies or the port closes).
func fakeLink(t *testing.T, a *fakeAgent) (c *Client, cut func()) {
	t.Helper()
	hostEnd, guestEnd := net.Pipe()
	agentSess, err := yamux.Server(guestEnd, Config())
	if err != nil {
		t.Fatal(err)
	}
	go a.serve(agentSess)
	hostSess, err := yamux.Client(hostEnd, Config())
	if err != nil {
		t.Fatal(err)
	}
	cut = func() {
		hostEnd.Close()
		guestEnd.Close()
	}
	t.Cleanup(func() {
		hostSess.Close()
		agentSess.Close()
		cut()
	})
	return NewClient(func(context.Context) (net.Conn, error) { return hostSess.Open() }), cut
}

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestClientInfo(t *testing.T) {
	c, _ := fakeLink(t, newFakeAgent())
	info, err := c.Info(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.Uname != "Linux fake 6.1.0 i686" || info.OnlineCPUs != 1 || info.StackKB != 8192 || info.Session != "s1" {
		t.Errorf("Info = %+v, want what the agent sent", info)
	}
}

func TestClientSetTime(t *testing.T) {
	a := newFakeAgent()
	c, _ := fakeLink(t, a)
	now := time.Unix(1700000000, 123456789)
	if err := c.SetTime(ctxT(t), now); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.setTime != now.UnixNano() {
		t.Errorf("agent got %d, want %d", a.setTime, now.UnixNano())
	}
}

func TestClientAgentError(t *testing.T) {
	c, _ := fakeLink(t, newFakeAgent())
	err := c.PowerOff(ctxT(t)) // the fake does not implement it
	if err == nil || !strings.Contains(err.Error(), `unknown operation "poweroff"`) {
		t.Errorf("PowerOff = %v, want the agent's error", err)
	}
}

func TestClientPutGet(t *testing.T) {
	a := newFakeAgent()
	c, _ := fakeLink(t, a)
	ctx := ctxT(t)
	src := filepath.Join(t.TempDir(), "prog")
	content := bytes.Repeat([]byte("plugin bytes "), 10000)
	if err := os.WriteFile(src, content, 0o750); err != nil {
		t.Fatal(err)
	}

	sent, err := c.PutFile(ctx, src, "/root/prog", 0)
	if err != nil || !sent {
		t.Fatalf("first PutFile = %v, %v; want true, nil", sent, err)
	}
	// The same content again, at another path: nothing crosses the link.
	sent, err = c.PutFile(ctx, src, "/root/prog2", 0o700)
	if err != nil || sent {
		t.Fatalf("second PutFile = %v, %v; want false (the guest has it), nil", sent, err)
	}
	a.mu.Lock()
	received := a.received
	mode1, mode2 := a.modes["/root/prog"], a.modes["/root/prog2"]
	a.mu.Unlock()
	if received != int64(len(content)) {
		t.Errorf("agent received %d bytes over two puts, want %d", received, len(content))
	}
	if mode1 != 0o750 || mode2 != 0o700 {
		t.Errorf("modes %o and %o, want 750 (the file's) and 700 (given)", mode1, mode2)
	}

	for _, path := range []string{"/root/prog", "/root/prog2"} {
		var got bytes.Buffer
		mode, err := c.Get(ctx, path, &got)
		if err != nil {
			t.Fatalf("Get(%s) = %v", path, err)
		}
		if !bytes.Equal(got.Bytes(), content) {
			t.Errorf("Get(%s) returned %d bytes, want the %d put", path, got.Len(), len(content))
		}
		if mode == 0 {
			t.Errorf("Get(%s) mode 0", path)
		}
	}
}

func TestClientPutErrors(t *testing.T) {
	c, _ := fakeLink(t, newFakeAgent())
	ctx := ctxT(t)
	_, err := c.Put(ctx, strings.NewReader("abc"), &PutRequest{Path: "/root/x", Size: 3, SHA256: strings.Repeat("0", 64)})
	if err == nil || !strings.Contains(err.Error(), "put /root/x") || !strings.Contains(err.Error(), "content hash") {
		t.Errorf("Put(wrong hash) = %v, want the agent's hash error naming the path", err)
	}
	if _, err := c.PutFile(ctx, t.TempDir(), "/root/d", 0); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("PutFile(dir) = %v, want an 'is a directory' error", err)
	}
	if _, err := c.PutFile(ctx, filepath.Join(t.TempDir(), "nope"), "/root/d", 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("PutFile(missing) = %v, want os.ErrNotExist", err)
	}
}

// TestClientGetIncomplete: Get succeeds only on an end-of-transfer frame
// that accounts for every byte.
func TestClientGetIncomplete(t *testing.T) {
	a := newFakeAgent()
	content := bytes.Repeat([]byte("z"), 100<<10)
	for _, name := range []string{"f.cut", "f.short", "f.eio", "f.odd"} {
		a.files["/"+name] = content
	}
	c, _ := fakeLink(t, a)
	for name, want := range map[string]string{
		"f.cut":   "transfer cut off after 51200 bytes",
		"f.short": "the guest sent 102401 bytes, 102400 arrived",
		"f.eio":   "the guest stopped after 51200 bytes: read: input/output error",
		"f.odd":   "unexpected frame type 4",
	} {
		_, err := c.Get(ctxT(t), "/"+name, io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "get /"+name) {
			t.Errorf("Get(%s) = %v, want an error naming it and saying %q", name, err, want)
		}
	}
}

// TestClientStdinWindow: the host never has more stdin unacknowledged
// than the agent's window, and carries on when credit comes back.
func TestClientStdinWindow(t *testing.T) {
	c, _ := fakeLink(t, newFakeAgent())
	var stdout labtest.SyncBuffer
	p, err := c.Start(ctxT(t), &ExecRequest{Argv: []string{"window"}, Stdin: true}, StartOptions{Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := io.WriteString(p.Stdin(), "0123456789abcdefghij0123")
		wrote <- err
	}()
	for i, want := range []string{"0123456789", "0123456789abcdefghij"} {
		deadline := time.Now().Add(5 * time.Second)
		for stdout.String() != want {
			if time.Now().After(deadline) {
				t.Fatalf("after %d acks the agent has %q, want %q", i, stdout.String(), want)
			}
			time.Sleep(time.Millisecond)
		}
		select {
		case err := <-wrote:
			t.Fatalf("the write finished (%v) with only %q taken", err, want)
		default:
		}
		// Signal frames are how the fake is told to ack: they pass the
		// stdin that waits for credit.
		if err := p.Signal(1); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	p.Stdin().Close()
	if ex, err := p.Wait(); err != nil || ex.Code != 0 || stdout.String() != "0123456789abcdefghij0123" {
		t.Errorf("Wait = %+v, %v, stdout %q", ex, err, stdout.String())
	}
	// Once the program has gone, stdin writes fail instead of waiting for
	// credit that will never come.
	if _, err := io.WriteString(p.Stdin(), strings.Repeat("x", 20)); err == nil {
		t.Error("stdin write after exit succeeded")
	}
}

// TestClientProcessClose: Close ends the stream and Wait says so.
func TestClientProcessClose(t *testing.T) {
	a := newFakeAgent()
	c, _ := fakeLink(t, a)
	p, err := c.Start(ctxT(t), &ExecRequest{Argv: []string{"hang"}}, StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-a.running
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); !errors.Is(err, ErrClosed) {
		t.Errorf("Wait after Close = %v, want ErrClosed", err)
	}
}

func TestClientGetMissing(t *testing.T) {
	c, _ := fakeLink(t, newFakeAgent())
	_, err := c.Get(ctxT(t), "/nope", io.Discard)
	if err == nil || !strings.Contains(err.Error(), "get /nope") || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("Get(missing) = %v, want an error naming the path", err)
	}
}

func TestClientExec(t *testing.T) {
	tests := []struct {
		code string
		want int
	}{{"0", 0}, {"3", 3}}
	for _, tt := range tests {
		c, _ := fakeLink(t, newFakeAgent())
		var stdout, stderr labtest.SyncBuffer
		exited := false
		p, err := c.Start(ctxT(t), &ExecRequest{Argv: []string{"talk", tt.code}}, StartOptions{Stdout: &stdout, Stderr: &stderr, OnExit: func() { exited = true }})
		if err != nil {
			t.Fatal(err)
		}
		if p.Pid != 42 {
			t.Errorf("Pid = %d, want 42", p.Pid)
		}
		ex, err := p.Wait()
		if err != nil || ex.Code != tt.want || ex.Signal != 0 {
			t.Errorf("Wait = %+v, %v; want code %d", ex, err, tt.want)
		}
		if want := "hello world\n" + strings.Repeat("x", 100<<10); stdout.String() != want {
			t.Errorf("stdout = %.40q... (%d bytes), want %.40q... (%d bytes)", stdout.String(), len(stdout.String()), want, len(want))
		}
		if got := stderr.String(); got != "oops\n" {
			t.Errorf("stderr = %q, want %q", got, "oops\n")
		}
		if !exited {
			t.Errorf("OnExit did not run before Wait returned")
		}
		// Wait again, and Done: the same answer.
		<-p.Done()
		if ex2, err2 := p.Wait(); !reflect.DeepEqual(ex2, ex) || err2 != err {
			t.Errorf("second Wait = %+v, %v; want %+v, %v", ex2, err2, ex, err)
		}
	}
}

func TestClientExecNilWriters(t *testing.T) {
	c, _ := fakeLink(t, newFakeAgent())
	p, err := c.Start(ctxT(t), &ExecRequest{Argv: []string{"talk", "0"}}, StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ex, err := p.Wait(); err != nil || ex.Code != 0 {
		t.Errorf("Wait = %+v, %v; want output discarded and code 0", ex, err)
	}
}

func TestClientExecStdin(t *testing.T) {
	c, _ := fakeLink(t, newFakeAgent())
	var stdout labtest.SyncBuffer
	p, err := c.Start(ctxT(t), &ExecRequest{Argv: []string{"cat"}, Stdin: true}, StartOptions{Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	in := p.Stdin()
	big := strings.Repeat("y", 70<<10)
	for _, s := range []string{"abc\n", big} {
		if _, err := io.WriteString(in, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if err := in.Close(); err != nil { // a second Close sends nothing
		t.Fatal(err)
	}
	if ex, err := p.Wait(); err != nil || ex.Code != 0 {
		t.Fatalf("Wait = %+v, %v", ex, err)
	}
	if got, want := stdout.String(), "abc\n"+big; got != want {
		t.Errorf("cat echoed %d bytes, want %d", len(got), len(want))
	}
}

func TestClientExecSignal(t *testing.T) {
	c, _ := fakeLink(t, newFakeAgent())
	p, err := c.Start(ctxT(t), &ExecRequest{Argv: []string{"wait-signal"}}, StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(2); err != nil {
		t.Fatal(err)
	}
	ex, err := p.Wait()
	if err != nil || ex.Code != 130 || ex.Signal != 2 {
		t.Errorf("Wait = %+v, %v; want code 130, signal 2", ex, err)
	}
}

func TestClientStartErrors(t *testing.T) {
	c, _ := fakeLink(t, newFakeAgent())
	ctx := ctxT(t)
	_, err := c.Start(ctx, &ExecRequest{Argv: []string{"missing", "arg"}}, StartOptions{})
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("Start(missing) = %v, want a *StartError", err)
	}
	if se.Code != 127 || !strings.Contains(se.Msg, "command not found") || se.Argv[0] != "missing" {
		t.Errorf("StartError = %+v, want code 127 and the agent's message", se)
	}
	if err.Error() != se.Msg {
		t.Errorf("Error() = %q, want %q", err.Error(), se.Msg)
	}
	_, err = c.Start(ctx, &ExecRequest{Argv: []string{"no-start"}}, StartOptions{})
	if err == nil || errors.As(err, &se) || !strings.Contains(err.Error(), "no-start exited before it started") {
		t.Errorf("Start(no-start) = %v, want an 'exited before it started' error", err)
	}
}

func TestClientLinkLostMidRun(t *testing.T) {
	a := newFakeAgent()
	c, cut := fakeLink(t, a)
	var stdout labtest.SyncBuffer
	p, err := c.Start(ctxT(t), &ExecRequest{Argv: []string{"hang"}}, StartOptions{Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.running:
	case <-time.After(10 * time.Second):
		t.Fatal("the program never ran")
	}
	cut()
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after the link dropped")
	}
	_, err = p.Wait()
	if err == nil || !strings.Contains(err.Error(), "lost the guest") {
		t.Errorf("Wait after the link dropped = %v, want a 'lost the guest' error", err)
	}
}

func TestClientOpenerError(t *testing.T) {
	want := errors.New("supervisor not answering")
	c := NewClient(func(context.Context) (net.Conn, error) { return nil, want })
	if _, err := c.Info(context.Background()); !errors.Is(err, want) {
		t.Errorf("Info = %v, want %v", err, want)
	}
	if _, err := c.Start(context.Background(), &ExecRequest{Argv: []string{"x"}}, StartOptions{}); !errors.Is(err, want) {
		t.Errorf("Start = %v, want %v", err, want)
	}
}

// TestClientContext: a guest that never answers does not hold the caller
// past its context.
func TestClientContext(t *testing.T) {
	tests := []struct {
		name  string
		agent func(conn net.Conn) // what the unresponsive guest does
	}{
		{"never reads", func(net.Conn) {}},
		{"reads, never answers", func(conn net.Conn) { _, _ = io.Copy(io.Discard, conn) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClient(func(context.Context) (net.Conn, error) {
				host, guest := net.Pipe()
				t.Cleanup(func() { guest.Close() })
				go tt.agent(guest)
				return host, nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			_, err := c.Info(ctx)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Info = %v, want context.DeadlineExceeded", err)
			}
		})
	}
}

func TestInfoJSONNames(t *testing.T) {
	// state.json and results carry Info: its field names are a format.
	b, err := json.Marshal(Info{StackKB: -1, OnlineCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"stack_kb":-1`, `"online_cpus":2`, `"kernel_release":`, `"uptime_at_init":`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("Info JSON %s lacks %s", b, w)
		}
	}
}
