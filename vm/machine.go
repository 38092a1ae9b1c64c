package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"lab/images"
	"lab/vm/link"
)

// Config is everything the supervisor needs to run one machine. `lab up`
// resolves it and writes it to the state directory; it is plain data.
type Config struct {
	Name        string         `json:"name"`
	Profile     images.Profile `json:"profile"`
	Argv        []string       `json:"qemu_argv"`
	QEMUVersion string         `json:"qemu_version"`
	Accel       string         `json:"accelerator"`
	Clock       Clock          `json:"clock"`
	KernelID    string         `json:"kernel_id"`
	// Link is the device the host-guest link runs over (images.LinkPort,
	// LinkHVC, LinkUART).
	Link string `json:"link,omitempty"`
	// KernelSHA256 is the image booted, entered as KernelEntry says
	// (images.EntryBzImage or images.EntryPVH).
	KernelSHA256  string `json:"kernel_sha256"`
	KernelEntry   string `json:"kernel_entry,omitempty"`
	KernelPackage string `json:"kernel_package"`
	KernelRelease string `json:"kernel_release"`
	// KernelConfig and KernelNotable are a kernel lab built: the sha256 of
	// its .config and its options that matter most (images.NotableOptions).
	KernelConfig  string            `json:"kernel_config,omitempty"`
	KernelNotable map[string]string `json:"kernel_notable,omitempty"`
	Initrd        string            `json:"initrd"`
	// BootTimeout bounds QEMU start to agent ready.
	BootTimeout time.Duration `json:"boot_timeout"`
	// StallTimeout, if non-zero, ends a cold boot whose agent has printed
	// nothing by then as stalled (stall.go); Start boots it cold once
	// more.
	StallTimeout time.Duration `json:"stall_timeout,omitempty"`
	// Snapshot is the booted-state file of this configuration (see
	// snapshot.go): restored from if it exists, else saved on this boot.
	// Empty for cold boots (--cold).
	Snapshot string `json:"snapshot,omitempty"`
	// Preload is put into the guest's file cache before the snapshot is
	// saved (see preload.go); part of the snapshot's key. Only with a
	// Snapshot.
	Preload []PreloadFile `json:"preload,omitempty"`
	// Throwaway VMs live only as long as the process that asked for them
	// (UpOptions.Throwaway): the supervisor watches the owner pipe on fd 4
	// and discards the VM when it closes.
	Throwaway bool `json:"throwaway,omitempty"`
	// OwnerPID, if set, is a process the VM lives only as long as
	// (UpOptions.OwnerPID): the supervisor watches it through a pidfd.
	OwnerPID int `json:"owner_pid,omitempty"`
}

// Machine is a running QEMU process and the link to its agent. It belongs
// to the supervisor process.
type Machine struct {
	cfg     Config
	dir     string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	stderr  bytes.Buffer
	stderrW *lockedWriter

	// Client reaches the agent through the current link session; while the
	// link reconnects, its calls wait for the new session (bounded).
	Client *link.Client
	// ls is the current link session, nil while reconnecting; lsUp is
	// closed when one is up. linkGen counts sessions. See reconnect.go.
	lsMu    sync.Mutex
	ls      *linkSession
	lsUp    chan struct{}
	linkGen int
	// life ends when the machine is killed: no more reconnects.
	life     context.Context
	lifeEnd  context.CancelFunc
	shutting atomic.Bool

	// qmp is the machine's QMP connection (see qmp.go).
	qmpMu sync.Mutex
	qmp   *qmpMonitor

	// nic is the NIC hot-plugged for a peer network, if any (nic.go).
	nicMu sync.Mutex
	nic   *NICState

	logf func(format string, args ...any)

	// Info is what the agent reported when the machine became ready.
	Info *link.Info
	// Started is when QEMU was started; Ready when the agent answered.
	Started, Ready time.Time
	// Boot says how the machine came up: "cold", "cold, snapshot saved"
	// or "restored from snapshot".
	Boot string
	// Notes are what the user should hear of the boot (a snapshot found
	// bad and discarded); `lab up` prints them.
	Notes []string
	// restore is set when this QEMU restores cfg.Snapshot.
	restore bool
	// preloaded is set once a preload session was opened: the agent may
	// sit in a session nobody serves, which the next handshake breaks.
	preloaded bool
	// Phases records when each boot phase ended, for the supervisor log.
	Phases []Phase
}

// Phase is one step of a boot and when it ended (since QEMU started).
type Phase struct {
	Name  string
	Since time.Duration
}

func (m *Machine) phase(name string) {
	m.Phases = append(m.Phases, Phase{name, time.Since(m.Started)})
}

// BootError is a boot that failed, with the console lines that say why.
type BootError struct {
	Name    string
	Reason  string
	Console string // last console lines
	// Stalled is a cold boot that never reached /init (stall.go); VCPUs
	// says what its vCPUs were doing.
	Stalled bool
	VCPUs   string
}

func (e *BootError) Error() string {
	msg := fmt.Sprintf("machine %s failed to boot: %s", e.Name, e.Reason)
	if e.VCPUs != "" {
		msg += "; " + e.VCPUs
	}
	if e.Console != "" {
		msg += "\nlast console lines:\n" + e.Console
	}
	return msg
}

// StartOptions are the caller's hooks into Start.
type StartOptions struct {
	// OnStarted, if set, learns QEMU's pid as soon as it runs.
	OnStarted func(pid int)
	// Log, if set, receives what the machine has to say while it runs (a
	// snapshot that could not be restored or saved, a link that dropped
	// and came back): the vm package never prints. The supervisor passes
	// its logger.
	Log func(format string, args ...any)
}

// Start starts QEMU and waits until the agent answers over the link. QEMU
// dies with the calling process (PR_SET_PDEATHSIG). If the boot fails, QEMU
// is killed before Start returns.
func Start(ctx context.Context, dir string, cfg Config, opt StartOptions) (*Machine, error) {
	if opt.Log == nil {
		opt.Log = func(string, ...any) {}
	}
	var note string
	if cfg.Snapshot != "" {
		if _, err := os.Stat(cfg.Snapshot); err == nil {
			// What needs no read of the snapshot is checked before QEMU
			// starts; its content as QEMU loads it (restoreSnapshot).
			_, err := precheckSnapshot(cfg.Snapshot)
			if err == nil || !checkSnapshots {
				var m *Machine
				m, err = start(ctx, dir, cfg, true, opt)
				var re *restoreError
				if !errors.As(err, &re) {
					return m, err
				}
			} else {
				err = badSnapshot(cfg.Snapshot, err)
			}
			// An unusable snapshot (changed since it was saved, QEMU
			// changed under it...): boot cold and save a new one.
			opt.Log("machine %s: %v; booting cold", cfg.Name, err)
			note = fmt.Sprintf("%v; booted cold", err)
			discardSnapshot(cfg.Snapshot)
			os.Remove(filepath.Join(dir, ConsoleLog))
		}
	}
	m, err := start(ctx, dir, cfg, false, opt)
	var be *BootError
	if errors.As(err, &be) && be.Stalled && ctx.Err() == nil {
		// Nothing was measured yet: keep the stalled boot's console and
		// boot cold once more.
		opt.Log("machine %s: %v; booting cold again", cfg.Name, err)
		kept := filepath.Join(dir, StalledConsoleLog)
		_ = os.Rename(filepath.Join(dir, ConsoleLog), kept)
		m, err = start(ctx, dir, cfg, false, opt)
		if err != nil && errors.As(err, &be) {
			be.Reason = "booted cold twice, both stalled; the second: " + be.Reason
		}
		if m != nil {
			m.Notes = append(m.Notes, fmt.Sprintf("the first cold boot stalled before /init (%s; %s) and was booted again; its console is kept in %s",
				strings.TrimPrefix(be.Reason, "the kernel "), be.VCPUs, kept))
		}
	}
	if m != nil && note != "" {
		m.Notes = append(m.Notes, note)
	}
	return m, err
}

func start(ctx context.Context, dir string, cfg Config, restore bool, opt StartOptions) (*Machine, error) {
	m := &Machine{cfg: cfg, dir: dir, exited: make(chan struct{}), restore: restore, lsUp: make(chan struct{}), logf: opt.Log}
	m.life, m.lifeEnd = context.WithCancel(context.Background())
	m.Client = link.NewClient(func(ctx context.Context) (net.Conn, error) {
		conn, _, err := m.OpenStream(ctx)
		return conn, err
	})
	if restore {
		m.cfg.Argv = append(append([]string{}, cfg.Argv...), restoreArgs()...)
		// The console of the boot that made the snapshot, then ours.
		b, _ := os.ReadFile(cfg.Snapshot + ".console")
		b = append(b, []byte(fmt.Sprintf("\nlab: restored from snapshot %s\n", filepath.Base(cfg.Snapshot)))...)
		_ = os.WriteFile(filepath.Join(dir, ConsoleLog), b, 0o600)
		m.Boot = "restored from snapshot"
	} else {
		m.Boot = "cold"
	}
	if err := m.startQEMU(); err != nil {
		m.lifeEnd()
		return nil, err
	}
	if opt.OnStarted != nil {
		opt.OnStarted(m.Pid())
	}
	if err := m.connect(ctx); err != nil {
		m.Kill()
		var be *BootError
		var re *restoreError
		if errors.As(err, &re) {
			return nil, err
		}
		if !errors.As(err, &be) && ctx.Err() == nil {
			err = &BootError{Name: cfg.Name, Reason: err.Error(), Console: m.ConsoleTail(15)}
		}
		return nil, err
	}
	return m, nil
}

// startQEMU starts QEMU from a goroutine locked to its OS thread for QEMU's
// whole life: Pdeathsig fires when the thread that started the child exits,
// not the process, so the thread must not be reused or ended.
func (m *Machine) startQEMU() error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with us
		cmd := exec.Command(m.cfg.Argv[0], m.cfg.Argv[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
		m.stderrW = &lockedWriter{w: &m.stderr}
		cmd.Stderr = m.stderrW
		cmd.Stdout = cmd.Stderr
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("starting %s: %w", m.cfg.Argv[0], err)
			return
		}
		m.cmd = cmd
		m.Started = time.Now()
		started <- nil
		m.waitErr = cmd.Wait()
		close(m.exited)
	}()
	return <-started
}

// connect waits for the link socket, does the session handshake and asks
// the agent who it is, watching the console for a panic meanwhile.
func (m *Machine) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.BootTimeout)
	defer cancel()
	fail := make(chan error, 1)
	go m.watchBoot(ctx, fail)

	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		if _, err := m.monitor(ctx); err != nil {
			if m.restore {
				err = &restoreError{err}
			}
			done <- result{nil, err}
			return
		}
		switch {
		case m.restore:
			if err := m.finishRestore(ctx); err != nil {
				done <- result{nil, err}
				return
			}
			m.phase("restored")
		case m.cfg.Snapshot != "":
			if err := m.saveSnapshot(ctx); err != nil {
				var re *resumeError
				if ctx.Err() != nil || errors.As(err, &re) {
					// A paused guest would only time the boot out.
					if ctx.Err() != nil {
						err = ctx.Err()
					}
					done <- result{nil, err}
					return
				}
				m.logf("machine %s: saving the booted snapshot: %v", m.cfg.Name, err)
			} else {
				m.Boot = "cold, snapshot saved"
				m.phase("snapshot saved")
			}
		}
		// After a preload that went wrong the agent may still sit in the
		// preload's session: break it as a reconnect does.
		var reset time.Duration
		if m.preloaded || m.cfg.ttyLink() {
			reset = handshakeReset
		}
		conn, _, err := m.handshake(ctx, reset)
		m.phase("agent announced")
		done <- result{conn, err}
	}()
	var conn net.Conn
	select {
	case err := <-fail:
		cancel()
		if r := <-done; r.conn != nil {
			r.conn.Close()
		}
		return err
	case r := <-done:
		var re *restoreError
		if errors.As(r.err, &re) {
			return r.err
		}
		if r.err != nil {
			// The link usually breaks because the guest died: give the
			// console watcher (which waits for the rest of a panic
			// message) time to say why, and look at the console anyway.
			select {
			case err := <-fail:
				return err
			case <-time.After(600 * time.Millisecond):
			}
			if marker := m.consoleMarker(); marker != "" {
				return &BootError{Name: m.cfg.Name, Reason: marker, Console: m.ConsoleTail(20)}
			}
			if ctx.Err() == context.DeadlineExceeded {
				return &BootError{Name: m.cfg.Name, Reason: fmt.Sprintf("the agent did not answer within %v", m.cfg.BootTimeout), Console: m.ConsoleTail(15)}
			}
			return r.err
		}
		conn = r.conn
	}
	// Who the agent is, asked while the session starts.
	var info *link.Info
	ls, err := m.startSession(ctx, conn, func(c *link.Client) (err error) {
		if info, err = c.Info(ctx); err != nil {
			return fmt.Errorf("machine %s: asking the agent: %w", m.cfg.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	go m.watchLink(ls)
	m.phase("agent answered")
	m.Info = info
	m.Ready = time.Now()
	return nil
}

// ttyLink says the link is a terminal (hvc0, a UART): always writable, so
// the agent's ready line may have gone before the host connected, and
// only the reset line makes it say it again at once.
func (c *Config) ttyLink() bool { return c.Link == images.LinkHVC || c.Link == images.LinkUART }

// handshake dials the link socket and does the session handshake (with
// link.HostHandshake's stale-session reset every reset, if non-zero). It
// returns the connection and the agent's session id.
func (m *Machine) handshake(ctx context.Context, reset time.Duration) (net.Conn, string, error) {
	sock := filepath.Join(m.dir, LinkSock)
	for {
		conn, err := net.Dial("unix", sock)
		if err == nil {
			id, err := link.HostHandshake(ctx, conn.(*net.UnixConn), reset)
			if err != nil {
				conn.Close()
				return nil, "", err
			}
			return link.SkipRepeats(conn, id), id, nil
		}
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-m.exited:
			return nil, "", errors.New("qemu exited")
		case <-time.After(20 * time.Millisecond): // QEMU creates the socket within ms
		}
	}
}

// panicMarkers are console lines that end a boot at once.
var panicMarkers = []string{"Kernel panic", "lab-agent: fatal", "Attempted to kill init"}

// watchBoot reports a kernel panic, an agent crash or QEMU's exit during
// boot, quoting the console.
func (m *Machine) watchBoot(ctx context.Context, fail chan<- error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.exited:
			time.Sleep(50 * time.Millisecond) // let the console file settle
			reason := "qemu exited during boot"
			if m.waitErr != nil {
				reason = fmt.Sprintf("qemu exited during boot (%v)", m.waitErr)
			}
			if s := strings.TrimSpace(m.QEMUStderr()); s != "" {
				reason += ": " + s
			}
			if marker := m.consoleMarker(); marker != "" {
				reason = marker
			}
			fail <- &BootError{Name: m.cfg.Name, Reason: reason, Console: m.ConsoleTail(15)}
			return
		case <-tick.C:
			if marker := m.consoleMarker(); marker != "" {
				time.Sleep(300 * time.Millisecond) // the rest of the panic message
				fail <- &BootError{Name: m.cfg.Name, Reason: marker, Console: m.ConsoleTail(20)}
				return
			}
			if con := m.consoleText(); m.stalled(con) {
				fail <- m.stallError(ctx, con)
				return
			}
		}
	}
}

func (m *Machine) consoleText() string {
	b, _ := os.ReadFile(filepath.Join(m.dir, ConsoleLog))
	return string(b)
}

func (m *Machine) consoleMarker() string {
	for _, line := range strings.Split(m.consoleText(), "\n") {
		for _, mk := range panicMarkers {
			if strings.Contains(line, mk) {
				return strings.TrimSpace(line)
			}
		}
	}
	return ""
}

// ConsoleTail returns the last n lines of the serial console.
func (m *Machine) ConsoleTail(n int) string {
	return ConsoleTail(m.dir, n)
}

// ConsoleTail returns the last n lines of a VM's serial console log.
func ConsoleTail(dir string, n int) string {
	b, _ := os.ReadFile(filepath.Join(dir, ConsoleLog))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// QEMUStderr is what QEMU printed.
func (m *Machine) QEMUStderr() string {
	m.stderrW.mu.Lock()
	defer m.stderrW.mu.Unlock()
	return m.stderr.String()
}

// Pid is QEMU's pid.
func (m *Machine) Pid() int {
	if m.cmd == nil || m.cmd.Process == nil {
		return 0
	}
	return m.cmd.Process.Pid
}

// Exited is closed when QEMU has exited.
func (m *Machine) Exited() <-chan struct{} { return m.exited }

// monitor returns the machine's QMP connection, dialling a new one if there
// is none or the last was closed (a cancelled command closes it).
func (m *Machine) monitor(ctx context.Context) (*qmpMonitor, error) {
	m.qmpMu.Lock()
	defer m.qmpMu.Unlock()
	if m.qmp != nil {
		select {
		case <-m.qmp.Closed():
		default:
			return m.qmp, nil
		}
	}
	select {
	case <-m.exited:
		return nil, fmt.Errorf("machine %s: qemu has exited", m.cfg.Name)
	default:
	}
	q, err := dialQMP(ctx, m.cfg.Name, filepath.Join(m.dir, QMPSock), m.exited)
	if err != nil {
		return nil, err
	}
	m.qmp = q
	return q, nil
}

// RunState is QEMU's run state ("running", "paused"...) from QMP.
func (m *Machine) RunState(ctx context.Context) (string, error) {
	q, err := m.monitor(ctx)
	if err != nil {
		return "", err
	}
	return q.Status(ctx)
}

// Shutdown powers the guest off through the agent, then QMP quit, then
// SIGKILL, each after a grace period.
func (m *Machine) Shutdown(ctx context.Context, grace time.Duration) error {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := m.Client.PowerOff(pctx)
	cancel()
	// The guest is going away: its link must not be reconnected.
	m.shutting.Store(true)
	if err != nil {
		grace = time.Second // the agent did not take the request
	}
	select {
	case <-m.exited:
		return nil
	case <-time.After(grace):
	case <-ctx.Done():
	}
	if m.quit(ctx) {
		return nil
	}
	return fmt.Errorf("machine %s did not power off within %v; killed", m.cfg.Name, grace)
}

// Discard ends the machine without powering the guest off: QMP quit, then
// SIGKILL. For a guest whose state nobody keeps (a throwaway VM after its
// run), it saves the guest's shutdown.
func (m *Machine) Discard(ctx context.Context) {
	m.shutting.Store(true)
	m.quit(ctx)
}

// quit asks QEMU to quit over QMP and waits up to 3 s for it to exit,
// then kills it. It reports whether QEMU quit by itself.
func (m *Machine) quit(ctx context.Context) bool {
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	if q, err := m.monitor(qctx); err == nil {
		_ = q.Quit(qctx)
	}
	cancel()
	select {
	case <-m.exited:
		return true
	case <-time.After(3 * time.Second):
	}
	m.Kill()
	return false
}

// Kill kills QEMU and waits for it.
func (m *Machine) Kill() {
	m.lifeEnd()
	m.lsMu.Lock()
	if m.ls != nil {
		m.ls.sess.Close()
	}
	m.lsMu.Unlock()
	m.qmpMu.Lock()
	if m.qmp != nil {
		m.qmp.Close()
	}
	m.qmpMu.Unlock()
	if m.cmd != nil && m.cmd.Process != nil {
		_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		<-m.exited
	}
}

// lockedWriter serialises writes to a buffer read by other goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w.Len() > 64<<10 {
		return len(p), nil
	}
	return l.w.Write(p)
}
