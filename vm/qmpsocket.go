package vm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/digitalocean/go-qemu/qmp"
)

// socketMonitor is a qmp.Monitor over QEMU's QMP socket, in place of
// go-qemu's SocketMonitor: that one hands Run the bufio.Scanner's buffer,
// which its reader overwrites with the next line QEMU sends (go-qemu issue
// 226), so a large answer followed at once by an event came back altered
// (TestQMPAnswerSurvivesNextLine; the race detector caught it in CI on a
// 4 KB "info registers -a"). Here every line is copied before the next is
// read. The rest is the same protocol: the greeting, qmp_capabilities, one
// command at a time, events on their own channel.
type socketMonitor struct {
	c net.Conn

	mu     sync.Mutex // one command at a time
	stream chan qmpLine
	events chan qmp.Event

	listeners atomic.Int32
}

// qmpLine is one answer QEMU sent, or why none came.
type qmpLine struct {
	buf []byte
	err error
}

// qmpReply is the part of an answer Run checks: an error or not.
type qmpReply struct {
	Error *struct {
		Class string `json:"class"`
		Desc  string `json:"desc"`
	} `json:"error"`
}

func (r qmpReply) err() error {
	if r.Error == nil {
		return nil
	}
	return errors.New(r.Error.Desc)
}

// qmpMaxLine bounds one line from QEMU: "info registers -a" is about 2 KB
// per vCPU, a query-migrate a few hundred bytes.
const qmpMaxLine = 4 << 20

func dialSocketMonitor(sock string, timeout time.Duration) (*socketMonitor, error) {
	c, err := net.DialTimeout("unix", sock, timeout)
	if err != nil {
		return nil, err
	}
	return &socketMonitor{c: c}, nil
}

// Connect reads QEMU's greeting, leaves negotiation mode and starts the
// reader.
func (m *socketMonitor) Connect() error {
	dec := json.NewDecoder(m.c)
	var greeting struct {
		QMP *json.RawMessage `json:"QMP"`
	}
	if err := dec.Decode(&greeting); err != nil {
		return fmt.Errorf("reading the qmp greeting: %w", err)
	}
	if greeting.QMP == nil {
		return errors.New("the qmp socket did not greet with QMP")
	}
	if _, err := m.c.Write([]byte(`{"execute":"qmp_capabilities"}` + "\n")); err != nil {
		return err
	}
	var reply qmpReply
	if err := dec.Decode(&reply); err != nil {
		return fmt.Errorf("reading the qmp_capabilities answer: %w", err)
	}
	if err := reply.err(); err != nil {
		return fmt.Errorf("qmp_capabilities: %w", err)
	}
	m.stream = make(chan qmpLine)
	m.events = make(chan qmp.Event)
	go m.listen(io.MultiReader(dec.Buffered(), m.c))
	return nil
}

// listen sorts what QEMU sends into answers and events until the
// connection ends, then closes both channels.
func (m *socketMonitor) listen(r io.Reader) {
	defer close(m.events)
	defer close(m.stream)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), qmpMaxLine)
	for sc.Scan() {
		b := append([]byte(nil), sc.Bytes()...) // the scanner reuses its buffer
		var e qmp.Event
		if json.Unmarshal(b, &e) != nil {
			continue
		}
		if e.Event == "" {
			m.stream <- qmpLine{buf: b}
			continue
		}
		if m.listeners.Load() > 0 {
			m.events <- e
		}
	}
	if err := sc.Err(); err != nil {
		m.stream <- qmpLine{err: err}
	}
}

// Run sends one command and returns QEMU's answer, or its error.
func (m *socketMonitor) Run(command []byte) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stream == nil {
		return nil, errors.New("qmp: not connected")
	}
	if _, err := m.c.Write(command); err != nil {
		return nil, err
	}
	res, ok := <-m.stream
	if !ok {
		return nil, errors.New("qmp: the connection closed")
	}
	if res.err != nil {
		return nil, res.err
	}
	var reply qmpReply
	if err := json.Unmarshal(res.buf, &reply); err != nil {
		return nil, err
	}
	if err := reply.err(); err != nil {
		return nil, err
	}
	return res.buf, nil
}

// Events is the channel of QEMU's events; call it once.
func (m *socketMonitor) Events(context.Context) (<-chan qmp.Event, error) {
	m.listeners.Add(1)
	return m.events, nil
}

// Disconnect closes the socket and waits for the reader to end.
func (m *socketMonitor) Disconnect() error {
	m.listeners.Store(0)
	err := m.c.Close()
	if m.stream != nil {
		for range m.stream {
		}
	}
	return err
}
