package vm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"lab/images"
)

// UpOptions are the inputs of Up.
type UpOptions struct {
	// Root is where the VM's state directory is made (Root.Dir(Name)).
	Root    Root
	Name    string
	Profile images.Profile
	// Accel is auto, kvm or tcg.
	Accel    string
	Clock    Clock
	MemoryMB int
	// Cold boots from scratch, neither restoring nor saving a snapshot.
	Cold bool
	// Preload lists files (lab's own plugin bundles for the profile's
	// arch) the guest's cache receives before a booted snapshot is saved,
	// so that their first run after a restore sends nothing. Ignored by
	// boots that save no snapshot (Cold). icount clocks restore and save
	// snapshots too: the snapshot carries QEMU's instruction counter and
	// the key its shift (TestIntegrationIcountRestore).
	Preload []PreloadFile
	// Exe is the lab binary that runs the supervisor (`Exe __supervise DIR`).
	Exe string
	// Path is where QEMU is looked for, in $PATH's form; "" is the
	// process's $PATH.
	Path string
	// Log receives progress and notes for the user.
	Log io.Writer
	// BzImage boots the kernel's compressed bzImage even where it has a
	// PVH entry (images.Kernel.BootImage), to compare the two boots.
	BzImage bool
	// Cache is lab's cache: the kernel, busybox and initramfs come from
	// it, and booted snapshots and the accelerator probe's verdicts live
	// there.
	Cache images.Cache
	// Link overrides the kernel's host-guest link (images.LinkHVC,
	// LinkUART...): for measuring one against another.
	Link string
	// KernelMirror is a directory of upstream kernel tarballs
	// (images.MirrorEnv), for a kernel built on first use.
	KernelMirror string
	// LibDirs are searched, in order, for the guest agent
	// (images.FindBinary).
	LibDirs []string
	// NoSnapshot boots from scratch like Cold (neither restoring nor
	// saving a snapshot), set by the CLI for the whole process.
	NoSnapshot bool
	// Throwaway ties the VM to this process: when it ends, however it
	// ends (SIGKILL too), the supervisor discards the VM. Take it down
	// with Handle.Discard.
	Throwaway bool
	// OwnerPID, if set, ties the VM to process OwnerPID as Throwaway
	// ties it to this one: when that process ends, the supervisor
	// discards the VM. A test binary or a CI job sets it
	// ($LAB_OWNER_PID), so that killing it leaves no VM behind.
	OwnerPID int
}

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]{0,62}$`)

// Prepare resolves everything a boot needs (QEMU, kernel, initramfs,
// accelerator) into a Config, without starting anything.
func Prepare(ctx context.Context, o UpOptions) (*Config, error) {
	if err := o.checkRoots(); err != nil {
		return nil, err
	}
	p := o.Profile
	qemu, err := LookQEMU(o.Path, p.Arch)
	if err != nil {
		return nil, err
	}
	// Asked while the kernel and initramfs are found: running QEMU takes
	// about 20 ms, and every boot asks.
	versionc := make(chan string, 1)
	go func() { versionc <- qemuVersion(qemu) }()
	k, err := o.Cache.EnsureKernel(ctx, p.Kernel, p.Name, images.SourceOptions{Mirror: o.KernelMirror}, o.Log) // an era kernel is built on first use
	if err != nil {
		return nil, err
	}
	bb, err := o.Cache.LoadBusybox(p.Arch)
	if err != nil {
		return nil, err
	}
	agent, err := images.FindBinary(o.LibDirs, "agent-"+p.Arch)
	if err != nil {
		return nil, err
	}
	initrd, err := o.Cache.BuildInitramfs(k, bb, agent, o.Log)
	if err != nil {
		return nil, fmt.Errorf("building the initramfs for %s: %w", p.Name, err)
	}
	if o.Log != nil { // the check runs the cross toolchain: only for a note someone reads
		if why := o.Cache.StaleRecipe(ctx, k); why != "" {
			fmt.Fprintln(o.Log, "note:", why)
		}
	}
	kernelSHA, entry := k.BootImage(p, o.BzImage)
	kernel := o.Cache.BlobPath(kernelSHA)
	want := o.Accel
	if o.Clock.ICount() && (want == "auto" || want == "") {
		// icount is TCG only: auto must not pick a working KVM (Args
		// would refuse it), and needs no probe.
		want = "tcg"
	}
	accel, note, err := ChooseAccel(ctx, want, qemu, kernel, string(o.Cache))
	if err != nil {
		return nil, err
	}
	if note != "" && o.Log != nil {
		fmt.Fprintln(o.Log, "note:", note)
	}
	dir := o.Root.Dir(o.Name)
	linkKind := k.LinkOf()
	if o.Link != "" {
		linkKind = o.Link
	}
	argv, err := Args(Options{Profile: p, Kernel: kernel, Initrd: initrd, StateDir: dir, Accel: accel, Clock: o.Clock, MemoryMB: o.MemoryMB, Link: linkKind})
	if err != nil {
		return nil, err
	}
	argv[0] = qemu
	if o.MemoryMB > 0 {
		p.MemoryMB = o.MemoryMB
	}
	timeout, stall := 30*time.Second, time.Duration(0)
	if accel == "tcg" {
		timeout, stall = 120*time.Second, stallTimeoutTCG
	}
	version := <-versionc
	snapshot := ""
	var preload []PreloadFile
	if !o.Cold && !o.NoSnapshot {
		if err := checkPreload(o.Preload); err != nil {
			return nil, fmt.Errorf("vm %s: %w", o.Name, err)
		}
		preload = o.Preload
		snapshot = SnapshotPath(string(o.Cache), SnapshotKey(argv, dir, version, preload))
	}
	return &Config{
		Name: o.Name, Profile: p, Argv: argv, QEMUVersion: version, Snapshot: snapshot, Preload: preload,
		Accel: accel, Clock: o.Clock,
		KernelID: k.ID, Link: linkKind, KernelSHA256: kernelSHA, KernelEntry: entry, KernelPackage: k.Package + " " + k.Version, KernelRelease: k.Release,
		KernelConfig: k.Config, KernelNotable: k.Notable,
		Initrd: initrd, BootTimeout: timeout, StallTimeout: stall, Throwaway: o.Throwaway, OwnerPID: o.OwnerPID,
	}, nil
}

// checkRoots refuses options without the directories a boot writes in:
// relative to the working directory they would scatter state anywhere.
func (o *UpOptions) checkRoots() error {
	if o.Root == "" || o.Cache == "" {
		return errors.New("vm: UpOptions needs a Root and a Cache")
	}
	return nil
}

func qemuVersion(qemu string) string {
	out, err := exec.Command(qemu, "--version").Output()
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// Up boots a VM under a detached supervisor and returns once its agent
// answers. If ctx ends first (Ctrl-C), the supervisor and QEMU are killed
// and nothing is left behind.
func Up(ctx context.Context, o UpOptions) (*State, error) {
	if !nameRE.MatchString(o.Name) {
		return nil, fmt.Errorf("vm name %q: use letters, digits, '.', '_' or '-' (at most 63)", o.Name)
	}
	if err := CheckClock(o.Profile, o.Accel, o.Clock); err != nil {
		return nil, err
	}
	if err := o.checkRoots(); err != nil {
		return nil, err
	}
	dir := o.Root.Dir(o.Name)
	if _, err := os.Stat(dir); err == nil {
		if st, err := ReadState(dir); err == nil && supervisorAlive(st.SupervisorPID) {
			return nil, fmt.Errorf("vm %s is already up (profile %s, supervisor pid %d); use `lab down %s` first, or `lab up --name OTHER %s`", o.Name, st.Profile.Name, st.SupervisorPID, o.Name, o.Profile.Name)
		} else if err == nil || time.Since(modTime(dir)) > 30*time.Second {
			cleanStale(dir, st)
			if o.Log != nil {
				fmt.Fprintf(o.Log, "note: removed stale state of vm %s (its supervisor is gone)\n", o.Name)
			}
		} else {
			return nil, fmt.Errorf("vm %s is being started by another `lab up`", o.Name)
		}
	}
	t0 := time.Now()
	cfg, err := Prepare(ctx, o)
	if err != nil {
		return nil, err
	}
	prepared := time.Since(t0)
	if err := os.MkdirAll(string(o.Root), 0o700); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("vm %s is being started by another `lab up`", o.Name)
		}
		return nil, err
	}
	// A new VM of this name: an earlier one's end is old news.
	forgetEnded(dir)
	b, _ := json.MarshalIndent(cfg, "", "  ")
	if err := writeFileAtomic(dir+"/"+ConfigFile, b, 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	st, err := startSupervisor(ctx, o.Exe, dir, o.Name, o.Throwaway, prepared)
	if st != nil && o.Log != nil {
		for _, n := range st.Notes {
			fmt.Fprintln(o.Log, "note:", n)
		}
	}
	return st, err
}

// owners holds the write ends of the owner pipes of this process's
// throwaway VMs, by name. They are never inherited (O_CLOEXEC); when the
// process ends the kernel closes them, and each supervisor sees EOF.
var owners sync.Map // name -> *os.File

func modTime(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// startSupervisor starts the supervisor of the VM in dir and waits for its
// report; prepared is how long finding (or building) the kernel and the
// initramfs took before, said if the wait runs out.
func startSupervisor(ctx context.Context, exe, dir, name string, throwaway bool, prepared time.Duration) (*State, error) {
	started := time.Now()
	logf, err := os.OpenFile(dir+"/"+SupervisorLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer logf.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer pr.Close()
	cmd := exec.Command(exe, SuperviseArg, dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{pw}
	var ownR, ownW *os.File
	if throwaway {
		if ownR, ownW, err = os.Pipe(); err != nil {
			pw.Close()
			os.RemoveAll(dir)
			return nil, err
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, ownR) // fd 4
	}
	// Its own session: a Ctrl-C on the terminal is relayed by Up, not
	// delivered behind its back.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		if throwaway {
			ownR.Close()
			ownW.Close()
		}
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting the supervisor (%s): %w", exe, err)
	}
	pw.Close()
	if throwaway {
		ownR.Close()
		owners.Store(name, ownW)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()

	msgs := make(chan readyMsg, 1)
	go func() {
		var msg readyMsg
		line, err := bufio.NewReader(pr).ReadBytes('\n')
		if err != nil && len(line) == 0 {
			msg.Error = "the supervisor exited without reporting; see " + dir + "/" + SupervisorLog
		} else if err := json.Unmarshal(line, &msg); err != nil {
			msg.Error = "bad report from the supervisor: " + err.Error()
		}
		msgs <- msg
	}()
	select {
	case msg := <-msgs:
		if msg.Error != "" {
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
			os.RemoveAll(dir)
			return nil, errors.New(msg.Error)
		}
		return msg.State, nil
	case <-ctx.Done():
		// The supervisor's QEMU dies with it (PR_SET_PDEATHSIG).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		// What the guest printed is how a boot that never answered is
		// understood: its console is kept (`lab console NAME` shows it)
		// and its last lines go into the error.
		last := lastLines(filepath.Join(dir, ConsoleLog), 3)
		recordEnd(dir, Ended{Name: name, Time: time.Now(), Cause: EndBootTimeout,
			Reason: fmt.Sprintf("`lab up` stopped waiting for the guest's agent: %v", ctx.Err())})
		os.RemoveAll(dir)
		err := fmt.Errorf("lab up %s: %w %.0f s into the boot (finding the kernel and initramfs took %.0f s before) before the guest's agent answered; nothing left running",
			name, ctx.Err(), time.Since(started).Seconds(), prepared.Seconds())
		if _, con := endedPaths(dir); last != "" {
			err = fmt.Errorf("%w; the guest console's last lines: %s (all of it kept in %s)", err, last, con)
		}
		return nil, err
	}
}

// lastLines are the last n non-empty lines of the file at path, joined by
// " | ", at most 400 bytes; "" if it has none.
func lastLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var lines []string
	printable := strings.Map(func(r rune) rune {
		if r == '\n' || r >= ' ' && r != 0x7f {
			return r
		}
		return -1
	}, string(b))
	for _, l := range strings.Split(printable, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	out := strings.Join(lines[max(0, len(lines)-n):], " | ")
	if len(out) > 400 {
		out = "..." + out[len(out)-400:]
	}
	return out
}

// LookQEMU finds QEMU for arch in path ($PATH's form; "": the process's
// $PATH), or says how to install it.
func LookQEMU(path, arch string) (string, error) {
	name := Binary(arch)
	missing := fmt.Errorf("%s not found: install QEMU with `apt-get install qemu-system-x86` (or run `make setup`)", name)
	if path == "" {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", missing
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue // not the current directory: exec.LookPath refuses it too
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", missing
}
