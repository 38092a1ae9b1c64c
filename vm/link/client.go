package link

import (
	"context"
	"crypto/sha256"
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
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false, err
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
	if _, err := io.CopyN(conn, r, req.Size); err != nil {
		return false, ctxErr(ctx, fmt.Errorf("put %s: %w", req.Path, err))
	}
	var done Response
	if err := ReadMsg(conn, &done); err != nil {
		return false, ctxErr(ctx, fmt.Errorf("put %s: %w", req.Path, err))
	}
	if done.Error != "" {
		return false, fmt.Errorf("put %s: %s", req.Path, done.Error)
	}
	return true, nil
}

// Get copies the guest file src to w and returns its mode bits.
func (c *Client) Get(ctx context.Context, src string, w io.Writer) (os.FileMode, error) {
	conn, resp, err := c.call(ctx, &Request{Op: OpGet, Path: src})
	if err != nil {
		return 0, fmt.Errorf("get %s: %w", src, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	n, err := io.CopyN(w, conn, resp.Size)
	if err != nil {
		return 0, ctxErr(ctx, fmt.Errorf("get %s: %d of %d bytes: %w", src, n, resp.Size, err))
	}
	return os.FileMode(resp.Mode), nil
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

	done chan struct{}
	exit Exit
	err  error
}

// StartOptions says where a started program's output goes.
type StartOptions struct {
	// Stdout and Stderr receive the program's output. They must not block
	// for long: output of both is read from one stream.
	Stdout, Stderr io.Writer
	// OnExit runs after the last output was written and before Wait
	// returns (used to close pipes handed to readers).
	OnExit func()
}

// Start runs req in the guest. The program lives until it exits or is
// signalled; ctx only bounds the start.
func (c *Client) Start(ctx context.Context, req *ExecRequest, opt StartOptions) (*Process, error) {
	conn, _, err := c.call(ctx, &Request{Op: OpExec, Exec: req})
	if err != nil {
		return nil, err
	}
	p := &Process{conn: conn, fw: NewFrameWriter(conn), stdout: opt.Stdout, stderr: opt.Stderr, closeOut: opt.OnExit, done: make(chan struct{})}
	if p.stdout == nil {
		p.stdout = io.Discard
	}
	if p.stderr == nil {
		p.stderr = io.Discard
	}
	typ, payload, err := ReadFrame(conn)
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
	defer p.conn.Close()
	for {
		typ, payload, err := ReadFrame(p.conn)
		if err != nil {
			p.err = fmt.Errorf("link: lost the guest while the program ran (guest died or link dropped): %w", err)
			return
		}
		switch typ {
		case FrameStdout:
			_, _ = p.stdout.Write(payload)
		case FrameStderr:
			_, _ = p.stderr.Write(payload)
		case FrameExit:
			if err := json.Unmarshal(payload, &p.exit); err != nil {
				p.err = fmt.Errorf("link: bad exit frame: %w", err)
			}
			return
		}
	}
}

// Stdin returns a writer feeding the program's stdin (ExecRequest.Stdin must
// be set); Close sends EOF.
func (p *Process) Stdin() io.WriteCloser { return &stdinWriter{p: p} }

type stdinWriter struct {
	p    *Process
	once sync.Once
}

func (s *stdinWriter) Write(b []byte) (int, error) {
	return ChunkWriter{F: s.p.fw, Typ: FrameStdin}.Write(b)
}

func (s *stdinWriter) Close() error {
	var err error
	s.once.Do(func() { err = s.p.fw.Write(FrameStdin, nil) })
	return err
}

// Signal sends signal sig to the program's process group.
func (p *Process) Signal(sig int) error {
	return p.fw.Write(FrameSignal, []byte{byte(sig)})
}

// Done is closed when the program has exited (or the link was lost).
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the program to exit. It may be called from several
// goroutines.
func (p *Process) Wait() (Exit, error) {
	<-p.done
	return p.exit, p.err
}
