package vm

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/go-qemu/qmp"
	"github.com/digitalocean/go-qemu/qmp/qmptest"
)

// qmpFake answers QMP commands the way QEMU 7.2 does for the ones the
// machine sends, through go-qemu's qmptest monitor, and emits the events
// QEMU would: STOP and RESUME, and MIGRATION status changes only once the
// "events" migration capability is on.
type qmpFake struct {
	t *testing.T

	mu       sync.Mutex
	cmds     []string
	args     map[string]json.RawMessage
	status   string
	eventsOn bool
	closed   bool
	events   chan qmp.Event
	// Knobs.
	errOn         map[string]string // command -> QEMU's error desc
	hangOn        map[string]bool   // command never answers
	migration     []string          // MIGRATION statuses a migration goes through
	errorDesc     string            // query-migrate's error-desc
	eventsFirst   bool              // MIGRATION events before the command's reply
	hangUpMidway  bool              // QEMU exits during the migration
	incomingState string            // run state after an incoming migration
	noEventsCap   bool              // a QEMU that ignores the events capability
	finalizeAfter time.Duration     // finish-migrate lasts this long after "completed"
	// finalizeOnRefusal ends finish-migrate right after a cont was refused.
	finalizeOnRefusal bool
	hang              chan struct{}
	// QEMU's devices and netdevs by id (device_add, netdev_add...), and
	// how long the guest takes to eject a device after device_del
	// (negative: never, as a hung guest).
	devices, netdevs map[string]bool
	ejectAfter       time.Duration
}

func newQMPFake(t *testing.T, status string) *qmpFake {
	return &qmpFake{
		t: t, status: status, args: map[string]json.RawMessage{},
		events:        make(chan qmp.Event),
		errOn:         map[string]string{},
		hangOn:        map[string]bool{},
		migration:     []string{"setup", "active", "device", "completed"},
		incomingState: "paused",
		hang:          make(chan struct{}),
		devices:       map[string]bool{},
		netdevs:       map[string]bool{},
	}
}

// fakeMonitor is qmptest's monitor with an event stream and a hang-up.
type fakeMonitor struct {
	qmp.Monitor
	f *qmpFake
}

func (m fakeMonitor) Events(context.Context) (<-chan qmp.Event, error) { return m.f.events, nil }
func (m fakeMonitor) Disconnect() error                                { m.f.hangUp(); return nil }

// monitor connects a qmpMonitor to f.
func (f *qmpFake) monitor(t *testing.T) *qmpMonitor {
	t.Helper()
	q, err := newQMPMonitor(context.Background(), "fake", fakeMonitor{qmptest.NewMonitor(f.run), f})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	return q
}

// hangUp is QEMU closing the socket: the event stream ends.
func (f *qmpFake) hangUp() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		close(f.events)
		close(f.hang)
	}
}

func (f *qmpFake) emit(name string, data map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.events <- qmp.Event{Event: name, Data: data}
}

func (f *qmpFake) migrate(incoming bool) {
	for _, st := range f.migration {
		if st == "active" && f.hangUpMidway {
			f.hangUp()
			return
		}
		if incoming && st == "completed" {
			// QEMU sets the run state before it reports completion.
			f.mu.Lock()
			f.status = f.incomingState
			f.mu.Unlock()
		}
		if !incoming && st == "completed" {
			f.mu.Lock()
			f.status = "postmigrate"
			if f.finalizeAfter > 0 {
				// QEMU's migration thread leaves finish-migrate only
				// after it reported completion.
				f.status = "finish-migrate"
				time.AfterFunc(f.finalizeAfter, func() {
					f.mu.Lock()
					f.status = "postmigrate"
					f.mu.Unlock()
				})
			}
			f.mu.Unlock()
		}
		f.mu.Lock()
		on := f.eventsOn
		f.mu.Unlock()
		if on {
			f.emit("MIGRATION", map[string]any{"status": st})
		}
	}
}

func (f *qmpFake) run(cmd qmp.Command) (any, error) {
	f.mu.Lock()
	f.cmds = append(f.cmds, cmd.Execute)
	b, _ := json.Marshal(cmd.Args)
	f.args[cmd.Execute] = b
	desc, fail := f.errOn[cmd.Execute]
	hang := f.hangOn[cmd.Execute]
	f.mu.Unlock()
	if hang {
		<-f.hang
		return nil, errors.New("EOF")
	}
	if fail {
		// What go-qemu's socket monitor returns for a QMP error reply.
		return nil, errors.New(desc)
	}
	ok := map[string]any{"return": map[string]any{}}
	switch cmd.Execute {
	case "query-status":
		f.mu.Lock()
		defer f.mu.Unlock()
		return map[string]any{"return": map[string]any{"status": f.status, "running": f.status == "running", "singlestep": false}}, nil
	case "stop":
		f.mu.Lock()
		f.status = "paused"
		f.mu.Unlock()
		f.emit("STOP", nil)
	case "cont":
		f.mu.Lock()
		if f.status == "finish-migrate" {
			if f.finalizeOnRefusal {
				f.status = "postmigrate" // just after refusing
			}
			f.mu.Unlock()
			return nil, errors.New("Migration is not finalized yet")
		}
		f.status = "running"
		f.mu.Unlock()
		f.emit("RESUME", nil)
	case "migrate-set-capabilities":
		var a struct {
			Capabilities []struct {
				Capability string `json:"capability"`
				State      bool   `json:"state"`
			} `json:"capabilities"`
		}
		_ = json.Unmarshal(b, &a)
		for _, c := range a.Capabilities {
			if c.Capability == "events" && !f.noEventsCap {
				f.mu.Lock()
				f.eventsOn = c.State
				f.mu.Unlock()
			}
		}
	case "migrate", "migrate-incoming":
		incoming := cmd.Execute == "migrate-incoming"
		if f.eventsFirst {
			f.migrate(incoming)
		} else {
			go f.migrate(incoming)
		}
	case "query-migrate":
		st := f.migration[len(f.migration)-1]
		r := map[string]any{"status": st}
		if f.errorDesc != "" {
			r["error-desc"] = f.errorDesc
		}
		return map[string]any{"return": r}, nil
	case "quit":
		go f.hangUp()
	case "netdev_add", "device_add", "device_del", "netdev_del":
		return f.deviceCommand(cmd.Execute, b)
	default:
		return nil, errors.New("The command " + cmd.Execute + " has not been found")
	}
	return ok, nil
}

// deviceCommand answers the device and netdev commands as QEMU 7.2 does
// (errors quoted from it): device_del only asks the guest, and
// DEVICE_DELETED follows once it ejected the card (first for the card's
// virtio backend, which carries no device id).
func (f *qmpFake) deviceCommand(name string, args []byte) (any, error) {
	var a struct {
		ID     string `json:"id"`
		Netdev string `json:"netdev"`
	}
	_ = json.Unmarshal(args, &a)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch name {
	case "netdev_add":
		if f.netdevs[a.ID] {
			return nil, errors.New("Duplicate ID '" + a.ID + "'")
		}
		f.netdevs[a.ID] = true
	case "device_add":
		if !f.netdevs[a.Netdev] {
			return nil, errors.New("Property 'virtio-net-device.netdev' can't find value '" + a.Netdev + "'")
		}
		f.devices[a.ID] = true
	case "device_del":
		if !f.devices[a.ID] {
			return nil, errors.New("Device '" + a.ID + "' not found")
		}
		if f.ejectAfter >= 0 {
			time.AfterFunc(f.ejectAfter, func() {
				f.mu.Lock()
				delete(f.devices, a.ID)
				f.mu.Unlock()
				f.emit("DEVICE_DELETED", map[string]any{"path": "/machine/peripheral/" + a.ID + "/virtio-backend"})
				f.emit("DEVICE_DELETED", map[string]any{"device": a.ID, "path": "/machine/peripheral/" + a.ID})
			})
		}
	case "netdev_del":
		if !f.netdevs[a.ID] {
			return nil, errors.New("Device '" + a.ID + "' not found")
		}
		delete(f.netdevs, a.ID)
	}
	return map[string]any{"return": map[string]any{}}, nil
}

func (f *qmpFake) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cmds...)
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestQMPStatus(t *testing.T) {
	for _, c := range []struct {
		name, status, errDesc string
		want                  string
		wantErr               string
	}{
		{name: "running", status: "running", want: "running"},
		{name: "paused", status: "paused", want: "paused"},
		{name: "inmigrate", status: "inmigrate", want: "inmigrate"},
		{name: "qemu error", status: "running", errDesc: "QMP unavailable", wantErr: "machine fake: qmp query-status: QMP unavailable"},
		{name: "unknown state", status: "bogus", wantErr: "bogus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newQMPFake(t, c.status)
			if c.errDesc != "" {
				f.errOn["query-status"] = c.errDesc
			}
			got, err := f.monitor(t).Status(testCtx(t, 5*time.Second))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Status: %q, %v; want an error containing %q", got, err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Status = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestQMPStopCont(t *testing.T) {
	f := newQMPFake(t, "running")
	q := f.monitor(t)
	ctx := testCtx(t, 5*time.Second)
	ev, unsubscribe := q.subscribe("STOP", "RESUME")
	defer unsubscribe()
	if err := q.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := q.Status(ctx); err != nil || st != "paused" {
		t.Fatalf("after stop: %q, %v", st, err)
	}
	if err := q.Cont(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := q.Status(ctx); err != nil || st != "running" {
		t.Fatalf("after cont: %q, %v", st, err)
	}
	var got []string
	for len(got) < 2 {
		select {
		case e := <-ev:
			got = append(got, e.Event)
		case <-ctx.Done():
			t.Fatalf("events: got %v, want STOP and RESUME", got)
		}
	}
	if want := []string{"STOP", "RESUME"}; !reflect.DeepEqual(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
	if got, want := f.commands(), []string{"stop", "query-status", "cont", "query-status"}; !reflect.DeepEqual(got, want) {
		t.Errorf("commands %v, want %v", got, want)
	}

	f.errOn["cont"] = "Resetting the Virtual Machine is required"
	if err := q.Cont(ctx); err == nil || !strings.Contains(err.Error(), "Resetting the Virtual Machine is required") {
		t.Errorf("cont refused by QEMU: %v, want its reason", err)
	}
}

func TestQMPQuit(t *testing.T) {
	f := newQMPFake(t, "running")
	q := f.monitor(t)
	if err := q.Quit(testCtx(t, 5*time.Second)); err != nil {
		t.Fatalf("Quit: %v", err)
	}
	select {
	case <-q.Closed():
	case <-time.After(5 * time.Second):
		t.Fatal("the monitor did not notice QEMU hanging up after quit")
	}
	if _, err := q.Status(testCtx(t, 5*time.Second)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Status after QEMU quit: %v, want a closed-connection error", err)
	}
	// A subscriber after the hang-up gets a closed channel, not a hang.
	ev, _ := q.subscribe("MIGRATION")
	if _, ok := <-ev; ok {
		t.Error("subscription on a closed monitor delivered an event")
	}
}

// A command QEMU never answers: ctx bounds it, and the connection is closed
// (go-qemu cannot abandon one command and keep the socket in step).
func TestQMPContextCancel(t *testing.T) {
	f := newQMPFake(t, "running")
	f.hangOn["query-status"] = true
	q := f.monitor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := q.Status(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Status of a hung QEMU: %v, want the deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Status took %v after its ctx ended", d)
	}
	select {
	case <-q.Closed():
	case <-time.After(5 * time.Second):
		t.Fatal("the connection stayed open after a cancelled command")
	}
	// An already-cancelled ctx sends nothing.
	f2 := newQMPFake(t, "running")
	q2 := f2.monitor(t)
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := q2.Stop(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop with a cancelled ctx: %v", err)
	}
	if cmds := f2.commands(); len(cmds) != 0 {
		t.Errorf("a cancelled ctx still sent %v", cmds)
	}
}

func TestQMPSubscribeFilters(t *testing.T) {
	f := newQMPFake(t, "running")
	q := f.monitor(t)
	mig, unsubscribe := q.subscribe("MIGRATION")
	defer unsubscribe()
	ctx := testCtx(t, 5*time.Second)
	if err := q.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	f.emit("MIGRATION", map[string]any{"status": "setup"})
	select {
	case e := <-mig:
		if e.Event != "MIGRATION" {
			t.Errorf("a MIGRATION subscriber got %s", e.Event)
		}
	case <-ctx.Done():
		t.Fatal("no MIGRATION event")
	}
	unsubscribe()
	// Events nobody wants do not block the connection.
	for i := 0; i < 3*qmpSubBuffer; i++ {
		f.emit("MIGRATION", map[string]any{"status": "active"})
	}
	if _, err := q.Status(ctx); err != nil {
		t.Fatal(err)
	}
}

// The save sequence: events on, stop, migrate into the file, wait for the
// MIGRATION event, and always resume.
func TestSaveStateEvents(t *testing.T) {
	for _, c := range []struct {
		name        string
		setup       func(f *qmpFake)
		timeout     time.Duration
		wantErr     string
		wantCmds    []string
		eventsFirst bool
	}{
		{name: "completed", wantCmds: []string{"migrate-set-capabilities", "stop", "migrate", "cont"}},
		{name: "events before the reply", eventsFirst: true, wantCmds: []string{"migrate-set-capabilities", "stop", "migrate", "cont"}},
		{
			name: "migration failed",
			setup: func(f *qmpFake) {
				f.migration = []string{"setup", "failed"}
				f.errorDesc = "Unable to write to command: Broken pipe"
			},
			wantErr:  "migration failed: Unable to write to command: Broken pipe",
			wantCmds: []string{"migrate-set-capabilities", "stop", "migrate", "query-migrate", "cont"},
		},
		{
			name:     "migrate refused",
			setup:    func(f *qmpFake) { f.errOn["migrate"] = "There's a migration process in progress" },
			wantErr:  "qmp migrate: There's a migration process in progress",
			wantCmds: []string{"migrate-set-capabilities", "stop", "migrate", "cont"},
		},
		{
			name:     "stop refused",
			setup:    func(f *qmpFake) { f.errOn["stop"] = "boom" },
			wantErr:  "qmp stop: boom",
			wantCmds: []string{"migrate-set-capabilities", "stop"},
		},
		{
			// QEMU without the events capability would never say: ctx ends it.
			name:     "no events",
			setup:    func(f *qmpFake) { f.noEventsCap = true },
			timeout:  200 * time.Millisecond,
			wantErr:  "waiting for the migration: context deadline exceeded",
			wantCmds: []string{"migrate-set-capabilities", "stop", "migrate", "cont"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newQMPFake(t, "running")
			f.eventsFirst = c.eventsFirst
			if c.setup != nil {
				c.setup(f)
			}
			q := f.monitor(t)
			timeout := c.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			err := saveState(testCtx(t, timeout), q, "/cache/snapshots/it's.state.tmp-1")
			if c.wantErr == "" && err != nil {
				t.Fatalf("saveState: %v", err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("saveState: %v, want an error containing %q", err, c.wantErr)
			}
			if got := f.commands(); !reflect.DeepEqual(got, c.wantCmds) {
				t.Errorf("commands %v, want %v", got, c.wantCmds)
			}
			if got, want := string(f.args["migrate-set-capabilities"]), `{"capabilities":[{"capability":"events","state":true}]}`; got != want {
				t.Errorf("migrate-set-capabilities arguments %s, want %s", got, want)
			}
			if a, ok := f.args["migrate"]; ok {
				var m struct {
					URI string `json:"uri"`
				}
				_ = json.Unmarshal(a, &m)
				if want := `exec:cat > '/cache/snapshots/it'\''s.state.tmp-1'`; m.URI != want {
					t.Errorf("migrate uri %q, want %q", m.URI, want)
				}
			}
		})
	}
}

// The restore sequence on a QEMU started with -incoming defer.
func TestRestoreSnapshotEvents(t *testing.T) {
	for _, c := range []struct {
		name     string
		setup    func(f *qmpFake)
		wantErr  string
		wantCmds []string
		wantRun  string
	}{
		{name: "comes back paused", wantCmds: []string{"migrate-set-capabilities", "migrate-incoming", "query-status", "cont"}, wantRun: "running"},
		{name: "comes back running", setup: func(f *qmpFake) { f.incomingState = "running" }, wantCmds: []string{"migrate-set-capabilities", "migrate-incoming", "query-status"}, wantRun: "running"},
		{name: "events before the reply", setup: func(f *qmpFake) { f.eventsFirst = true }, wantCmds: []string{"migrate-set-capabilities", "migrate-incoming", "query-status", "cont"}, wantRun: "running"},
		{
			name: "load failed",
			setup: func(f *qmpFake) {
				f.migration = []string{"active", "failed"}
				f.errorDesc = "load of migration failed: Invalid argument"
			},
			wantErr:  "migration failed: load of migration failed: Invalid argument",
			wantCmds: []string{"migrate-set-capabilities", "migrate-incoming", "query-migrate"},
		},
		{
			name:     "qemu exits",
			setup:    func(f *qmpFake) { f.hangUpMidway = true },
			wantErr:  "the qmp connection closed during the migration",
			wantCmds: []string{"migrate-set-capabilities", "migrate-incoming"},
		},
		{
			name:     "odd run state",
			setup:    func(f *qmpFake) { f.incomingState = "internal-error" },
			wantErr:  "qemu run state internal-error after the restore",
			wantCmds: []string{"migrate-set-capabilities", "migrate-incoming", "query-status"},
		},
		{
			name:     "incoming refused",
			setup:    func(f *qmpFake) { f.errOn["migrate-incoming"] = "The incoming migration has already been started" },
			wantErr:  "qmp migrate-incoming: The incoming migration has already been started",
			wantCmds: []string{"migrate-set-capabilities", "migrate-incoming"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newQMPFake(t, "inmigrate")
			if c.setup != nil {
				c.setup(f)
			}
			q := f.monitor(t)
			ctx := testCtx(t, 5*time.Second)
			err := restoreSnapshot(ctx, q, "/cache/snapshots/k.state", nil)
			if c.wantErr == "" && err != nil {
				t.Fatalf("restoreSnapshot: %v", err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("restoreSnapshot: %v, want an error containing %q", err, c.wantErr)
			}
			if got := f.commands(); !reflect.DeepEqual(got, c.wantCmds) {
				t.Errorf("commands %v, want %v", got, c.wantCmds)
			}
			var a struct {
				URI string `json:"uri"`
			}
			_ = json.Unmarshal(f.args["migrate-incoming"], &a)
			if want := "exec:cat '/cache/snapshots/k.state'"; a.URI != want {
				t.Errorf("migrate-incoming uri %q, want %q", a.URI, want)
			}
			if c.wantRun != "" {
				if st, err := q.Status(ctx); err != nil || st != c.wantRun {
					t.Errorf("run state after the restore: %q, %v; want %q", st, err, c.wantRun)
				}
			}
		})
	}
}

// Right after "completed" QEMU refuses cont for a moment: the guest must
// run again anyway (it stayed paused, and the boot timed out, before),
// also when the run state has moved on by the time it is read.
func TestSaveStateResumesAfterFinalize(t *testing.T) {
	for _, c := range []struct {
		name              string
		finalizeOnRefusal bool
	}{
		{"still finish-migrate when asked", false},
		{"postmigrate when asked", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newQMPFake(t, "running")
			f.finalizeAfter = 30 * time.Millisecond
			f.finalizeOnRefusal = c.finalizeOnRefusal
			q := f.monitor(t)
			ctx := testCtx(t, 5*time.Second)
			if err := saveState(ctx, q, "/tmp/x"); err != nil {
				t.Fatalf("saveState: %v", err)
			}
			if st, err := q.Status(ctx); err != nil || st != "running" {
				t.Errorf("run state after the save: %q, %v; want running", st, err)
			}
			cmds := f.commands()
			if len(cmds) < 6 || cmds[len(cmds)-2] != "cont" {
				t.Errorf("commands %v: want cont refused, then retried until it succeeded", cmds)
			}
		})
	}
}
