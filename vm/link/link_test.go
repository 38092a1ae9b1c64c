package link

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/yamux"
)

// connPair returns the two ends of a unix socketpair. Unlike net.Pipe its
// writes are buffered, like the real port's, so one side may write past
// what the other has read.
func connPair(t *testing.T) (host, guest net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
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
		t.Cleanup(func() { c.Close() })
	}
	return conns[0], conns[1]
}

// readN reads exactly n bytes within a few seconds.
func readN(t *testing.T, c net.Conn, n int) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("reading %d bytes: %v", n, err)
	}
	return string(b)
}

type handshakeResult struct {
	id  string
	err error
}

func hostHandshake(ctx context.Context, c net.Conn, resetAfter time.Duration) <-chan handshakeResult {
	ch := make(chan handshakeResult, 1)
	go func() {
		id, err := HostHandshake(ctx, c, resetAfter)
		ch <- handshakeResult{id, err}
	}()
	return ch
}

func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out")
	}
	var zero T
	return zero
}

func TestHandshake(t *testing.T) {
	tests := []struct {
		name string
		// before is written by the guest before its ready line.
		before string
		id     string
	}{
		{"clean", "", "0123abcd"},
		{"console noise", "[    1.234] virtio_console: loaded\r\nsome more\n", "s1"},
		{"stale yamux bytes", "\x00\x01\x00\x02\x00\x00\x00\x00garbage\n", "s2"},
		{"a line too long to be a ready line", strings.Repeat("x", 10000) + "\n", "s3"},
		{"ready prefix mid-line", "boot: LAB-LINK-READY \n", "s4"}, // empty id: not a ready line
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, guest := connPair(t)
			res := hostHandshake(context.Background(), host, 0)
			agentErr := make(chan error, 1)
			go func() {
				if _, err := io.WriteString(guest, tt.before); err != nil {
					agentErr <- err
					return
				}
				if err := Announce(guest, tt.id); err != nil {
					agentErr <- err
					return
				}
				// Bytes right after the ready line belong to whoever reads
				// next, not to the handshake.
				if _, err := io.WriteString(guest, "NEXT"); err != nil {
					agentErr <- err
					return
				}
				_ = guest.SetReadDeadline(time.Now().Add(5 * time.Second))
				agentErr <- AwaitGo(guest, tt.id)
			}()
			r := wait(t, res)
			if r.err != nil || r.id != tt.id {
				t.Fatalf("HostHandshake = %q, %v; want %q, nil", r.id, r.err, tt.id)
			}
			if err := wait(t, agentErr); err != nil {
				t.Fatalf("agent side: %v", err)
			}
			if got := readN(t, host, 4); got != "NEXT" {
				t.Errorf("after the handshake the host reads %q, want %q (the handshake read past the ready line)", got, "NEXT")
			}
		})
	}
}

func TestHandshakeReadyInsideNoise(t *testing.T) {
	// The guest's console may share the line with the ready announcement.
	host, guest := connPair(t)
	res := hostHandshake(context.Background(), host, 0)
	if _, err := io.WriteString(guest, "[  2.0] agent: LAB-LINK-READY feed42  \n"); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, res); r.err != nil || r.id != "feed42" {
		t.Errorf("HostHandshake = %q, %v; want feed42", r.id, r.err)
	}
	if got, want := readN(t, guest, len(goPrefix+"feed42\n")), goPrefix+"feed42\n"; got != want {
		t.Errorf("host answered %q, want %q", got, want)
	}
}

func TestAwaitGo(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		id      string
		wantErr error  // nil = success
		rest    string // what is left unread on success
	}{
		{"go-ahead", goPrefix + "abc\nYAMUX", "abc", nil, "YAMUX"},
		// The reset line means a host is there that missed the ready line:
		// the agent says it again (serveConn) instead of waiting it out.
		{"reset before", junk + goPrefix + "abc\nYAMUX", "abc", ErrReset, ""},
		{"older session's go-ahead", goPrefix + "old\n" + goPrefix + "abc\n", "abc", nil, ""},
		{"longer id is not ours", goPrefix + "abcd\n" + goPrefix + "abc\n", "abc", nil, ""},
		{"overlong line", strings.Repeat("z", 1000) + "\n" + goPrefix + "abc\nX", "abc", nil, "X"},
		{"eof before go-ahead", goPrefix + "old\n", "abc", io.EOF, ""},
		{"nothing", "", "abc", io.EOF, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := strings.NewReader(tt.input)
			err := AwaitGo(r, tt.id)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("AwaitGo = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			rest, _ := io.ReadAll(r)
			if string(rest) != tt.rest {
				t.Errorf("AwaitGo left %q unread, want %q", rest, tt.rest)
			}
		})
	}
}

func TestHostHandshakeCancel(t *testing.T) {
	host, guest := connPair(t)
	ctx, cancel := context.WithCancel(context.Background())
	res := hostHandshake(ctx, host, 0)
	cancel()
	r := wait(t, res)
	if !errors.Is(r.err, context.Canceled) || !strings.Contains(r.err.Error(), "waiting for the guest agent") {
		t.Fatalf("HostHandshake after cancel = %q, %v; want a wrapped context.Canceled", r.id, r.err)
	}
	// The connection is usable again: the read deadline was cleared.
	res = hostHandshake(context.Background(), host, 0)
	if err := Announce(guest, "again"); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, res); r.err != nil || r.id != "again" {
		t.Errorf("second HostHandshake = %q, %v; want again, nil", r.id, r.err)
	}
}

func TestHostHandshakeReset(t *testing.T) {
	host, guest := connPair(t)
	res := hostHandshake(context.Background(), host, 10*time.Millisecond)
	// A stale guest session sees the junk line; its first byte is not a
	// valid yamux version.
	got := readN(t, guest, len(junk))
	if got != junk {
		t.Fatalf("host wrote %q, want the reset line %q", got, junk)
	}
	if got[0] == 0 {
		t.Errorf("reset line starts with byte 0, which yamux would take for its version")
	}
	// The reopened guest announces; AwaitGo skips any further junk lines.
	if err := Announce(guest, "fresh"); err != nil {
		t.Fatal(err)
	}
	_ = guest.SetReadDeadline(time.Now().Add(5 * time.Second))
	if err := AwaitGo(guest, "fresh"); err != nil {
		t.Fatalf("AwaitGo after resets = %v", err)
	}
	if r := wait(t, res); r.err != nil || r.id != "fresh" {
		t.Errorf("HostHandshake = %q, %v; want fresh, nil", r.id, r.err)
	}
}

func TestHostHandshakeNoReset(t *testing.T) {
	host, guest := connPair(t)
	ctx, cancel := context.WithCancel(context.Background())
	res := hostHandshake(ctx, host, 0)
	// With resetAfter 0 the host never writes.
	_ = guest.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	b := make([]byte, 1)
	if n, err := guest.Read(b); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("guest read %d bytes (%q), %v; want nothing", n, b[:n], err)
	}
	cancel()
	wait(t, res)
}

func TestHostHandshakeGuestGone(t *testing.T) {
	host, guest := connPair(t)
	res := hostHandshake(context.Background(), host, 0)
	io.WriteString(guest, "half a line")
	guest.Close()
	r := wait(t, res)
	if r.err == nil || !strings.Contains(r.err.Error(), "reading the guest's ready line") {
		t.Errorf("HostHandshake with the guest gone = %q, %v; want a read error", r.id, r.err)
	}
}

// TestHandshakeThenYamux runs the real sequence over net.Pipe: handshake,
// then a yamux session on the same connection.
func TestHandshakeThenYamux(t *testing.T) {
	host, guest := net.Pipe()
	defer host.Close()
	defer guest.Close()
	res := hostHandshake(context.Background(), host, 0)
	agent := make(chan error, 1)
	go func() {
		if err := Announce(guest, "pipe1"); err != nil {
			agent <- err
			return
		}
		if err := AwaitGo(guest, "pipe1"); err != nil {
			agent <- err
			return
		}
		sess, err := yamux.Server(guest, Config())
		if err != nil {
			agent <- err
			return
		}
		defer sess.Close()
		st, err := sess.Accept()
		if err != nil {
			agent <- err
			return
		}
		defer st.Close()
		var req Request
		if err := ReadMsg(st, &req); err != nil {
			agent <- err
			return
		}
		agent <- WriteMsg(st, &Response{Info: &Info{Session: "pipe1", Uname: req.Op}})
	}()
	if r := wait(t, res); r.err != nil || r.id != "pipe1" {
		t.Fatalf("HostHandshake = %q, %v", r.id, r.err)
	}
	sess, err := yamux.Client(host, Config())
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	c := NewClient(func(context.Context) (net.Conn, error) { return sess.Open() })
	info, err := c.Info(context.Background())
	if err != nil || info.Session != "pipe1" || info.Uname != OpInfo {
		t.Errorf("Info = %+v, %v; want session pipe1", info, err)
	}
	if err := wait(t, agent); err != nil {
		t.Errorf("agent: %v", err)
	}
}

func TestConfig(t *testing.T) {
	c := Config()
	if err := yamux.VerifyConfig(c); err != nil {
		t.Fatalf("VerifyConfig(Config()) = %v", err)
	}
	if c.EnableKeepAlive {
		t.Errorf("keepalive is on; a paused guest would kill the session")
	}
}

func TestMsgRoundTrip(t *testing.T) {
	tests := []any{
		&Request{Op: OpExec, Exec: &ExecRequest{Argv: []string{"sh", "-c", "echo hi"}, Env: []string{"A=1"}, Stdin: true, KillGroup: true}},
		&Request{Op: OpPut, Put: &PutRequest{Path: "/root/p", Mode: 0o755, Size: 12, SHA256: strings.Repeat("ab", 32)}},
		&Request{Op: OpSetTime, UnixNano: 1700000000123456789},
		&Request{Op: OpEntropy, Entropy: []byte{0, 1, 2, 255}},
		&Response{Error: "boom"},
		&Response{Have: true, Mode: 0o644},
		&Response{Info: &Info{Uname: "Linux x 6.1 i686", OnlineCPUs: 1, StackKB: -1, Uptime: 1.5}},
	}
	for _, in := range tests {
		var buf bytes.Buffer
		if err := WriteMsg(&buf, in); err != nil {
			t.Fatal(err)
		}
		buf.WriteString("payload")
		var out any
		switch in.(type) {
		case *Request:
			out = &Request{}
		case *Response:
			out = &Response{}
		}
		if err := ReadMsg(&buf, out); err != nil {
			t.Fatalf("ReadMsg(%+v) = %v", in, err)
		}
		if !jsonEqual(t, in, out) {
			t.Errorf("ReadMsg(WriteMsg(%+v)) = %+v", in, out)
		}
		if got := buf.String(); got != "payload" {
			t.Errorf("ReadMsg left %q, want the payload untouched", got)
		}
	}
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	var x, y bytes.Buffer
	if err := WriteMsg(&x, a); err != nil {
		t.Fatal(err)
	}
	if err := WriteMsg(&y, b); err != nil {
		t.Fatal(err)
	}
	return x.String() == y.String()
}

func TestReadMsgBad(t *testing.T) {
	huge := make([]byte, 4)
	binary.BigEndian.PutUint32(huge, maxHeader+1)
	short := make([]byte, 4)
	binary.BigEndian.PutUint32(short, 10)
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"oversize header", append(huge, "{}"...), "too large"},
		{"4 GiB header", []byte{0xff, 0xff, 0xff, 0xff}, "too large"},
		{"truncated body", append(short, `{"op":`...), io.ErrUnexpectedEOF.Error()},
		{"truncated length", []byte{0, 0}, io.ErrUnexpectedEOF.Error()},
		{"empty", nil, io.EOF.Error()},
		{"not json", append([]byte{0, 0, 0, 3}, "abc"...), "invalid character"},
	}
	for _, tt := range tests {
		var req Request
		err := ReadMsg(bytes.NewReader(tt.input), &req)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadMsg(%s) = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestFrames(t *testing.T) {
	frames := []struct {
		typ     byte
		payload []byte
	}{
		{FrameStarted, []byte(`{"pid":7}`)},
		{FrameStdout, []byte("hello\n")},
		{FrameStdin, nil}, // EOF
		{FrameSignal, []byte{15}},
		{FrameStderr, bytes.Repeat([]byte{0xaa}, maxFrame)},
		{FrameExit, []byte(`{"code":0}`)},
	}
	var buf bytes.Buffer
	fw := NewFrameWriter(&buf)
	for _, f := range frames {
		if err := fw.Write(f.typ, f.payload); err != nil {
			t.Fatalf("Write(%d, %d bytes) = %v", f.typ, len(f.payload), err)
		}
	}
	for _, f := range frames {
		typ, payload, err := ReadFrame(&buf)
		if err != nil || typ != f.typ || !bytes.Equal(payload, f.payload) {
			t.Fatalf("ReadFrame = %d, %d bytes, %v; want %d, %d bytes", typ, len(payload), err, f.typ, len(f.payload))
		}
	}
	if _, _, err := ReadFrame(&buf); err != io.EOF {
		t.Errorf("ReadFrame at the end = %v, want io.EOF", err)
	}
}

func TestFramesBad(t *testing.T) {
	var buf bytes.Buffer
	if err := NewFrameWriter(&buf).Write(FrameStdout, make([]byte, maxFrame+1)); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("Write(oversize) = %v, want a 'too large' error", err)
	}
	if buf.Len() != 0 {
		t.Errorf("Write(oversize) wrote %d bytes, want none", buf.Len())
	}
	hdr := []byte{FrameStdout, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(hdr[1:], maxFrame+1)
	if _, _, err := ReadFrame(bytes.NewReader(hdr)); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("ReadFrame(oversize header) = %v, want a 'too large' error", err)
	}
	if _, _, err := ReadFrame(bytes.NewReader([]byte{FrameStdout, 0, 0, 0, 5, 'a'})); err != io.ErrUnexpectedEOF {
		t.Errorf("ReadFrame(truncated) = %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestFrameWriterJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := NewFrameWriter(&buf).WriteJSON(FrameExit, Exit{Code: 130, Signal: 2}); err != nil {
		t.Fatal(err)
	}
	typ, payload, err := ReadFrame(&buf)
	if err != nil || typ != FrameExit || string(payload) != `{"code":130,"signal":2}` {
		t.Errorf("ReadFrame = %d, %s, %v; want an exit frame", typ, payload, err)
	}
}

func TestChunkWriter(t *testing.T) {
	tests := []struct {
		size      int
		wantSizes []int
	}{
		{0, nil},
		{1, []int{1}},
		{32 << 10, []int{32 << 10}},
		{32<<10 + 1, []int{32 << 10, 1}},
		{100 << 10, []int{32 << 10, 32 << 10, 32 << 10, 4 << 10}},
	}
	for _, tt := range tests {
		data := make([]byte, tt.size)
		for i := range data {
			data[i] = byte(i * 7)
		}
		var buf bytes.Buffer
		n, err := ChunkWriter{F: NewFrameWriter(&buf), Typ: FrameStderr}.Write(data)
		if err != nil || n != tt.size {
			t.Fatalf("Write(%d bytes) = %d, %v", tt.size, n, err)
		}
		var sizes []int
		var got []byte
		for buf.Len() > 0 {
			typ, payload, err := ReadFrame(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if typ != FrameStderr {
				t.Errorf("frame type %d, want %d", typ, FrameStderr)
			}
			sizes = append(sizes, len(payload))
			got = append(got, payload...)
		}
		if !equalInts(sizes, tt.wantSizes) {
			t.Errorf("Write(%d bytes) made frames of %v, want %v", tt.size, sizes, tt.wantSizes)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("Write(%d bytes): frames carry different bytes", tt.size)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// failWriter fails after limit bytes.
type failWriter struct{ limit int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.limit {
		return 0, errors.New("link down")
	}
	w.limit -= len(p)
	return len(p), nil
}

func TestChunkWriterError(t *testing.T) {
	// Room for the first frame (header + 32 KiB) only.
	w := ChunkWriter{F: NewFrameWriter(&failWriter{limit: 5 + 32<<10}), Typ: FrameStdout}
	n, err := w.Write(make([]byte, 40<<10))
	if err == nil || n != 32<<10 {
		t.Errorf("Write = %d, %v; want %d and an error", n, err, 32<<10)
	}
}

// TestFrameWriterConcurrent: frames written from several goroutines (stdout
// and stderr copiers) never interleave.
func TestFrameWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	fw := NewFrameWriter(&buf)
	var wg sync.WaitGroup
	const writers, each = 8, 50
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			payload := bytes.Repeat([]byte{byte('a' + w)}, 1000+w)
			for range each {
				_ = fw.Write(byte(w+1), payload)
			}
		}()
	}
	wg.Wait()
	count := 0
	for buf.Len() > 0 {
		typ, payload, err := ReadFrame(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w := int(typ) - 1
		if len(payload) != 1000+w || bytes.Count(payload, []byte{byte('a' + w)}) != len(payload) {
			t.Fatalf("frame %d of type %d is mangled", count, typ)
		}
		count++
	}
	if count != writers*each {
		t.Errorf("read %d frames, want %d", count, writers*each)
	}
}

// TestSkipRepeats: repeats of the session's ready line before the guest's
// first yamux bytes are dropped, whatever the reads' sizes; anything else
// (another id's line, yamux's version byte 0) passes untouched, and so do
// ready lines after the first other byte.
func TestSkipRepeats(t *testing.T) {
	ready := readyPrefix + "abc\n"
	tests := []struct{ name, in, want string }{
		{"no repeat", "\x00\x01yamux", "\x00\x01yamux"},
		{"one repeat", ready + "\x00yamux", "\x00yamux"},
		{"two repeats", ready + ready + "\x00yamux", "\x00yamux"},
		{"another id", readyPrefix + "abd\n\x00", readyPrefix + "abd\n\x00"},
		{"a prefix only, then EOF", readyPrefix + "ab", readyPrefix + "ab"},
		{"after yamux bytes", "\x00" + ready, "\x00" + ready},
	}
	for _, tt := range tests {
		for _, size := range []int{1, 3, 4096} {
			t.Run(fmt.Sprintf("%s/read %d", tt.name, size), func(t *testing.T) {
				a, b := net.Pipe()
				go func() { _, _ = io.WriteString(b, tt.in); b.Close() }()
				c := SkipRepeats(a, "abc")
				var got []byte
				buf := make([]byte, size)
				for {
					n, err := c.Read(buf)
					got = append(got, buf[:n]...)
					if err != nil {
						break
					}
				}
				if string(got) != tt.want {
					t.Errorf("read %q, want %q", got, tt.want)
				}
			})
		}
	}
}
