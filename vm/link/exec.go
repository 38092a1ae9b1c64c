package link

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Frame types on an exec stream. Host to guest: FrameStdin (empty payload
// means EOF) and FrameSignal. Guest to host: FrameStarted, FrameStdout,
// FrameStderr, FrameStdinAck, and exactly one FrameExit, after which the
// guest closes the stream: the host knows a program ended because it was
// told.
//
// Signals get through whatever stdin does: the agent reads the stream all
// the time and never blocks on the program's stdin pipe, because the host
// keeps no more than Started.StdinWindow bytes of stdin unacknowledged
// (FrameStdinAck returns credit as the program takes its input). So a
// program that never reads a flood of stdin still gets its signal at
// once, and the agent sees at once when the host end goes away (stream
// closed, session dropped): it then kills the program's whole process
// group.
//
// A get stream, after its Response, carries FrameData frames and ends with
// one FrameEnd: the agent read the file to EOF (or says why not) and sent
// GetEnd.Size bytes. A stream that ends without FrameEnd is a cut-off
// transfer.
const (
	FrameStdin   byte = 1
	FrameSignal  byte = 2
	FrameStarted byte = 3
	FrameStdout  byte = 4
	FrameStderr  byte = 5
	FrameExit    byte = 6
	// FrameStdinAck: the program took that many more bytes of stdin
	// (payload: 4-byte big-endian count); the host may send as many more.
	FrameStdinAck byte = 7
	FrameData     byte = 8 // get: file content
	FrameEnd      byte = 9 // get: GetEnd
)

// maxFrame bounds one frame's payload.
const maxFrame = 1 << 20

// StdinWindow is how many bytes of stdin the agent accepts ahead of the
// program reading them (it sends it in Started).
const StdinWindow = 128 << 10

// Started is the payload of FrameStarted.
type Started struct {
	Pid int `json:"pid"`
	// StdinWindow is how many bytes of stdin the host may have sent and
	// not yet seen acknowledged; 0: no limit (agents before FrameStdinAck).
	StdinWindow int `json:"stdin_window,omitempty"`
}

// Exit is the payload of FrameExit.
type Exit struct {
	// Code is the exit status; 128+n when killed by signal n (as shells do).
	Code int `json:"code"`
	// Signal is the signal that killed the program, 0 if it exited.
	Signal int `json:"signal,omitempty"`
	// Error is set when the program could not be started.
	Error string `json:"error,omitempty"`
	// Leftovers, with KillGroup: the processes the program left behind
	// outside its group (a session it started, a daemon), which the
	// agent killed, "PID (COMM)" each; and Removed, the temporary
	// directory it gave the program, if anything was left in it.
	Leftovers []string `json:"leftovers,omitempty"`
	Removed   string   `json:"removed,omitempty"`
}

// GetEnd is the payload of FrameEnd, the last frame of a get.
type GetEnd struct {
	// Size is how many bytes of content the agent sent.
	Size int64 `json:"size"`
	// Error says why the agent stopped before EOF; empty when it read the
	// file to its end.
	Error string `json:"error,omitempty"`
}

// FrameWriter writes frames; safe for concurrent use.
type FrameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewFrameWriter returns a FrameWriter on w.
func NewFrameWriter(w io.Writer) *FrameWriter { return &FrameWriter{w: w} }

// Write sends one frame.
func (f *FrameWriter) Write(typ byte, payload []byte) error {
	if len(payload) > maxFrame {
		return fmt.Errorf("link: frame of %d bytes is too large", len(payload))
	}
	buf := make([]byte, 5+len(payload))
	buf[0] = typ
	binary.BigEndian.PutUint32(buf[1:], uint32(len(payload)))
	copy(buf[5:], payload)
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err := f.w.Write(buf)
	return err
}

// WriteJSON sends a frame whose payload is v as JSON.
func (f *FrameWriter) WriteJSON(typ byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return f.Write(typ, b)
}

// ReadFrame reads one frame.
func ReadFrame(r io.Reader) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("link: frame of %d bytes is too large", n)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return 0, nil, err
	}
	return hdr[0], p, nil
}

// ChunkWriter turns writes into frames of one type (stdout, stderr, stdin).
type ChunkWriter struct {
	F   *FrameWriter
	Typ byte
}

func (c ChunkWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), 32<<10)
		if err := c.F.Write(c.Typ, p[:k]); err != nil {
			return n, err
		}
		n += k
		p = p[k:]
	}
	return n, nil
}
