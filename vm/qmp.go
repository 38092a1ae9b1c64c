package vm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/digitalocean/go-qemu/qmp"
	"github.com/digitalocean/go-qemu/qmp/raw"
)

// qmpMonitor is a machine's one QMP connection, held by its supervisor for
// QEMU's whole life: QEMU's QMP socket serves one client at a time, and
// events (STOP, RESUME, MIGRATION) only reach a connection that stays open.
// Commands go through go-qemu's generated raw.Monitor over a
// socketMonitor; go-qemu takes no
// contexts, so each command runs in a goroutine and a cancelled context
// closes the connection (a command QEMU does not answer leaves it unusable
// anyway; the machine dials a new one on next use).
type qmpMonitor struct {
	name string // the machine's, for errors
	mon  qmp.Monitor
	raw  *raw.Monitor

	mu     sync.Mutex
	subs   map[*qmpSub]struct{}
	closed bool
	// done is closed when the connection is closed or QEMU hung up.
	done      chan struct{}
	closeOnce sync.Once
}

// qmpSub receives the events named in names. Its channel is closed when the
// connection ends.
type qmpSub struct {
	names map[string]bool
	ch    chan qmp.Event
}

// qmpSubBuffer bounds the events queued for one subscriber. Subscribers
// listen to a handful of events (MIGRATION status changes: setup, active,
// device, completed), so it is never reached; if it were, the event is
// dropped rather than stalling the connection (go-qemu delivers command
// replies and events from one reader goroutine).
const qmpSubBuffer = 64

// dialQMP connects to the QMP socket of machine name, retrying while QEMU
// has not created it yet (the dial fails with ENOENT or ECONNREFUSED for
// the first milliseconds), until ctx ends or exited is closed.
func dialQMP(ctx context.Context, name, sock string, exited <-chan struct{}) (*qmpMonitor, error) {
	for {
		sm, err := dialSocketMonitor(sock, 2*time.Second)
		if err == nil {
			return newQMPMonitor(ctx, name, sm)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("machine %s: connecting to qmp (%v): %w", name, err, ctx.Err())
		case <-exited:
			return nil, fmt.Errorf("machine %s: qemu exited before its qmp socket answered", name)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// newQMPMonitor does the QMP handshake on mon and starts delivering its
// events.
func newQMPMonitor(ctx context.Context, name string, mon qmp.Monitor) (*qmpMonitor, error) {
	q := &qmpMonitor{name: name, mon: mon, raw: raw.NewMonitor(mon), subs: map[*qmpSub]struct{}{}, done: make(chan struct{})}
	if err := q.do(ctx, "handshake", mon.Connect); err != nil {
		_ = mon.Disconnect()
		return nil, err
	}
	events, err := mon.Events(context.Background())
	if err != nil {
		_ = mon.Disconnect()
		return nil, fmt.Errorf("machine %s: qmp events: %w", name, err)
	}
	go q.pump(events)
	return q, nil
}

// pump hands each event to the subscribers that want it. It must always
// keep reading: go-qemu's reader blocks on an undrained event channel, and
// command replies come through the same reader.
func (q *qmpMonitor) pump(events <-chan qmp.Event) {
	if events != nil {
		for e := range events {
			q.mu.Lock()
			for s := range q.subs {
				if s.names[e.Event] {
					select {
					case s.ch <- e:
					default:
					}
				}
			}
			q.mu.Unlock()
		}
	} else {
		<-q.done // a monitor without events (tests): ends when closed
	}
	q.mu.Lock()
	q.closed = true
	for s := range q.subs {
		close(s.ch)
		delete(q.subs, s)
	}
	q.mu.Unlock()
	q.Close() // QEMU hung up: release the socket
}

// subscribe starts queueing the named events. Subscribe before sending the
// command that causes them, so none is missed; call cancel when done.
func (q *qmpMonitor) subscribe(names ...string) (<-chan qmp.Event, func()) {
	s := &qmpSub{names: map[string]bool{}, ch: make(chan qmp.Event, qmpSubBuffer)}
	for _, n := range names {
		s.names[n] = true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		close(s.ch)
		return s.ch, func() {}
	}
	q.subs[s] = struct{}{}
	return s.ch, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		if _, ok := q.subs[s]; ok {
			delete(q.subs, s)
			close(s.ch)
		}
	}
}

// Close hangs up. Commands in flight return errors; subscribers' channels
// are closed.
func (q *qmpMonitor) Close() {
	q.closeOnce.Do(func() {
		close(q.done)
		// Disconnect waits for go-qemu's reader to finish, which needs the
		// pump to drain events: never under q.mu.
		go q.mon.Disconnect()
	})
}

// Closed is closed when the connection is closed or QEMU hung up.
func (q *qmpMonitor) Closed() <-chan struct{} { return q.done }

// do runs one go-qemu call, honouring ctx: on cancel the connection is
// closed (which ends the call) and ctx's error returned.
func (q *qmpMonitor) do(ctx context.Context, what string, f func() error) error {
	select {
	case <-q.done:
		return fmt.Errorf("machine %s: qmp %s: the qmp connection is closed", q.name, what)
	default:
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("machine %s: qmp %s: %w", q.name, what, err)
	}
	errc := make(chan error, 1)
	go func() { errc <- f() }()
	select {
	case err := <-errc:
		if err != nil {
			select {
			case <-q.done:
				// go-qemu reports a hang-up as a JSON decoding error.
				return fmt.Errorf("machine %s: qmp %s: the qmp connection closed (qemu exited?): %w", q.name, what, err)
			default:
			}
			return fmt.Errorf("machine %s: qmp %s: %w", q.name, what, err)
		}
		return nil
	case <-ctx.Done():
		q.Close()
		return fmt.Errorf("machine %s: qmp %s: %w", q.name, what, ctx.Err())
	}
}

// Status is QEMU's run state ("running", "paused", "inmigrate"...).
func (q *qmpMonitor) Status(ctx context.Context) (string, error) {
	var st raw.StatusInfo
	err := q.do(ctx, "query-status", func() (err error) {
		st, err = q.raw.QueryStatus()
		return err
	})
	if err != nil {
		return "", err
	}
	return st.Status.String(), nil
}

// Stop pauses the guest's CPUs.
func (q *qmpMonitor) Stop(ctx context.Context) error {
	return q.do(ctx, "stop", q.raw.Stop)
}

// Cont resumes the guest's CPUs.
func (q *qmpMonitor) Cont(ctx context.Context) error {
	return q.do(ctx, "cont", q.raw.Cont)
}

// Quit makes QEMU exit at once. QEMU may hang up before or after it
// answers, so losing the connection counts as success.
func (q *qmpMonitor) Quit(ctx context.Context) error {
	err := q.do(ctx, "quit", q.raw.Quit)
	if err != nil && ctx.Err() == nil {
		select {
		case <-q.done:
			return nil
		case <-time.After(time.Second):
		}
	}
	return err
}

// enableMigrationEvents makes QEMU report each migration state change as
// a MIGRATION event: QEMU sends them only with the "events" capability.
func (q *qmpMonitor) enableMigrationEvents(ctx context.Context) error {
	return q.do(ctx, "migrate-set-capabilities", func() error {
		return q.raw.MigrateSetCapabilities([]raw.MigrationCapabilityStatus{{Capability: raw.MigrationCapabilityEvents, State: true}})
	})
}

// migrationError is the reason QEMU gives for a failed migration, if any.
func (q *qmpMonitor) migrationError(ctx context.Context) string {
	var info raw.MigrationInfo
	if err := q.do(ctx, "query-migrate", func() (err error) {
		info, err = q.raw.QueryMigrate()
		return err
	}); err != nil {
		return ""
	}
	if info.ErrorDesc != nil {
		return *info.ErrorDesc
	}
	return ""
}

// awaitMigration waits on events (from subscribe("MIGRATION") made before
// the migration started) until the migration completes or fails.
func (q *qmpMonitor) awaitMigration(ctx context.Context, events <-chan qmp.Event) error {
	for {
		select {
		case e, ok := <-events:
			if !ok {
				return fmt.Errorf("machine %s: the qmp connection closed during the migration", q.name)
			}
			status, _ := e.Data["status"].(string)
			switch status {
			case "completed":
				return nil
			case "failed", "cancelled":
				msg := fmt.Sprintf("machine %s: migration %s", q.name, status)
				if desc := q.migrationError(ctx); desc != "" {
					msg += ": " + desc
				}
				return errors.New(msg)
			}
		case <-ctx.Done():
			return fmt.Errorf("machine %s: waiting for the migration: %w", q.name, ctx.Err())
		}
	}
}

// HMP runs a human monitor command (e.g. "info registers -a") and returns
// what it printed.
func (q *qmpMonitor) HMP(ctx context.Context, command string) (string, error) {
	var out string
	err := q.do(ctx, "human-monitor-command "+command, func() (err error) {
		out, err = q.raw.HumanMonitorCommand(command, nil)
		return err
	})
	if err != nil {
		return "", err // on a cancel, the call may still be writing out
	}
	return out, nil
}
