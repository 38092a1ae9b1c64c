package main

// Tests of the agent's guarantees (issue 6): transfers read to EOF and say
// when they are complete, signals get through whatever stdin does, a
// program whose host goes away is killed with its whole group, stdin has no
// data race, and output is drained to EOF.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lab/vm/link"
)

// TestGetReadsToEOF: files whose stat size is not their length (procfs:
// 0, sysfs: 4096) and pipes come across whole.
func TestGetReadsToEOF(t *testing.T) {
	l := connect(t, newTestAgent(t))
	for _, path := range []string{"/proc/self/cmdline", "/proc/self/limits", "/sys/devices/system/cpu/online", "/proc/version"} {
		t.Run(path, func(t *testing.T) {
			want, err := os.ReadFile(path)
			if err != nil {
				t.Skipf("this host has no %s: %v", path, err)
			}
			var got bytes.Buffer
			if _, err := l.c.Get(ctxT(t), path, &got); err != nil {
				t.Fatalf("Get(%s) = %v", path, err)
			}
			if got.Len() == 0 || !bytes.Equal(got.Bytes(), want) {
				t.Errorf("Get(%s) = %q (%d bytes), want %q (%d bytes)", path, got.String(), got.Len(), want, len(want))
			}
		})
	}
	t.Run("/proc/cpuinfo", func(t *testing.T) {
		var got bytes.Buffer
		if _, err := l.c.Get(ctxT(t), "/proc/cpuinfo", &got); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got.String(), "processor") {
			t.Errorf("Get(/proc/cpuinfo) = %q, want the CPUs", got.String())
		}
	})
	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "fifo")
		if err := unix.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		want := bytes.Repeat([]byte("0123456789abcdef"), 50000) // 800 KB, many pipe buffers
		wrote := make(chan error, 1)
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				wrote <- err
				return
			}
			defer f.Close()
			for b := want; len(b) > 0; b = b[min(len(b), 1000):] {
				if _, err := f.Write(b[:min(len(b), 1000)]); err != nil {
					wrote <- err
					return
				}
			}
			wrote <- nil
		}()
		var got bytes.Buffer
		_, err := l.c.Get(ctxT(t), fifo, &got)
		if werr := <-wrote; werr != nil {
			t.Errorf("writing the FIFO: %v", werr)
		}
		if err != nil {
			t.Fatalf("Get(fifo) = %v", err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("Get(fifo) = %d bytes, want %d", got.Len(), len(want))
		}
	})
}

// notifyWriter closes first on its first write.
type notifyWriter struct {
	first chan struct{}
	n     atomic.Int64
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	if w.n.Add(int64(len(p))) == int64(len(p)) {
		close(w.first)
	}
	return len(p), nil
}

// TestGetCutOffIsAnError: a transfer the link drops in the middle is an
// error, never a short success.
func TestGetCutOffIsAnError(t *testing.T) {
	l := connect(t, newTestAgent(t))
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = f.Write(make([]byte, 100<<10))
		<-l.served // the writer keeps the FIFO open: no EOF before the cut
	}()
	w := &notifyWriter{first: make(chan struct{})}
	got := make(chan error, 1)
	go func() {
		_, err := l.c.Get(ctxT(t), fifo, w)
		got <- err
	}()
	select {
	case <-w.first:
	case err := <-got:
		t.Fatalf("Get(fifo) = %v before any byte came", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no byte of the FIFO came in 10 s")
	}
	l.cut(t)
	select {
	case err := <-got:
		if err == nil {
			t.Errorf("Get cut off after %d bytes returned no error", w.n.Load())
		}
		t.Logf("Get cut off after %d bytes: %v", w.n.Load(), err)
	case <-time.After(10 * time.Second):
		t.Fatal("Get still running 10 s after the link was cut")
	}
	<-writerDone
}

// shortReader yields n bytes, then fails.
type shortReader struct{ n int }

func (r *shortReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errors.New("source went away")
	}
	k := min(len(p), r.n)
	r.n -= k
	return k, nil
}

// TestPutShortInstallsNothing: an upload that ends before its size leaves
// no file at the destination and no blob under its hash.
func TestPutShortInstallsNothing(t *testing.T) {
	a := newTestAgent(t)
	l := connect(t, a)
	dst := filepath.Join(t.TempDir(), "x")
	_, err := l.c.Put(ctxT(t), &shortReader{n: 100 << 10}, &link.PutRequest{Path: dst, Mode: 0o644, Size: 1 << 20, SHA256: strings.Repeat("ab", 32)})
	if err == nil {
		t.Fatal("Put of 100 KiB of a 1 MiB file succeeded")
	}
	// The agent notices the stream end after Put returns: ask it something
	// to be sure it is done with the put before looking.
	if _, err := l.c.Info(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, errDst := os.Stat(dst)
		_, errBlob := os.Stat(filepath.Join(a.blobDir, strings.Repeat("ab", 32)))
		ents, _ := os.ReadDir(a.blobDir)
		if errors.Is(errDst, os.ErrNotExist) && errors.Is(errBlob, os.ErrNotExist) && len(ents) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a short put: %s: %v; blob: %v; blob dir holds %d entries", dst, errDst, errBlob, len(ents))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// endless is stdin that never ends.
type endless struct{ n atomic.Int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'y'
	}
	e.n.Add(int64(len(p)))
	return len(p), nil
}

// flood starts a program that never reads its stdin and feeds it stdin
// without end (`yes | lab exec -- sleep 40`), returning once stdin has
// backed up past the program's pipe.
func flood(t *testing.T, l *testLink, req *link.ExecRequest) (*link.Process, *endless) {
	t.Helper()
	req.Stdin = true
	p := start(t, l, req, link.StartOptions{})
	in := &endless{}
	go func() {
		w := p.Stdin()
		_, _ = io.Copy(w, in)
		w.Close()
	}()
	deadline := time.Now().Add(10 * time.Second)
	for in.n.Load() < 200<<10 { // more than the 64 KiB pipe holds
		if time.Now().After(deadline) {
			t.Fatalf("only %d bytes of stdin went in 10 s", in.n.Load())
		}
		time.Sleep(time.Millisecond)
	}
	return p, in
}

// TestSignalWithFloodedStdin: a signal reaches a program that does not
// read the stdin it is flooded with.
func TestSignalWithFloodedStdin(t *testing.T) {
	l := connect(t, newTestAgent(t))
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		p, in := flood(t, l, &link.ExecRequest{Argv: []string{"sleep", "40"}})
		sent := time.Now()
		go func() { _ = p.Signal(int(sig)) }() // it must not block, but if it does the wait below says so
		ex, err := waitExit(t, p, 2*time.Second)
		if err != nil || ex.Signal != int(sig) {
			t.Errorf("%v: exit = %+v, %v; want killed by it", sig, ex, err)
		}
		t.Logf("%v: exited %v after the signal, %d bytes of stdin sent", sig, time.Since(sent).Round(time.Millisecond), in.n.Load())
		waitGroupGone(t, p.Pid, 2*time.Second)
	}
}

// TestHostGoneKillsGroup: whatever way the host end of a program goes, the
// agent kills the program's whole process group.
func TestHostGoneKillsGroup(t *testing.T) {
	group := []string{"sh", "-c", "sleep 40 & sleep 40; wait"}
	tests := []struct {
		name  string
		req   link.ExecRequest
		flood bool
		gone  func(t *testing.T, l *testLink)
	}{
		{"stream closed", link.ExecRequest{Argv: group}, false, func(t *testing.T, l *testLink) { l.lastStream().Close() }},
		{"session dropped", link.ExecRequest{Argv: group}, false, func(t *testing.T, l *testLink) { l.cut(t) }},
		{"stream closed, stdin flooded", link.ExecRequest{Argv: group}, true, func(t *testing.T, l *testLink) { l.lastStream().Close() }},
		{"session dropped, stdin flooded", link.ExecRequest{Argv: group}, true, func(t *testing.T, l *testLink) { l.cut(t) }},
		{"plugin, stream closed", link.ExecRequest{Argv: group, KillGroup: true}, false, func(t *testing.T, l *testLink) { l.lastStream().Close() }},
		{"plugin, session dropped, stdin flooded", link.ExecRequest{Argv: group, KillGroup: true}, true, func(t *testing.T, l *testLink) { l.cut(t) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := connect(t, newTestAgent(t))
			var p *link.Process
			if tt.flood {
				p, _ = flood(t, l, &tt.req)
			} else {
				p = start(t, l, &tt.req, link.StartOptions{})
			}
			waitGroupSize(t, p.Pid, 3) // sh and both sleeps
			tt.gone(t, l)
			waitGroupGone(t, p.Pid, 2*time.Second)
		})
	}
}

// waitGroupSize waits until process group pgid has n processes.
func waitGroupSize(t *testing.T, pgid, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(groupProcs(pgid)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d has %v, want %d processes", pgid, groupProcs(pgid), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStdin: stdin is forwarded and its EOF closes the program's stdin (run
// with -race: the frame reader and the exit path share the pipe).
func TestStdin(t *testing.T) {
	l := connect(t, newTestAgent(t))
	for _, input := range []string{"", "hello\n", strings.Repeat("0123456789", 100000)} {
		var stdout syncBuffer
		p := start(t, l, &link.ExecRequest{Argv: []string{"cat"}, Stdin: true}, link.StartOptions{Stdout: &stdout})
		in := p.Stdin()
		if _, err := io.WriteString(in, input); err != nil {
			t.Fatal(err)
		}
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
		if ex, err := waitExit(t, p, 10*time.Second); err != nil || ex.Code != 0 {
			t.Fatalf("exit = %+v, %v", ex, err)
		}
		if got := stdout.String(); got != input {
			t.Errorf("cat echoed %d bytes, want %d", len(got), len(input))
		}
	}
}

// TestStdinProgramStopsReading: a program that closes its stdin and runs
// on gets its exit through, and the host's stdin writer, stalled since,
// then returns instead of waiting for credit for ever.
func TestStdinProgramStopsReading(t *testing.T) {
	l := connect(t, newTestAgent(t))
	p := start(t, l, &link.ExecRequest{Argv: []string{"sh", "-c", "exec 0<&-; sleep 0.3; exit 7"}, Stdin: true}, link.StartOptions{})
	in := &endless{}
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(p.Stdin(), in)
		copied <- err
	}()
	if ex, err := waitExit(t, p, 5*time.Second); err != nil || ex.Code != 7 {
		t.Errorf("exit = %+v, %v; want code 7", ex, err)
	}
	select {
	case err := <-copied:
		t.Logf("stdin writer ended after %d bytes: %v", in.n.Load(), err)
		if err == nil {
			t.Error("stdin writer ended without an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stdin writer still blocked 5 s after the program exited")
	}
}

// lateHost is a host busy elsewhere when the program exits: its first
// write waits until the program (process pid, sent on the channel once
// known) has exited and been reaped, and then half a second more.
type lateHost struct {
	syncBuffer
	pid  chan int
	once sync.Once
}

func newLateHost() *lateHost { return &lateHost{pid: make(chan int, 1)} }

func (w *lateHost) Write(p []byte) (int, error) {
	w.once.Do(func() {
		pid := <-w.pid
		for {
			if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond) // the host is busy, not waiting for anything
	})
	return w.syncBuffer.Write(p)
}

// The output of the programs below: a little more than a yamux stream
// window (8 MiB, link.Config), and less than that plus a pipe (64 KiB), so
// the program writes it all and exits while the last of it waits for the
// host to read.
const lateOutput = 8<<20 + 32<<10

// TestOutputDrainedToEOF: output still on its way when the program exits
// all reaches the host before the exit, however slowly the host reads.
func TestOutputDrainedToEOF(t *testing.T) {
	l := connect(t, newTestAgent(t))
	for _, killGroup := range []bool{false, true} {
		stdout := newLateHost()
		p := start(t, l, &link.ExecRequest{Argv: []string{"head", "-c", strconv.Itoa(lateOutput), "/dev/zero"}, KillGroup: killGroup}, link.StartOptions{Stdout: stdout})
		stdout.pid <- p.Pid
		if ex, err := waitExit(t, p, 30*time.Second); err != nil || ex.Code != 0 {
			t.Fatalf("exit = %+v, %v", ex, err)
		}
		if got := len(stdout.String()); got != lateOutput {
			t.Errorf("KillGroup %v: host got %d bytes of output, want %d", killGroup, got, lateOutput)
		}
	}
}

// TestExitWithBackgroundHolder: a background child that keeps the output
// pipes open does not hold the exit, and the program's own output is not
// lost. With KillGroup the child dies with the program; without, it lives
// on (lab exec -- sh -c 'daemon &' starts a daemon).
func TestExitWithBackgroundHolder(t *testing.T) {
	l := connect(t, newTestAgent(t))
	for _, killGroup := range []bool{false, true} {
		stdout := newLateHost()
		p := start(t, l, &link.ExecRequest{Argv: []string{"sh", "-c", "head -c " + strconv.Itoa(lateOutput) + " /dev/zero; echo end; sleep 40 & exit 5"}, KillGroup: killGroup}, link.StartOptions{Stdout: stdout})
		stdout.pid <- p.Pid
		started := time.Now()
		ex, err := waitExit(t, p, 10*time.Second)
		if err != nil || ex.Code != 5 {
			t.Fatalf("exit = %+v, %v", ex, err)
		}
		if got, want := len(stdout.String()), lateOutput+4; got != want || !strings.HasSuffix(stdout.String(), "end\n") {
			t.Errorf("KillGroup %v: host got %d bytes of output, want %d ending in end", killGroup, got, want)
		}
		t.Logf("KillGroup %v: exit after %v", killGroup, time.Since(started).Round(time.Millisecond))
		if killGroup {
			waitGroupGone(t, p.Pid, 2*time.Second)
		} else if procs := groupProcs(p.Pid); len(procs) != 1 {
			t.Errorf("without KillGroup the background sleep should live on; group %d has %v", p.Pid, procs)
		}
	}
}

var _ = context.Background
