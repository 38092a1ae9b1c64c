package vm

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/hashicorp/yamux"

	"lab/vm/link"
)

// The link's yamux session can die while the guest lives on (a write or
// protocol error, a dropped connection to QEMU's chardev). The agent then
// waits for a host again, so the machine redials the link socket, does the
// handshake (sending the reset junk that breaks a guest session that has
// not noticed yet), starts a new session, sets the guest clock and credits
// entropy again as after a boot, and serves later streams on it. Streams of
// the dead session fail; their host ends learn why from LinkState.

// Bounds of a reconnect.
const (
	// reconnectWait bounds how long a new stream waits for the link to
	// come back before failing.
	reconnectWait = 20 * time.Second
	// handshakeReset is how long a reconnect waits for the agent's ready
	// line before it sends the junk that breaks a stale guest session, and
	// again after each further interval. Measured here: the guest does not
	// notice the host hanging up its chardev (its session ends only on the
	// junk), so this interval is most of the reconnect time (~120 ms).
	handshakeReset = 100 * time.Millisecond
	// handshakeTimeout bounds one reconnect attempt.
	handshakeTimeout = 15 * time.Second
)

// linkSession is one yamux session over one connection to the link socket.
type linkSession struct {
	gen  int // 1 for the boot's session, then one more per reconnect
	conn net.Conn
	sess *yamux.Session
}

// startSession starts yamux on a handshaken conn, sets the guest clock and
// credits host randomness, and publishes the session for new streams.
// also, if not nil, is asked of the agent meanwhile, on the same session.
func (m *Machine) startSession(ctx context.Context, conn net.Conn, also func(*link.Client) error) (*linkSession, error) {
	sess, err := yamux.Client(conn, link.Config())
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("machine %s: starting the link session: %w", m.cfg.Name, err)
	}
	c := link.NewClient(func(context.Context) (net.Conn, error) { return sess.Open() })
	// The guest clock starts from the emulated RTC and drifts; AutoMTLS and
	// result timestamps need it close to ours. The guest RNG is cold for
	// seconds after boot: credit it with host randomness. The two are
	// independent round trips to a guest that may have just been
	// restored (slow under TCG): at once, each on its own stream.
	clock, asked := make(chan error, 1), make(chan error, 1)
	go func() { clock <- c.SetTime(ctx, time.Now()) }()
	go func() {
		if also == nil {
			asked <- nil
			return
		}
		asked <- also(c)
	}()
	seed := make([]byte, 512)
	_, _ = rand.Read(seed)
	eerr := c.Entropy(ctx, seed)
	aerr := <-asked
	if err := <-clock; err != nil {
		sess.Close()
		return nil, fmt.Errorf("machine %s: setting the guest clock: %w", m.cfg.Name, err)
	}
	if eerr != nil {
		sess.Close()
		return nil, fmt.Errorf("machine %s: seeding the guest RNG: %w", m.cfg.Name, eerr)
	}
	if aerr != nil {
		sess.Close()
		return nil, aerr
	}
	m.lsMu.Lock()
	defer m.lsMu.Unlock()
	if m.life.Err() != nil {
		sess.Close()
		return nil, fmt.Errorf("machine %s is stopped", m.cfg.Name)
	}
	m.linkGen++
	ls := &linkSession{gen: m.linkGen, conn: conn, sess: sess}
	m.ls = ls
	close(m.lsUp)
	return ls, nil
}

// markDropped retires ls if it is still the current session: new streams
// wait for the next one.
func (m *Machine) markDropped(ls *linkSession) {
	m.lsMu.Lock()
	defer m.lsMu.Unlock()
	if m.ls == ls {
		m.ls = nil
		m.lsUp = make(chan struct{})
	}
}

// watchLink reconnects whenever the current session dies, until the
// machine is killed, shut down or QEMU exits.
func (m *Machine) watchLink(ls *linkSession) {
	for {
		select {
		case <-ls.sess.CloseChan():
		case <-m.life.Done():
			return
		case <-m.exited:
			return
		}
		m.markDropped(ls)
		if m.stopped() {
			return
		}
		m.logf("link to vm %s dropped (session %d); reconnecting", m.cfg.Name, ls.gen)
		start := time.Now()
		backoff := 100 * time.Millisecond
		for {
			next, err := m.redial()
			if err == nil {
				ls = next
				break
			}
			if m.stopped() {
				return
			}
			m.logf("link to vm %s: reconnecting: %v; retrying in %v", m.cfg.Name, err, backoff)
			select {
			case <-time.After(backoff):
			case <-m.life.Done():
				return
			case <-m.exited:
				return
			}
			backoff = min(2*backoff, 5*time.Second)
		}
		m.logf("link to vm %s reconnected in %v (session %d)", m.cfg.Name, time.Since(start).Round(time.Millisecond), ls.gen)
	}
}

// stopped says whether the machine is going away (no reconnects).
func (m *Machine) stopped() bool {
	if m.life.Err() != nil || m.shutting.Load() {
		return true
	}
	select {
	case <-m.exited:
		return true
	default:
		return false
	}
}

// redial makes one attempt at a new session.
func (m *Machine) redial() (*linkSession, error) {
	ctx, cancel := context.WithTimeout(m.life, handshakeTimeout)
	defer cancel()
	go func() { // QEMU's exit ends the attempt too
		select {
		case <-m.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", filepath.Join(m.dir, LinkSock))
	if err != nil {
		return nil, err
	}
	// The reset junk is written to a guest that may not read (paused):
	// bound the writes too, not only the wait for its ready line.
	_ = conn.SetWriteDeadline(time.Now().Add(handshakeTimeout))
	id, err := link.HostHandshake(ctx, conn.(*net.UnixConn), handshakeReset)
	if err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetWriteDeadline(time.Time{})
	return m.startSession(ctx, link.SkipRepeats(conn, id), nil)
}

// OpenStream opens a stream to the agent on the current link session and
// returns it with the session's number. While the link reconnects it waits
// for the new session, up to reconnectWait.
func (m *Machine) OpenStream(ctx context.Context) (net.Conn, int, error) {
	ctx, cancel := context.WithTimeout(ctx, reconnectWait)
	defer cancel()
	for {
		m.lsMu.Lock()
		ls, up := m.ls, m.lsUp
		m.lsMu.Unlock()
		if ls != nil {
			st, err := ls.sess.Open()
			if err == nil {
				return st, ls.gen, nil
			}
			if !ls.sess.IsClosed() {
				return nil, 0, fmt.Errorf("link to vm %s: opening a stream: %w", m.cfg.Name, err)
			}
			m.markDropped(ls) // it just died: wait for the next one
			continue
		}
		select {
		case <-up:
		case <-m.exited:
			return nil, 0, fmt.Errorf("link to vm %s: qemu has exited", m.cfg.Name)
		case <-m.life.Done():
			return nil, 0, fmt.Errorf("link to vm %s: the machine is stopped", m.cfg.Name)
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, 0, fmt.Errorf("link to vm %s is down and did not come back within %v; see the supervisor log, or `lab down` it", m.cfg.Name, reconnectWait)
			}
			return nil, 0, ctx.Err()
		}
	}
}

// LinkState is the current link session's number and whether it is up
// (false while reconnecting).
func (m *Machine) LinkState() (session int, up bool) {
	m.lsMu.Lock()
	defer m.lsMu.Unlock()
	if m.ls == nil || m.ls.sess.IsClosed() {
		return m.linkGen, false
	}
	return m.ls.gen, true
}

// DropLink cuts the current link connection, as a failing link would. A
// diagnostic: tests use it to check that the machine reconnects.
func (m *Machine) DropLink() error {
	m.lsMu.Lock()
	defer m.lsMu.Unlock()
	if m.ls == nil {
		return fmt.Errorf("link to vm %s is already down (reconnecting)", m.cfg.Name)
	}
	return m.ls.conn.Close()
}
