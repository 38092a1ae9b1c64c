package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/yamux"
	"golang.org/x/sys/unix"

	"lab/internal/rlimit"
	"lab/vm/link"
)

// findPort returns the device the link runs over: the one lab.link= on
// the kernel command line names (hvc0 on 2.6.32's single-port virtio
// console, ttyS1 for the second UART), else the virtio-serial port named
// link.PortName, falling back to the second UART for kernels without
// virtio.
func findPort() (string, error) {
	deadline := time.Now().Add(10 * time.Second)
	if dev := linkArg(cmdline()); dev != "" {
		for {
			if _, err := os.Stat(dev); err == nil {
				return dev, nil
			}
			if time.Now().After(deadline) {
				return "", fmt.Errorf("lab.link names %s, which did not appear", dev)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for {
		names, _ := filepath.Glob("/sys/class/virtio-ports/*/name")
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err == nil && strings.TrimSpace(string(b)) == link.PortName {
				dev := "/dev/" + filepath.Base(filepath.Dir(n))
				if _, err := os.Stat(dev); err == nil {
					return dev, nil
				}
			}
		}
		if time.Now().After(deadline) {
			if _, err := os.Stat("/dev/ttyS1"); err == nil {
				return "/dev/ttyS1", nil
			}
			return "", fmt.Errorf("no virtio-serial port named %s and no /dev/ttyS1", link.PortName)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serveLink serves host sessions forever, reopening the port whenever a
// session ends.
func (a *agent) serveLink() {
	dev, err := findPort()
	if err != nil {
		fatal(err)
	}
	for {
		if err := a.session(dev); err != nil {
			logf("link session ended: %v", err)
		}
		// What the session's transfers grew the heap by goes back before
		// the agent waits again (a booted snapshot is saved there).
		a.releaseNow()
	}
}

// linkArg is the device lab.link= names ("" without one).
func linkArg(args []string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "lab.link="); ok && v != "" && !strings.ContainsAny(v, "/.") {
			return "/dev/" + v
		}
	}
	return ""
}

// isTTYLink says the link's device is a terminal (a UART, the virtio
// console's hvc0) rather than a virtio-serial port: it needs raw mode,
// and it is always writable, host or not (see serveConn).
func isTTYLink(dev string) bool {
	return strings.HasPrefix(dev, "/dev/ttyS") || strings.HasPrefix(dev, "/dev/hvc")
}

// rawTTY puts a terminal link (the UART, hvc0) open on fd into raw mode.
// On every open: hvc's driver resets the terminal settings when the last
// file on it closes (TTY_DRIVER_RESET_TERMIOS), and echo or newline
// translation left on would corrupt the link's bytes.
func rawTTY(fd int) error {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return err
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
	return unix.IoctlSetTermios(fd, unix.TCSETS, t)
}

// session waits for a host on dev and serves it.
func (a *agent) session(dev string) error {
	// Open non-blocking and poll the raw fd: os.File.Fd() would switch the
	// descriptor to blocking mode, and Go's poller is needed for deadlines.
	fd, err := unix.Open(dev, unix.O_RDWR|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		time.Sleep(100 * time.Millisecond)
		return fmt.Errorf("open %s: %w", dev, err)
	}
	if isTTYLink(dev) {
		if err := rawTTY(fd); err != nil {
			unix.Close(fd)
			return fmt.Errorf("raw mode on %s: %w", dev, err)
		}
	}
	// The host saves a booted snapshot when it sees this line: the agent
	// is then in the loop below, waiting for its first host.
	logf("waiting for the host on %s at guest uptime %.2fs", dev, uptime())
	// Wait for a host: POLLOUT appears as soon as one connects (waiting for
	// POLLIN alone would add ~200 ms to every connect).
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLOUT}}
		// A short timeout: a host connecting does not always wake the
		// poll, and a guest restored from a snapshot sits exactly here.
		n, err := unix.Poll(fds, 20)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return fmt.Errorf("poll %s: %w", dev, err)
		}
		if n > 0 && fds[0].Revents&unix.POLLOUT != 0 && fds[0].Revents&unix.POLLHUP == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	f := os.NewFile(uintptr(fd), dev)
	logf("host connected at guest uptime %.2fs", uptime())
	return a.serveConn(f)
}

// portConn is the host link as the agent sees it: the virtio-serial port
// in the guest, one end of a socketpair in tests.
type portConn interface {
	io.ReadWriteCloser
	SetReadDeadline(t time.Time) error
}

// serveConn announces a fresh session on a connected port, serves its
// streams until the session ends, and closes the port. Programs started in
// the session are killed when it ends (see exec): their host is gone.
func (a *agent) serveConn(port portConn) error {
	defer port.Close()
	// Not crypto/rand: getrandom blocks while the kernel RNG is not yet
	// initialised, which costs a second after a snapshot restore. The id
	// only has to differ between sessions.
	a.mu.Lock()
	a.sessions++
	id := fmt.Sprintf("%x-%d", time.Now().UnixNano(), a.sessions)
	a.mu.Unlock()
	// A host that connected without seeing the ready line (it came
	// before the host: a terminal link is writable with no host there)
	// sends the reset line, every 100 ms until a ready line reaches it;
	// each one makes the ready line go again, with the same id (the host
	// skips the repeats that reach it after its go-ahead).
	deadline := time.Now().Add(5 * time.Second)
	for {
		logf("announcing session %s", id)
		if err := link.Announce(port, id); err != nil {
			return fmt.Errorf("announce: %w", err)
		}
		_ = port.SetReadDeadline(deadline)
		err := link.AwaitGo(port, id)
		if err == nil {
			break
		}
		if !errors.Is(err, link.ErrReset) || time.Now().After(deadline) {
			return fmt.Errorf("waiting for the host's go-ahead: %w", err)
		}
	}
	_ = port.SetReadDeadline(time.Time{})
	a.mu.Lock()
	if a.uptimeAtReady == 0 {
		a.uptimeAtReady = uptime()
	}
	a.sessionID = id
	a.mu.Unlock()
	sess, err := yamux.Server(port, link.Config())
	if err != nil {
		return err
	}
	defer sess.Close()
	for {
		st, err := sess.Accept()
		if err != nil {
			return err
		}
		go a.handle(st)
	}
}

// handle serves one stream.
func (a *agent) handle(conn net.Conn) {
	defer conn.Close()
	var req link.Request
	if err := link.ReadMsg(conn, &req); err != nil {
		return
	}
	var err error
	switch req.Op {
	case link.OpInfo:
		err = link.WriteMsg(conn, &link.Response{Info: a.info()})
	case link.OpSetTime:
		ts := unix.NsecToTimespec(req.UnixNano)
		err = reply(conn, unix.ClockSettime(unix.CLOCK_REALTIME, &ts))
	case link.OpEntropy:
		err = reply(conn, addEntropy(req.Entropy))
	case link.OpPowerOff:
		_ = link.WriteMsg(conn, &link.Response{})
		conn.Close()
		logf("powering off at the host's request")
		a.powerOff()
	case link.OpExec:
		if req.Exec == nil || len(req.Exec.Argv) == 0 {
			err = reply(conn, fmt.Errorf("exec: empty command"))
			break
		}
		a.exec(conn, req.Exec)
	case link.OpPut:
		if req.Put == nil {
			err = reply(conn, fmt.Errorf("put: no file described"))
			break
		}
		err = a.put(conn, req.Put)
	case link.OpGet:
		err = get(conn, req.Path)
	case link.OpDial:
		dial(conn, req.Network, req.Addr)
	default:
		err = reply(conn, fmt.Errorf("unknown operation %q (agent %s)", req.Op, version))
	}
	_ = err
}

// reply answers with err's text, or success.
func reply(conn net.Conn, err error) error {
	if err != nil {
		return link.WriteMsg(conn, &link.Response{Error: err.Error()})
	}
	return link.WriteMsg(conn, &link.Response{})
}

func (a *agent) info() *link.Info {
	var u unix.Utsname
	_ = unix.Uname(&u)
	str := func(b []byte) string { return strings.TrimRight(string(b), "\x00") }
	ci := cpuinfo()
	var lim unix.Rlimit
	_ = rlimit.Get(unix.RLIMIT_STACK, &lim)
	stack := int64(-1)
	if lim.Cur != unix.RLIM_INFINITY {
		stack = int64(lim.Cur / 1024)
	}
	atoi := func(s string) int { var n int; fmt.Sscan(s, &n); return n }
	a.mu.Lock()
	session, uptimeAtReady := a.sessionID, a.uptimeAtReady
	a.mu.Unlock()
	return &link.Info{
		Uname:         strings.Join([]string{str(u.Sysname[:]), str(u.Release[:]), str(u.Version[:]), str(u.Machine[:])}, " "),
		KernelRelease: str(u.Release[:]),
		Machine:       str(u.Machine[:]),
		CPUModel:      ci["model name"],
		CPUFamily:     atoi(ci["cpu family"]),
		CPUModelNum:   atoi(ci["model"]),
		CPUFlags:      ci["flags"],
		OnlineCPUs:    countCPUs("/sys/devices/system/cpu/online"),
		PresentCPUs:   countCPUs("/sys/devices/system/cpu/present"),
		MemTotalKB:    memTotalKB(),
		StackKB:       stack,
		UptimeAtInit:  a.uptimeAtInit,
		UptimeAtReady: uptimeAtReady,
		Uptime:        uptime(),
		Session:       session,
		AgentVersion:  version,
	}
}
