package main

import (
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

	outR, outW, err := os.Pipe()
	if err != nil {
		_ = fw.WriteJSON(link.FrameExit, link.Exit{Code: 126, Error: err.Error()})
		return
	}
	errR, errW, _ := os.Pipe()
	var inR, inW *os.File
	if req.Stdin {
		inR, inW, _ = os.Pipe()
	} else {
		inR, _ = os.Open(os.DevNull)
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
	_ = fw.WriteJSON(link.FrameStarted, link.Started{Pid: pid})

	var copies sync.WaitGroup
	copies.Add(2)
	go func() { defer copies.Done(); io.Copy(link.ChunkWriter{F: fw, Typ: link.FrameStdout}, outR) }()
	go func() { defer copies.Done(); io.Copy(link.ChunkWriter{F: fw, Typ: link.FrameStderr}, errR) }()

	// Host frames: stdin and signals. If the stream breaks before the
	// program exits, the host is gone: kill the program's group so no
	// orphaned plugin lingers.
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
				if inW == nil {
					continue
				}
				if len(payload) == 0 {
					inW.Close()
					inW = nil
					continue
				}
				_, _ = inW.Write(payload)
			case link.FrameSignal:
				if len(payload) == 1 {
					_ = unix.Kill(-pid, unix.Signal(payload[0]))
				}
			}
		}
	}()

	var ws unix.WaitStatus
	select {
	case ws = <-waitCh:
	case <-hostGone:
		_ = unix.Kill(-pid, unix.SIGKILL)
		ws = <-waitCh
	}
	p.Release()
	if req.KillGroup {
		_ = unix.Kill(-pid, unix.SIGKILL)
	}
	// Output still in the pipes belongs before the exit frame; a background
	// grandchild holding the pipes open must not delay the exit forever.
	drained := make(chan struct{})
	go func() { copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(200 * time.Millisecond):
	}
	outR.Close()
	errR.Close()
	if inW != nil {
		inW.Close()
	}
	code, sig := exitCode(ws)
	_ = fw.WriteJSON(link.FrameExit, link.Exit{Code: code, Signal: sig})
}

// put receives a file, keeping it by hash.
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
		if _, err := os.Stat(blob); err == nil {
			if err := install(blob, req.Path, req.Mode); err != nil {
				return reply(conn, err)
			}
			return link.WriteMsg(conn, &link.Response{Have: true})
		}
	}
	if err := link.WriteMsg(conn, &link.Response{}); err != nil {
		return err
	}
	err := receive(conn, req, a.blobDir, blob)
	return reply(conn, err)
}

func receive(conn net.Conn, req *link.PutRequest, dir, blob string) error {
	tmp, err := os.CreateTemp(dir, ".put-*")
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
		// Unnamed content is not kept by hash: install and forget.
		defer os.Remove(tmp.Name())
		return install(tmp.Name(), req.Path, req.Mode)
	}
	// The blob takes the mode of its first use, so installing it again with
	// that mode is a hard link, not a copy (15 MB of plugin copied by
	// emulated code costs most of a second).
	if err := os.Chmod(tmp.Name(), os.FileMode(req.Mode&0o777)); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), blob); err != nil {
		return err
	}
	return install(blob, req.Path, req.Mode)
}

// install places a copy of blob at path atomically (temp + rename, so a
// running program is never overwritten in place: "text file busy").
func install(blob, path string, mode uint32) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".lab-tmp")
	os.Remove(tmp)
	if err := os.Link(blob, tmp); err != nil {
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
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func get(conn net.Conn, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return reply(conn, fmt.Errorf("%s: %w", path, unwrapPath(err)))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return reply(conn, err)
	}
	if !st.Mode().IsRegular() {
		return reply(conn, fmt.Errorf("%s is not a regular file", path))
	}
	if err := link.WriteMsg(conn, &link.Response{Size: st.Size(), Mode: uint32(st.Mode().Perm())}); err != nil {
		return err
	}
	_, err = io.CopyN(conn, f, st.Size())
	return err
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
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), rndReseedCRNG, 0); errno != 0 {
		return fmt.Errorf("RNDRESEEDCRNG: %w", errno)
	}
	return nil
}
