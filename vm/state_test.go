package vm

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"lab/images"
	"lab/vm/link"
)

// stateRoot is a fresh state root for the test.
func stateRoot(t *testing.T) Root {
	t.Helper()
	return Root(t.TempDir())
}

// deadPID returns the pid of a child that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// sleeper starts a long sleep whose command line reads argv0 (sleep stands
// in for a supervisor or a QEMU). It is killed when the test ends; done is
// closed when it has exited.
func sleeper(t *testing.T, argv0 string) (pid int, done <-chan struct{}) {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.Args[0] = argv0
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{})
	go func() { _ = cmd.Wait(); close(ch) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-ch
	})
	return cmd.Process.Pid, ch
}

// fakeSupervisor starts a process that supervisorAlive takes for a live
// supervisor.
func fakeSupervisor(t *testing.T) int {
	t.Helper()
	pid, _ := sleeper(t, "lab "+SuperviseArg)
	return pid
}

// writeVM makes a state dir for name with the given supervisor pid.
func writeVM(t *testing.T, root Root, name string, st State) string {
	t.Helper()
	dir := root.Dir(name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	st.Name = name
	if st.Profile.Name == "" {
		st.Profile.Name = "celeron-2.4"
	}
	if st.Phase == "" {
		st.Phase = PhaseRunning
	}
	if err := writeState(dir, &st); err != nil {
		t.Fatal(err)
	}
	return dir
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestListEmpty(t *testing.T) {
	t.Parallel()
	got, err := Root(filepath.Join(t.TempDir(), "missing")).List()
	if err != nil || len(got) != 0 {
		t.Errorf("List() on a missing root = %v, %v; want nothing, nil", got, err)
	}
	root := stateRoot(t)
	if err := os.WriteFile(filepath.Join(string(root), "stray-file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = root.List()
	if err != nil || len(got) != 0 {
		t.Errorf("List() with only a stray file = %v, %v; want nothing, nil", got, err)
	}
}

func TestListStaleSupervisor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pid  func(t *testing.T) int
	}{
		{"exited child", deadPID},
		{"pid reused by another program", func(*testing.T) int { return os.Getpid() }},
		{"no pid", func(*testing.T) int { return 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := stateRoot(t)
			dir := writeVM(t, root, "old", State{SupervisorPID: tt.pid(t)})
			entries, err := root.List()
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 {
				t.Fatalf("List() = %+v, want one entry", entries)
			}
			e := entries[0]
			if e.Name != "old" || !e.Stale || e.State == nil || e.State.Profile.Name != "celeron-2.4" {
				t.Errorf("List() = %+v, want a stale entry \"old\" with its state", e)
			}
			if exists(dir) {
				t.Errorf("stale state dir %s still exists", dir)
			}
			// Cleaned: the next List sees nothing.
			if entries, err := root.List(); err != nil || len(entries) != 0 {
				t.Errorf("second List() = %+v, %v; want nothing", entries, err)
			}
		})
	}
}

func TestListKillsQEMULeftBehind(t *testing.T) {
	t.Parallel()
	root := stateRoot(t)
	dir := root.Dir("orphan")
	// The command line names the state dir, as a real QEMU's does.
	qemuPID, qemuDone := sleeper(t, "qemu-system-i386 -chardev file,id=con,path="+dir+"/console.log")
	writeVM(t, root, "orphan", State{SupervisorPID: deadPID(t), QEMUPID: qemuPID})
	if _, err := root.List(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-qemuDone:
	case <-time.After(10 * time.Second):
		t.Errorf("the QEMU (pid %d) of a dead supervisor was not killed", qemuPID)
	}
	if exists(dir) {
		t.Errorf("stale state dir %s still exists", dir)
	}
}

func TestListSparesUnrelatedProcess(t *testing.T) {
	t.Parallel()
	root := stateRoot(t)
	// A QEMU pid since reused by a program that has nothing to do with the
	// VM must not be killed.
	pid, done := sleeper(t, "innocent")
	writeVM(t, root, "reused", State{SupervisorPID: deadPID(t), QEMUPID: pid})
	if _, err := root.List(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Errorf("List killed pid %d, which is not the VM's QEMU", pid)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestListLiveSupervisor(t *testing.T) {
	t.Parallel()
	root := stateRoot(t)
	dir := writeVM(t, root, "live", State{SupervisorPID: fakeSupervisor(t)})
	entries, err := root.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Stale || entries[0].State == nil || entries[0].Dir != dir {
		t.Fatalf("List() = %+v, want one live entry in %s", entries, dir)
	}
	if !exists(filepath.Join(dir, StateFile)) {
		t.Errorf("List removed the state of a live VM")
	}
}

func TestListDirWithoutState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		age       time.Duration
		wantStale bool
	}{
		{"young: a supervisor starting", 0, false},
		{"young, 20s", 20 * time.Second, false},
		{"older than 30s", time.Minute, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := stateRoot(t)
			dir := root.Dir("half")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if tt.age > 0 {
				old := time.Now().Add(-tt.age)
				if err := os.Chtimes(dir, old, old); err != nil {
					t.Fatal(err)
				}
			}
			entries, err := root.List()
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantStale {
				if len(entries) != 1 || !entries[0].Stale || entries[0].State != nil {
					t.Errorf("List() = %+v, want one stale entry without state", entries)
				}
				if exists(dir) {
					t.Errorf("old stateless dir %s was not cleaned", dir)
				}
				return
			}
			if len(entries) != 0 {
				t.Errorf("List() = %+v, want a young stateless dir skipped", entries)
			}
			if !exists(dir) {
				t.Errorf("young stateless dir %s was removed", dir)
			}
		})
	}
}

func TestListSorted(t *testing.T) {
	t.Parallel()
	root := stateRoot(t)
	pid := fakeSupervisor(t)
	for _, n := range []string{"zeta", "alpha", "mid"} {
		writeVM(t, root, n, State{SupervisorPID: pid})
	}
	entries, err := root.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name)
	}
	if want := "alpha,mid,zeta"; strings.Join(got, ",") != want {
		t.Errorf("List() names = %q, want %s", got, want)
	}
}

func TestOpenDefault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		vms     map[string]string // VM name -> phase; "stale" = dead supervisor
		arg     string
		want    string   // the handle's name on success
		wantErr []string // substrings of the error otherwise
		notUp   bool     // the error wraps ErrNotUp
		is      error    // and wraps this one, if set
	}{
		{name: "none up", wantErr: []string{"no VMs are up", "lab up PROFILE"}, is: ErrNoneUp},
		{name: "only stale", vms: map[string]string{"ghost": "stale"}, wantErr: []string{"no VMs are up", "lab up PROFILE"}, is: ErrNoneUp},
		{name: "one up", vms: map[string]string{"a": PhaseRunning}, want: "a"},
		{name: "one up and a stale one", vms: map[string]string{"a": PhaseRunning, "ghost": "stale"}, want: "a"},
		{name: "two up", vms: map[string]string{"a": PhaseRunning, "b": PhaseRunning}, wantErr: []string{"2 VMs are up", "a, b", "name one"}},
		{name: "named", vms: map[string]string{"a": PhaseRunning, "b": PhaseRunning}, arg: "b", want: "b"},
		{name: "named, not up", vms: map[string]string{"a": PhaseRunning}, arg: "c", wantErr: []string{`vm "c" is not up`, "up: a"}, notUp: true},
		{name: "named, none up", arg: "c", wantErr: []string{`vm "c" is not up`, "lab up PROFILE"}, notUp: true},
		{name: "named, stale", vms: map[string]string{"ghost": "stale"}, arg: "ghost", wantErr: []string{`vm "ghost" is not up`}, notUp: true},
		{name: "booting", vms: map[string]string{"a": PhaseBooting}, wantErr: []string{"vm a is still booting", "wait for `lab up`"}, is: ErrBooting},
		// A throwaway VM is another run's (lab run --profile, a matrix
		// cell): never the default.
		{name: "one up and a throwaway", vms: map[string]string{"a": PhaseRunning, "p-run-1": "throwaway"}, want: "a"},
		{name: "only a throwaway", vms: map[string]string{"p-run-1": "throwaway"}, wantErr: []string{"no VMs are up", "p-run-1 is another run's throwaway VM"}, is: ErrNoneUp},
		{name: "a throwaway, named", vms: map[string]string{"a": PhaseRunning, "p-run-1": "throwaway"}, arg: "p-run-1", want: "p-run-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := stateRoot(t)
			for n, phase := range tt.vms {
				if phase == "stale" {
					writeVM(t, root, n, State{SupervisorPID: deadPID(t)})
					continue
				}
				if phase == "throwaway" {
					writeVM(t, root, n, State{SupervisorPID: fakeSupervisor(t), Phase: PhaseRunning, Config: Config{Throwaway: true}})
					continue
				}
				writeVM(t, root, n, State{SupervisorPID: fakeSupervisor(t), Phase: phase})
			}
			h, err := root.OpenDefault(tt.arg)
			if tt.wantErr == nil {
				if err != nil || h.Name != tt.want || h.Dir != root.Dir(tt.want) || h.State == nil {
					t.Fatalf("OpenDefault(%q) = %+v, %v; want a handle for %s", tt.arg, h, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("OpenDefault(%q) = %+v, want an error", tt.arg, h)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("OpenDefault(%q) = %q, want it to contain %q", tt.arg, err, w)
				}
			}
			if got := errors.Is(err, ErrNotUp); got != tt.notUp {
				t.Errorf("errors.Is(%q, ErrNotUp) = %v, want %v", err, got, tt.notUp)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%q, %v) = false, want true", err, tt.is)
			}
		})
	}
}

func TestHandleNoSupervisor(t *testing.T) {
	t.Parallel()
	root := stateRoot(t)
	dir := writeVM(t, root, "gone", State{SupervisorPID: fakeSupervisor(t)})
	h := &Handle{Name: "gone", Dir: dir, State: &State{SupervisorPID: fakeSupervisor(t)}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// No control socket: the supervisor does not answer.
	if _, err := h.Status(ctx); err == nil || !strings.Contains(err.Error(), "vm gone: supervisor not answering") || !errors.Is(err, ErrNoSupervisor) {
		t.Errorf("Status() = %v, want a 'supervisor not answering' error (ErrNoSupervisor)", err)
	}
	// Down on a dead supervisor just cleans up.
	h.State.SupervisorPID = deadPID(t)
	if err := h.Down(ctx, time.Second); err != nil {
		t.Errorf("Down() with a dead supervisor = %v, want nil", err)
	}
	if exists(dir) {
		t.Errorf("Down left %s behind", dir)
	}
}

func TestUpRefusesBeforeBooting(t *testing.T) {
	long := strings.Repeat("a", 64)
	tests := []struct {
		name    string
		vmName  string
		setup   func(t *testing.T, root Root)
		wantErr []string
	}{
		{"empty name", "", nil, []string{`vm name ""`, "letters, digits"}},
		{"slash", "a/b", nil, []string{`vm name "a/b"`}},
		{"dot dot", "..", nil, []string{`vm name ".."`}},
		{"leading dash", "-x", nil, []string{`vm name "-x"`}},
		{"space", "my vm", nil, []string{`vm name "my vm"`}},
		{"too long", long, nil, []string{"at most 63"}},
		{"already up", "busy", func(t *testing.T, root Root) {
			writeVM(t, root, "busy", State{SupervisorPID: fakeSupervisor(t)})
		}, []string{"vm busy is already up", "profile celeron-2.4", "lab down busy", "--name"}},
		{"being started", "young", func(t *testing.T, root Root) {
			if err := os.MkdirAll(root.Dir("young"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, []string{"vm young is being started by another `lab up`"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := stateRoot(t)
			if tt.setup != nil {
				tt.setup(t, root)
			}
			// Nothing may be looked up or started: no QEMU on PATH, no cache.
			t.Setenv("PATH", t.TempDir())
			st, err := Up(context.Background(), UpOptions{Root: root, Cache: images.Cache(t.TempDir()), Name: tt.vmName, Profile: images.Profile{Name: "celeron-2.4", Arch: "i386"}, Accel: "tcg", Exe: "/nonexistent/lab"})
			if err == nil {
				t.Fatalf("Up(%q) = %+v, want an error", tt.vmName, st)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Up(%q) = %q, want it to contain %q", tt.vmName, err, w)
				}
			}
		})
	}
}

func TestUpCleansStaleStateThenPrepares(t *testing.T) {
	root := stateRoot(t)
	dir := writeVM(t, root, "old", State{SupervisorPID: deadPID(t)})
	t.Setenv("PATH", t.TempDir())
	var log strings.Builder
	_, err := Up(context.Background(), UpOptions{Root: root, Cache: images.Cache(t.TempDir()), Name: "old", Profile: images.Profile{Name: "celeron-2.4", Arch: "i386", Kernel: "debian-6.1-686"}, Accel: "tcg", Exe: "/nonexistent/lab", Log: &log})
	if !strings.Contains(log.String(), "removed stale state of vm old") {
		t.Errorf("Up log = %q, want a note about removed stale state", log.String())
	}
	if exists(dir) {
		t.Errorf("stale dir %s still exists", dir)
	}
	// With no QEMU on PATH, Prepare says how to install it.
	if err == nil || !strings.Contains(err.Error(), "qemu-system-i386 not found") || !strings.Contains(err.Error(), "apt-get install qemu-system-x86") {
		t.Errorf("Up without QEMU = %v, want an error saying how to install QEMU", err)
	}
}

func TestReadState(t *testing.T) {
	t.Parallel()
	root := stateRoot(t)
	dir := writeVM(t, root, "x", State{Config: Config{Clock: Clock{Mode: "icount", Shift: 4}}, SupervisorPID: 42, QEMUPID: 43, BootSeconds: 1.5})
	fi, err := os.Stat(filepath.Join(dir, StateFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("state.json mode %v, want 0600", got)
	}
	st, err := ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Name != "x" || st.SupervisorPID != 42 || st.QEMUPID != 43 || st.Clock.String() != "icount:4" || st.BootSeconds != 1.5 {
		t.Errorf("ReadState = %+v, want what was written", st)
	}
	if err := os.WriteFile(filepath.Join(dir, StateFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(dir); err == nil || !strings.Contains(err.Error(), StateFile) {
		t.Errorf("ReadState(corrupt) = %v, want an error naming %s", err, StateFile)
	}
}

// serveCtl serves a VM's control socket as a stand-in supervisor: each
// connection's request is handed to handle, and the connection closed
// when it returns.
func serveCtl(t *testing.T, dir string, handle func(conn net.Conn, req ctlRequest)) {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(dir, CtlSock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				var req ctlRequest
				if link.ReadMsg(conn, &req) != nil {
					return
				}
				handle(conn, req)
			}()
		}
	}()
}

// fakeCtl serves a VM's control socket the way a supervisor does: status,
// link (answering one info request as the agent would) and down (which
// kills the stand-in supervisor process and closes the connection).
func fakeCtl(t *testing.T, dir string, kill func()) {
	t.Helper()
	serveCtl(t, dir, func(conn net.Conn, req ctlRequest) {
		switch req.Op {
		case ctlStatus:
			_ = link.WriteMsg(conn, &ctlResponse{Status: &Status{RunState: "running", Uptime: time.Minute}})
		case ctlLink:
			_ = link.WriteMsg(conn, &ctlResponse{Link: &LinkStatus{Session: 1, Up: true}})
			var lr link.Request
			if link.ReadMsg(conn, &lr) == nil {
				_ = link.WriteMsg(conn, &link.Response{Info: &link.Info{Uname: "Linux fake", Session: lr.Op}})
			}
		case ctlDown:
			if req.Grace != 3*time.Second {
				_ = link.WriteMsg(conn, &ctlResponse{Error: "grace not passed on"})
				return
			}
			kill()
		default:
			_ = link.WriteMsg(conn, &ctlResponse{Error: "unknown control operation " + req.Op})
		}
	})
}

func TestHandleControl(t *testing.T) {
	t.Parallel()
	root := stateRoot(t)
	pid, exited := sleeper(t, "lab "+SuperviseArg)
	dir := writeVM(t, root, "ctl", State{SupervisorPID: pid})
	fakeCtl(t, dir, func() { _ = syscall.Kill(pid, syscall.SIGKILL); <-exited })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	h, err := root.Open("ctl")
	if err != nil {
		t.Fatal(err)
	}
	st, err := h.Status(ctx)
	if err != nil || st.RunState != "running" || st.Uptime != time.Minute {
		t.Errorf("Status = %+v, %v; want running for 1m", st, err)
	}
	info, err := h.Link().Info(ctx)
	if err != nil || info.Uname != "Linux fake" || info.Session != link.OpInfo {
		t.Errorf("Link().Info = %+v, %v; want the agent's answer through the control socket", info, err)
	}
	if err := h.Down(ctx, 3*time.Second); err != nil {
		t.Errorf("Down = %v", err)
	}
	if exists(dir) {
		t.Errorf("Down left %s behind", dir)
	}
}

func TestHandleControlError(t *testing.T) {
	t.Parallel()
	root := stateRoot(t)
	dir := writeVM(t, root, "ctl", State{SupervisorPID: fakeSupervisor(t)})
	fakeCtl(t, dir, func() {})
	h := &Handle{Name: "ctl", Dir: dir}
	_, _, err := h.ctl(context.Background(), ctlRequest{Op: "frobnicate"})
	if err == nil || !strings.Contains(err.Error(), "vm ctl: unknown control operation frobnicate") {
		t.Errorf("ctl(frobnicate) = %v, want the supervisor's error naming the VM", err)
	}
}
