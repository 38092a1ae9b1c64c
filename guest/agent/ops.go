package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"lab/vm/link"
)

// blobDir keeps pushed content by hash, so a second push of the same plugin
// transfers nothing.
const blobDir = "/var/lib/lab/blobs"

// exec runs one program for the host and streams its output as frames.
//
// Three goroutines serve it besides this one, so that nothing the program
// does can keep a signal from it or hide that its host has gone:
//   - the frame reader reads the stream all the time: signals are delivered
//     as they come, stdin is queued (the host sends at most
//     link.StdinWindow bytes ahead of acknowledgements, so the queue is
//     bounded), and a read error means the host end is gone (stream closed,
//     host killed, session dropped): the program's group is killed;
//   - the stdin pump alone writes the program's stdin pipe, and may block
//     there as long as the program does not read;
//   - two copies send stdout and stderr, until EOF (see drain).
func (a *agent) exec(conn net.Conn, req *link.ExecRequest) {
	fw := link.NewFrameWriter(conn)
	_ = link.WriteMsg(conn, &link.Response{})
	env := req.Env
	if env == nil {
		env = []string{"PATH=" + defaultPath, "HOME=/root", "TERM=vt100"}
	}
	argv0 := req.Argv[0]
	if !strings.Contains(argv0, "/") {
		p, err := exec.LookPath(argv0)
		if err != nil {
			_ = fw.WriteJSON(link.FrameExit, link.Exit{Code: 127, Error: fmt.Sprintf("%s: command not found in the guest (PATH=%s)", argv0, defaultPath)})
			return
		}
		argv0 = p
	}
	dir := req.Dir
	if dir == "" {
		dir = "/root"
	}
	_ = os.MkdirAll(dir, 0o755)
	var c *containment
	if req.Contain && req.KillGroup {
		var err error
		if c, err = newContainment(); err != nil {
			_ = fw.WriteJSON(link.FrameExit, link.Exit{Code: 126, Error: err.Error()})
			return
		}
		env = c.env(env)
	}

	outR, outW, err := os.Pipe()
	if err != nil {
		_ = fw.WriteJSON(link.FrameExit, link.Exit{Code: 126, Error: err.Error()})
		return
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		_ = fw.WriteJSON(link.FrameExit, link.Exit{Code: 126, Error: err.Error()})
		return
	}
	// inW is set here once and only closed later (os.File serialises Close
	// with a Write blocked in the pump).
	var inR, inW *os.File
	if req.Stdin {
		inR, inW, err = os.Pipe()
	} else {
		inR, err = os.Open(os.DevNull)
	}
	if err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		_ = fw.WriteJSON(link.FrameExit, link.Exit{Code: 126, Error: err.Error()})
		return
	}
	attr := &os.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: []*os.File{inR, outW, errW},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	}
	p, waitCh, err := a.procs.start(argv0, req.Argv, attr)
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		if inW != nil {
			inW.Close()
		}
		code, msg := 126, fmt.Sprintf("%s: %v", req.Argv[0], err)
		if os.IsNotExist(err) {
			code = 127
			msg = fmt.Sprintf("%s: not found in the guest (if the file is there, its ELF interpreter is not: guests have no libc, build programs static)", req.Argv[0])
		}
		_ = fw.WriteJSON(link.FrameExit, link.Exit{Code: code, Error: msg})
		return
	}
	pid := p.Pid
	// The group is pid's until the program is reaped; signals after that
	// could hit a new owner of the number.
	var grp group
	grp.pgid = pid
	window := 0
	if inW != nil {
		window = link.StdinWindow
	}
	_ = fw.WriteJSON(link.FrameStarted, link.Started{Pid: pid, StdinWindow: window})

	var copies sync.WaitGroup
	copies.Add(2)
	go func() { defer copies.Done(); drain(outR, link.ChunkWriter{F: fw, Typ: link.FrameStdout}) }()
	go func() { defer copies.Done(); drain(errR, link.ChunkWriter{F: fw, Typ: link.FrameStderr}) }()

	var stdin *stdinPump
	if inW != nil {
		stdin = newStdinPump(window)
		go stdin.run(inW, func(n int) {
			var b [4]byte
			binary.BigEndian.PutUint32(b[:], uint32(n))
			_ = fw.Write(link.FrameStdinAck, b[:])
		})
	}

	hostGone := make(chan struct{})
	go func() {
		defer close(hostGone)
		for {
			typ, payload, err := link.ReadFrame(conn)
			if err != nil {
				return
			}
			switch typ {
			case link.FrameStdin:
				if stdin == nil {
					continue
				}
				if len(payload) == 0 {
					stdin.closeInput()
				} else if !stdin.push(payload) {
					logf("exec %s: the host sent more than %d bytes of stdin ahead; dropping it", req.Argv[0], window)
					return
				}
			case link.FrameSignal:
				if len(payload) == 1 {
					grp.kill(unix.Signal(payload[0]))
				}
			}
		}
	}()

	var ws unix.WaitStatus
	gone := false
	select {
	case ws = <-waitCh:
	case <-hostGone:
		// Nobody is left to see the program's output or to stop it: end it
		// with everything it started.
		gone = true
		grp.kill(unix.SIGKILL)
		ws = <-waitCh
	}
	p.Release()
	if req.KillGroup {
		grp.kill(unix.SIGKILL)
	}
	grp.reaped()
	var leftovers []string
	var removed string
	if c != nil {
		leftovers, removed = c.end()
	}
	if stdin != nil {
		stdin.stop()
		inW.Close() // unblocks the pump if the program left input unread
	}

	// Output still in the pipes belongs before the exit frame. It ends at
	// EOF, once every process holding the pipes is gone. A process the
	// program left running (`sh -c 'daemon &'`) may hold them for ever: the
	// program's own output is all in the pipes once it has exited, so after
	// the program exits the copies send what the pipes hold and then stop
	// (see drain). With KillGroup the group is dead or dying: wait for the
	// EOF its death brings, a while.
	if gone {
		conn.Close() // what is left to copy fails at once
	}
	done := make(chan struct{})
	go func() { copies.Wait(); close(done) }()
	if req.KillGroup && !gone {
		select {
		case <-done:
		case <-time.After(2 * time.Second): // a process that left the group
		}
	}
	now := time.Now()
	_ = outR.SetReadDeadline(now)
	_ = errR.SetReadDeadline(now)
	<-done
	outR.Close()
	errR.Close()
	if gone {
		return
	}
	code, sig := exitCode(ws)
	_ = fw.WriteJSON(link.FrameExit, link.Exit{Code: code, Signal: sig, Leftovers: leftovers, Removed: removed})
}

// group is a program's process group, signalled until the program is
// reaped.
type group struct {
	mu   sync.Mutex
	pgid int // 0 once reaped
}

func (g *group) kill(sig unix.Signal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pgid > 0 {
		_ = unix.Kill(-g.pgid, sig)
	}
}

func (g *group) reaped() {
	g.mu.Lock()
	g.pgid = 0
	g.mu.Unlock()
}

// drain copies r to w until EOF. Once r's read deadline passes (the
// program has exited), it sends what the pipe still holds, without
// waiting for more, and stops: a background process holding the pipe open
// must not hold the program's exit.
func drain(r *os.File, w io.Writer) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return // the host is gone
			}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			return // EOF
		}
	}
	rc, err := r.SyscallConn()
	if err != nil {
		return
	}
	for {
		var n int
		var rerr error
		// Control, not Read: the deadline has passed, and a read that
		// would block must return, not wait.
		if err := rc.Control(func(fd uintptr) { n, rerr = unix.Read(int(fd), buf) }); err != nil {
			return
		}
		if n <= 0 || rerr != nil { // EOF, EAGAIN (empty), or an error
			return
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return
		}
	}
}

// stdinPump writes what the host sends to the program's stdin. The frame
// reader queues input with push and never blocks; run alone writes the
// pipe and acknowledges what the program took, so the host sends more.
type stdinPump struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   [][]byte
	queued  int // bytes in queue
	window  int // most the host may have sent ahead
	eof     bool
	stopped bool
}

func newStdinPump(window int) *stdinPump {
	s := &stdinPump{window: window}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// push queues input; false if the host overran its window.
func (s *stdinPump) push(b []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queued+len(b) > s.window {
		return false
	}
	s.queue = append(s.queue, b)
	s.queued += len(b)
	s.cond.Signal()
	return true
}

// closeInput records the host's EOF: stdin closes once the queue is written.
func (s *stdinPump) closeInput() {
	s.mu.Lock()
	s.eof = true
	s.cond.Signal()
	s.mu.Unlock()
}

// stop ends run without writing what is queued (the program has gone).
func (s *stdinPump) stop() {
	s.mu.Lock()
	s.stopped = true
	s.cond.Signal()
	s.mu.Unlock()
}

// run writes queued input to w until EOF or stop, then closes w. Once the
// program has closed its stdin (EPIPE), queued input is dropped and no
// longer acknowledged: the host stops sending, as a writer to a pipe
// nobody reads would, until the program exits.
func (s *stdinPump) run(w *os.File, ack func(n int)) {
	defer w.Close()
	broken := false
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.eof && !s.stopped {
			s.cond.Wait()
		}
		if s.stopped || len(s.queue) == 0 {
			s.mu.Unlock()
			return
		}
		b := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		if !broken {
			if _, err := w.Write(b); err != nil {
				broken = true // EPIPE: the program closed its stdin
			}
		}
		s.mu.Lock()
		s.queued -= len(b)
		stopped := s.stopped
		s.mu.Unlock()
		if stopped {
			return
		}
		if !broken {
			ack(len(b))
		}
	}
}

// put receives a file, keeping it by hash. A put whose path is the blob
// itself (blobDir/SHA256) only fills the cache: the host preloads lab's
// own plugins so before it saves a booted snapshot, and the first run
// after a restore then installs them by hard link, sending nothing.
func (a *agent) put(conn net.Conn, req *link.PutRequest) error {
	if req.Path == "" || !filepath.IsAbs(req.Path) {
		return reply(conn, fmt.Errorf("put: guest path %q must be absolute", req.Path))
	}
	if err := os.MkdirAll(a.blobDir, 0o755); err != nil {
		return reply(conn, err)
	}
	blob := ""
	if len(req.SHA256) == 64 && !strings.ContainsAny(req.SHA256, "./") {
		blob = filepath.Join(a.blobDir, req.SHA256)
	}
	cacheOnly := blob != "" && filepath.Clean(req.Path) == blob
	bundle := a.bundleOf(req.Path)
	// The cache lock is held from finding the blob to linking it, so that
	// eviction (by another put) cannot remove it in between.
	a.cacheMu.Lock()
	if blob != "" {
		if a.heldBlob(blob, req.SHA256) {
			var err error
			if !cacheOnly {
				if err = a.checkFits(req, false, false, bundle, false); err == nil {
					touch(blob)
					err = a.install(blob, req.Path, req.Mode)
				}
			} else {
				touch(blob)
			}
			a.remember(blob)
			a.cacheMu.Unlock()
			if err != nil {
				return reply(conn, err)
			}
			return link.WriteMsg(conn, &link.Response{Have: true})
		}
	}
	// A user's file too large for the cache is not kept by hash (see
	// oversized): the cache is left as it is.
	if blob != "" && !cacheOnly && bundle == "" && a.oversized(req.Size) {
		blob = ""
	}
	if err := a.checkFits(req, true, blob != "", bundle, cacheOnly); err != nil {
		a.cacheMu.Unlock()
		logf("put: %v", err)
		return reply(conn, err)
	}
	if blob != "" {
		a.makeRoom(req.Size, blob, bundle)
	}
	a.cacheMu.Unlock()
	if err := link.WriteMsg(conn, &link.Response{}); err != nil {
		return err
	}
	err := a.receive(conn, req, blob, cacheOnly)
	if req.Size >= largePut {
		a.releaseSoon()
	}
	return reply(conn, err)
}

func (a *agent) receive(conn net.Conn, req *link.PutRequest, blob string, cacheOnly bool) error {
	tmp, err := os.CreateTemp(a.blobDir, ".put-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// The host names the content by its hash; hashing it again here would
	// cost more than the transfer (SHA-256 in emulated i386 code), and the
	// link is a reliable stream, so the size is what is checked.
	if _, err := io.CopyN(tmp, conn, req.Size); err != nil {
		tmp.Close()
		return fmt.Errorf("put %s: %w", req.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if blob == "" {
		// Content not kept by hash is linked into place and forgotten:
		// with the mode it is installed with, so that the link is no
		// copy (one copy of a file too large for the cache may be all
		// the guest has room for).
		defer os.Remove(tmp.Name())
		if err := os.Chmod(tmp.Name(), os.FileMode(req.Mode&0o777)); err != nil {
			return err
		}
		return install(tmp.Name(), req.Path, req.Mode, true)
	}
	// The blob takes the mode of its first use, so installing it again with
	// that mode is a hard link, not a copy (15 MB of plugin copied by
	// emulated code costs most of a second).
	if err := os.Chmod(tmp.Name(), os.FileMode(req.Mode&0o777)); err != nil {
		return err
	}
	a.cacheMu.Lock()
	defer a.cacheMu.Unlock()
	if err := os.Rename(tmp.Name(), blob); err != nil {
		return err
	}
	touch(blob)
	defer a.remember(blob)
	if cacheOnly {
		return nil
	}
	return a.install(blob, req.Path, req.Mode)
}

// install installs blob at path (see install) and records the use of the
// bundle path lies in, if any. Only a bundle's files (the cache's own) are
// hard links to the blob; anything else gets a copy. The caller holds
// cacheMu.
func (a *agent) install(blob, path string, mode uint32) error {
	b := a.bundleOf(path)
	if err := install(blob, path, mode, b != ""); err != nil {
		return err
	}
	if b != "" {
		touch(b)
	}
	return nil
}

// install places blob's content at path atomically (temp + rename, so a
// running program is never overwritten in place: "text file busy"): a
// hard link if share and the modes agree, else a copy.
func install(blob, path string, mode uint32, share bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lab-tmp")
	os.Remove(tmp)
	if !share {
		if err := copyFile(blob, tmp); err != nil {
			return err
		}
	} else if err := os.Link(blob, tmp); err != nil {
		if err := copyFile(blob, tmp); err != nil {
			return err
		}
	} else {
		// A hard link shares mode bits with the blob: copy instead when
		// modes differ, so two paths with the same content keep their own.
		st, _ := os.Stat(blob)
		if st != nil && uint32(st.Mode().Perm()) != mode&0o777 {
			os.Remove(tmp)
			if err := copyFile(blob, tmp); err != nil {
				return err
			}
		}
	}
	if err := os.Chmod(tmp, os.FileMode(mode&0o7777)); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	// io.Copy from a file to a file is copy_file_range: the kernel
	// copies, no pass through the agent's memory.
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// get sends a file read to EOF: its stat size means nothing for procfs (0),
// sysfs (4096), pipes or files that grow. The content goes as frames and
// ends with a frame saying how many bytes were sent and whether EOF was
// reached, so the host can tell a complete transfer from a cut-off one.
func get(conn net.Conn, path string) error {
	// A device is refused before it is opened: /dev/zero or /dev/urandom
	// would stream without end, and opening some devices does things. A
	// FIFO is read to its writer's EOF.
	if st, err := os.Stat(path); err == nil {
		if what := notFile(st.Mode()); what != "" {
			return reply(conn, fmt.Errorf("%s is %s, not a regular file: it may never end; copy a regular file (in the guest, head -c SIZE %s > /root/file, then copy that)", path, what, path))
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return reply(conn, fmt.Errorf("%s: %w", path, unwrapPath(err)))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return reply(conn, err)
	}
	if st.IsDir() {
		return reply(conn, fmt.Errorf("%s is a directory; copy files one at a time", path))
	}
	if err := link.WriteMsg(conn, &link.Response{Mode: uint32(st.Mode().Perm())}); err != nil {
		return err
	}
	fw := link.NewFrameWriter(conn)
	buf := make([]byte, 32<<10)
	var sent int64
	for {
		n, rerr := f.Read(buf)
		if n > 0 {
			if err := fw.Write(link.FrameData, buf[:n]); err != nil {
				return err // the host is gone
			}
			sent += int64(n)
		}
		if rerr == io.EOF {
			return fw.WriteJSON(link.FrameEnd, link.GetEnd{Size: sent})
		}
		if rerr != nil {
			return fw.WriteJSON(link.FrameEnd, link.GetEnd{Size: sent, Error: fmt.Sprintf("reading %s: %v", path, unwrapPath(rerr))})
		}
	}
}

// notFile names what get refuses to read, or is "".
func notFile(m os.FileMode) string {
	switch {
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return ""
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// dial splices the stream to a socket in the guest.
func dial(conn net.Conn, network, addr string) {
	c, err := net.DialTimeout(network, addr, 10*time.Second)
	if err != nil {
		_ = reply(conn, fmt.Errorf("dial %s %s: %w", network, addr, err))
		return
	}
	defer c.Close()
	if err := link.WriteMsg(conn, &link.Response{}); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(c, conn); closeWrite(c); done <- struct{}{} }()
	go func() { io.Copy(conn, c); closeWrite(conn); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// addEntropy credits host randomness to the guest pool (RNDADDENTROPY):
// the guest RNG is cold for seconds after boot under emulation and
// go-plugin's key generation would block on it.
func addEntropy(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	f, err := os.OpenFile("/dev/random", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 8+len(b)+3)
	*(*int32)(unsafe.Pointer(&buf[0])) = int32(len(b) * 8) // entropy_count in bits
	*(*int32)(unsafe.Pointer(&buf[4])) = int32(len(b))     // buf_size in bytes
	copy(buf[8:], b)
	const rndAddEntropy = 0x40085203 // _IOW('R', 0x03, int[2])
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), rndAddEntropy, uintptr(unsafe.Pointer(&buf[0])))
	if errno != 0 {
		return fmt.Errorf("RNDADDENTROPY: %w", errno)
	}
	// Use it now: a guest restored from a booted snapshot starts with the
	// RNG state every restore of that snapshot shares.
	const rndReseedCRNG = 0x5207 // _IO('R', 0x07)
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), rndReseedCRNG, 0); errno != 0 && errno != unix.EINVAL {
		// EINVAL: a kernel before 4.17, which has no such ioctl; its
		// RNG mixes the credited bytes into every output anyway.
		return fmt.Errorf("RNDRESEEDCRNG: %w", errno)
	}
	return nil
}
