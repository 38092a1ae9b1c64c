package link

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// Opener opens a new stream to the agent. In the supervisor it opens a yamux
// stream; in the CLI it goes through the supervisor's control socket.
type Opener func(ctx context.Context) (net.Conn, error)

// Client speaks to one guest agent.
type Client struct {
	open Opener
}

// NewClient returns a Client whose streams come from open.
func NewClient(open Opener) *Client { return &Client{open: open} }

// call opens a stream, sends req and reads the response header. The stream
// is closed if ctx ends before the response arrives.
func (c *Client) call(ctx context.Context, req *Request) (net.Conn, *Response, error) {
	conn, err := c.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := WriteMsg(conn, req); err != nil {
		conn.Close()
		return nil, nil, ctxErr(ctx, fmt.Errorf("link: sending %s request: %w", req.Op, err))
	}
	var resp Response
	if err := ReadMsg(conn, &resp); err != nil {
		conn.Close()
		return nil, nil, ctxErr(ctx, fmt.Errorf("link: reading %s response: %w", req.Op, err))
	}
	if resp.Error != "" {
		conn.Close()
		return nil, &resp, errors.New(resp.Error)
	}
	return conn, &resp, nil
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// simple runs a request that carries no stream data.
func (c *Client) simple(ctx context.Context, req *Request) (*Response, error) {
	conn, resp, err := c.call(ctx, req)
	if err != nil {
		return resp, err
	}
	conn.Close()
	return resp, nil
}

// Info asks the agent what the guest looks like from inside.
func (c *Client) Info(ctx context.Context) (*Info, error) {
	resp, err := c.simple(ctx, &Request{Op: OpInfo})
	if err != nil {
		return nil, err
	}
	if resp.Info == nil {
		return nil, errors.New("link: agent sent no info")
	}
	return resp.Info, nil
}

// SetTime sets the guest wall clock to t.
func (c *Client) SetTime(ctx context.Context, t time.Time) error {
	_, err := c.simple(ctx, &Request{Op: OpSetTime, UnixNano: t.UnixNano()})
	return err
}

// Entropy credits b to the guest's random pool.
func (c *Client) Entropy(ctx context.Context, b []byte) error {
	_, err := c.simple(ctx, &Request{Op: OpEntropy, Entropy: b})
	return err
}

// PowerOff asks the agent to sync and power the guest off.
func (c *Client) PowerOff(ctx context.Context) error {
	_, err := c.simple(ctx, &Request{Op: OpPowerOff})
	return err
}

// Dial connects to a socket inside the guest (e.g. a plugin's unix socket).
func (c *Client) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, _, err := c.call(ctx, &Request{Op: OpDial, Network: network, Addr: addr})
	return conn, err
}

// PutFile copies the local file src to dst in the guest, keeping mode bits
// unless mode is non-zero. It reports whether bytes were transferred (false
// when the guest already held the content).
func (c *Client) PutFile(ctx context.Context, src, dst string, mode os.FileMode) (bool, error) {
	f, err := os.Open(src)
	if err != nil {
		return false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	if st.IsDir() {
		return false, fmt.Errorf("%s is a directory; copy files one at a time", src)
	}
	if !st.Mode().IsRegular() {
		// The content is named by its hash before it is sent: it must be
		// read twice, which a pipe or a device cannot be.
		return false, fmt.Errorf("%s is not a regular file; copy it to one first", src)
	}
	// Hash exactly the bytes that will be sent: a file growing meanwhile
	// must not leave the guest a blob whose name is another content's.
	h := sha256.New()
	if n, err := io.CopyN(h, f, st.Size()); err != nil {
		return false, fmt.Errorf("reading %s: %d of %d bytes: %w", src, n, st.Size(), err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	if mode == 0 {
		mode = st.Mode().Perm()
	}
	return c.Put(ctx, f, &PutRequest{Path: dst, Mode: uint32(mode.Perm()), Size: st.Size(), SHA256: hex.EncodeToString(h.Sum(nil))})
}

// Put sends r (exactly req.Size bytes hashing to req.SHA256) to the guest.
// The guest installs the file only once all req.Size bytes came; a short
// r is an error and installs nothing.
func (c *Client) Put(ctx context.Context, r io.Reader, req *PutRequest) (bool, error) {
	conn, resp, err := c.call(ctx, &Request{Op: OpPut, Put: req})
	if err != nil {
		return false, fmt.Errorf("put %s: %w", req.Path, err)
	}
	defer conn.Close()
	if resp.Have {
		return false, nil
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if n, err := io.CopyN(conn, r, req.Size); err != nil {
		return false, ctxErr(ctx, fmt.Errorf("put %s: sent %d of %d bytes: %w", req.Path, n, req.Size, err))
	}
	var done Response
	if err := ReadMsg(conn, &done); err != nil {
		return false, ctxErr(ctx, fmt.Errorf("put %s: no confirmation from the guest: %w", req.Path, err))
	}
	if done.Error != "" {
		return false, fmt.Errorf("put %s: %s", req.Path, done.Error)
	}
	return true, nil
}

// Get copies the guest file src to w and returns its mode bits. The agent
// reads src to EOF, whatever its stat size (procfs, sysfs, pipes, files
// that grow); Get returns nil only when the agent said it reached EOF and
// every byte it sent was written to w. On error w may hold part of the
// content: write to a temporary file and keep it only on success.
func (c *Client) Get(ctx context.Context, src string, w io.Writer) (os.FileMode, error) {
	conn, resp, err := c.call(ctx, &Request{Op: OpGet, Path: src})
	if err != nil {
		return 0, fmt.Errorf("get %s: %w", src, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var n int64
	for {
		typ, payload, err := ReadFrame(conn)
		if err != nil {
			return 0, ctxErr(ctx, fmt.Errorf("get %s: transfer cut off after %d bytes, before the guest said it was complete: %w", src, n, err))
		}
		switch typ {
		case FrameData:
			if _, err := w.Write(payload); err != nil {
				return 0, fmt.Errorf("get %s: writing: %w", src, err)
			}
			n += int64(len(payload))
		case FrameEnd:
			var end GetEnd
			if err := json.Unmarshal(payload, &end); err != nil {
				return 0, fmt.Errorf("get %s: bad end-of-transfer frame: %w", src, err)
			}
			if end.Error != "" {
				return 0, fmt.Errorf("get %s: the guest stopped after %d bytes: %s", src, end.Size, end.Error)
			}
			if end.Size != n {
				return 0, fmt.Errorf("get %s: the guest sent %d bytes, %d arrived", src, end.Size, n)
			}
			return os.FileMode(resp.Mode), nil
		default:
			return 0, fmt.Errorf("get %s: unexpected frame type %d from the guest (agent too old or too new?)", src, typ)
		}
	}
}

// Process is a program running in the guest.
type Process struct {
	// Pid is the guest pid.
	Pid int

	conn     net.Conn
	fw       *FrameWriter
	stdout   io.Writer
	stderr   io.Writer
	closeOut func()

	// Stdin credit: how many bytes may be sent before the agent
	// acknowledges more (limited is false for agents without FrameStdinAck).
	mu      sync.Mutex
	cond    *sync.Cond
	credit  int
	limited bool
	ended   bool // demux returned: no more credit will come
	closed  bool // Close was called

	done chan struct{}
	exit Exit
	err  error
}

// StartOptions says where a started program's output goes.
type StartOptions struct {
	// Stdout and Stderr receive the program's output. They must not block
	// for long: output of both is read from one stream (and stdin credit
	// comes back on it).
	Stdout, Stderr io.Writer
	// OnExit runs after the last output was written and before Wait
	// returns (used to close pipes handed to readers).
	OnExit func()
}

// Start runs req in the guest. The program lives until it exits or is
// signalled, or until the stream goes (Close, or the link dropping): the
// agent then kills its process group. ctx only bounds the start.
func (c *Client) Start(ctx context.Context, req *ExecRequest, opt StartOptions) (*Process, error) {
	conn, _, err := c.call(ctx, &Request{Op: OpExec, Exec: req})
	if err != nil {
		return nil, err
	}
	p := &Process{conn: conn, fw: NewFrameWriter(conn), stdout: opt.Stdout, stderr: opt.Stderr, closeOut: opt.OnExit, done: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	if p.stdout == nil {
		p.stdout = io.Discard
	}
	if p.stderr == nil {
		p.stderr = io.Discard
	}
	// Bound the wait for the start frame by ctx, as call bounds the header.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	typ, payload, err := ReadFrame(conn)
	stopped := stop()
	if !stopped {
		return nil, ctx.Err()
	}
	if err == nil && typ == FrameExit {
		var e Exit
		_ = json.Unmarshal(payload, &e)
		conn.Close()
		if e.Error != "" {
			return nil, &StartError{Argv: req.Argv, Code: e.Code, Msg: e.Error}
		}
		return nil, fmt.Errorf("link: %s exited before it started", req.Argv[0])
	}
	if err != nil || typ != FrameStarted {
		conn.Close()
		return nil, ctxErr(ctx, fmt.Errorf("link: starting %s: no start frame (%v)", req.Argv[0], err))
	}
	var st Started
	_ = json.Unmarshal(payload, &st)
	p.Pid = st.Pid
	p.credit, p.limited = st.StdinWindow, st.StdinWindow > 0
	go p.demux()
	return p, nil
}

// StartError says a program could not be started (e.g. not found: code 127).
type StartError struct {
	Argv []string
	Code int
	Msg  string
}

func (e *StartError) Error() string { return e.Msg }

func (p *Process) demux() {
	defer close(p.done)
	defer func() {
		if p.closeOut != nil {
			p.closeOut()
		}
	}()
	defer func() {
		p.mu.Lock()
		p.ended = true
		p.cond.Broadcast()
		p.mu.Unlock()
	}()
	defer p.conn.Close()
	for {
		typ, payload, err := ReadFrame(p.conn)
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed {
				p.err = fmt.Errorf("link: stream to the program closed before it exited (the guest kills its process group): %w", ErrClosed)
			} else {
				p.err = fmt.Errorf("link: lost the guest while the program ran (guest died or link dropped): %w", err)
			}
			return
		}
		switch typ {
		case FrameStdout:
			_, _ = p.stdout.Write(payload)
		case FrameStderr:
			_, _ = p.stderr.Write(payload)
		case FrameStdinAck:
			if len(payload) == 4 {
				p.mu.Lock()
				p.credit += int(binary.BigEndian.Uint32(payload))
				p.cond.Broadcast()
				p.mu.Unlock()
			}
		case FrameExit:
			if err := json.Unmarshal(payload, &p.exit); err != nil {
				p.err = fmt.Errorf("link: bad exit frame: %w", err)
			}
			return
		}
	}
}

// ErrClosed is wrapped by Wait's error after Close.
var ErrClosed = errors.New("link: process closed")

// errExited is what a stdin write gets once the program has gone.
var errExited = errors.New("link: the program has exited; its stdin is closed")

// Stdin returns a writer feeding the program's stdin (ExecRequest.Stdin must
// be set); Close sends EOF. A Write blocks while the program is not taking
// its input (and the agent holds StdinWindow bytes of it), and fails once
// the program has exited.
func (p *Process) Stdin() io.WriteCloser { return &stdinWriter{p: p} }

type stdinWriter struct {
	p    *Process
	once sync.Once
}

func (s *stdinWriter) Write(b []byte) (int, error) {
	p := s.p
	n := 0
	for len(b) > 0 {
		k := min(len(b), 32<<10)
		p.mu.Lock()
		for p.limited && p.credit == 0 && !p.ended {
			p.cond.Wait()
		}
		if p.ended {
			p.mu.Unlock()
			return n, errExited
		}
		if p.limited {
			k = min(k, p.credit)
			p.credit -= k
		}
		p.mu.Unlock()
		if err := p.fw.Write(FrameStdin, b[:k]); err != nil {
			return n, err
		}
		n += k
		b = b[k:]
	}
	return n, nil
}

func (s *stdinWriter) Close() error {
	var err error
	s.once.Do(func() { err = s.p.fw.Write(FrameStdin, nil) })
	return err
}

// Signal sends signal sig to the program's process group. It does not wait
// behind stdin: the agent reads signals as they come.
func (p *Process) Signal(sig int) error {
	return p.fw.Write(FrameSignal, []byte{byte(sig)})
}

// Close abandons the program: it closes the stream, and the agent, seeing
// its host end gone, kills the program's whole process group. Wait then
// returns an error wrapping ErrClosed, unless the exit came first.
func (p *Process) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	return p.conn.Close()
}

// Done is closed when the program has exited (or the link was lost).
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the program to exit. It may be called from several
// goroutines.
func (p *Process) Wait() (Exit, error) {
	<-p.done
	return p.exit, p.err
}
