package vm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// One flock on the VM's run.lock keeps measurements undisturbed: `lab run`
// holds it exclusive for the whole run, `lab exec` and `lab cp` hold it
// shared while they use the guest. So a run waits for the commands already
// running in the guest, and a command waits for the run, unless it is told
// not to (noWait), in which case it goes ahead and leaves a record in the
// interference log that the run copies into its result.
const (
	runLockFile      = "run.lock"
	interferenceFile = "interference.log"
)

// lockPoll is how often a waiter retries the lock. Polling (rather than a
// blocking flock) keeps the wait cancellable by ctx.
const lockPoll = 100 * time.Millisecond

// RunHolder is what the `lab run` holding a VM's run lock wrote into it.
type RunHolder struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Command []string  `json:"command,omitempty"`
}

// Interference is a command that used the guest while a `lab run` held the
// lock (it was given noWait).
type Interference struct {
	Time    time.Time `json:"time"`
	PID     int       `json:"pid"`
	Command []string  `json:"command"`
}

func (h *Handle) openRunLock() (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(h.Dir, runLockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("vm %s: run lock: %w", h.Name, err)
	}
	return f, nil
}

// LockRun takes the VM's run lock exclusive so that nothing else uses the
// guest while a `lab run` measures: neither another run nor `lab exec` /
// `lab cp` (which take it shared). If it is held, waiting is called once
// with who holds it (nil when it is exec/cp commands rather than a run)
// and LockRun waits its turn, until ctx ends. command is recorded in the
// lock for waiters to show. The lock dies with the process holding it.
func (h *Handle) LockRun(ctx context.Context, command []string, waiting func(holder *RunHolder)) (unlock func(), err error) {
	f, err := h.openRunLock()
	if err != nil {
		return nil, err
	}
	told := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if err != unix.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("vm %s: run lock: %w", h.Name, err)
		}
		if !told && waiting != nil {
			waiting(h.exclusiveHolder())
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
	// Waiters read who holds the lock from the file itself; it is cleared
	// before the lock is let go.
	b, _ := json.Marshal(RunHolder{PID: os.Getpid(), Started: time.Now(), Command: command})
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(b, 0)
	}
	return func() {
		_ = f.Truncate(0)
		f.Close()
	}, nil
}

// RunHolder returns the `lab run` measuring on the VM now, or nil if none
// is.
func (h *Handle) RunHolder() *RunHolder { return h.exclusiveHolder() }

// WaitRun waits until no `lab run` holds h's run lock, polling, or ctx
// ends.
func (h *Handle) WaitRun(ctx context.Context) error {
	for h.RunHolder() != nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// CommandLine is the run's command line as lab shows it ("lab run
// ..."): the recorded argv[0] may be a path.
func (h *RunHolder) CommandLine() []string {
	if len(h.Command) == 0 {
		return []string{"lab run"}
	}
	return append([]string{"lab"}, h.Command[1:]...)
}

// exclusiveHolder returns the run holding the lock exclusive, or nil if
// the lock is held shared (by exec/cp commands): a shared lock can be taken
// exactly when no run holds it.
func (h *Handle) exclusiveHolder() *RunHolder {
	f, err := h.openRunLock()
	if err != nil {
		return nil
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) == nil {
		return nil
	}
	holder := readHolder(f)
	return &holder
}

// readHolder reads the holder a run wrote into the lock; zero if it has not
// written it yet.
func readHolder(f *os.File) RunHolder {
	var holder RunHolder
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<16))
	if err == nil {
		_ = json.Unmarshal(b, &holder)
	}
	return holder
}

// LockShared takes the VM's run lock shared, for a command that uses the
// guest (`lab exec`, `lab cp`): any number of them at once, but not during
// a `lab run`. If a run holds the lock, busy is called once with the run
// and whether the command is waiting. Without noWait, LockShared waits for
// the run to end (until ctx ends). With noWait it goes ahead at once,
// appending an Interference record (now, command) to the VM's interference
// log, which the run reads into its result, and holds the lock shared as
// soon as that run ends (so the next run waits for it).
func (h *Handle) LockShared(ctx context.Context, command []string, noWait bool, busy func(holder RunHolder, waiting bool)) (release func(), err error) {
	f, err := h.openRunLock()
	if err != nil {
		return nil, err
	}
	told := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if err != unix.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("vm %s: run lock: %w", h.Name, err)
		}
		if noWait {
			holder := readHolder(f)
			if err := h.recordInterference(Interference{Time: time.Now(), PID: os.Getpid(), Command: command}); err != nil {
				f.Close()
				return nil, err
			}
			if busy != nil {
				busy(holder, false)
			}
			return shareWhenFree(f), nil
		}
		if !told && busy != nil {
			busy(readHolder(f), true)
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(lockPoll):
		}
	}
}

// shareWhenFree takes f's lock shared as soon as the run holding it ends,
// until release is called: a command that went ahead during one run must
// make the next run wait for it, not disturb that one unrecorded too.
func shareWhenFree(f *os.File) (release func()) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) != nil {
			select {
			case <-stop:
				return
			case <-time.After(lockPoll / 10):
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		f.Close()
	}
}

// recordInterference appends rec to the interference log, one JSON line
// per record. O_APPEND makes each small write land whole even when
// several commands record at once.
func (h *Handle) recordInterference(rec Interference) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(h.Dir, interferenceFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("vm %s: recording interference: %w", h.Name, err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("vm %s: recording interference: %w", h.Name, err)
	}
	return nil
}

// Interference returns the records of commands that went ahead (noWait)
// between from and to, oldest first. A missing log is no interference; a
// line that does not parse (a torn write) is skipped.
func (h *Handle) Interference(from, to time.Time) ([]Interference, error) {
	f, err := os.Open(filepath.Join(h.Dir, interferenceFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vm %s: interference log: %w", h.Name, err)
	}
	defer f.Close()
	var out []Interference
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec Interference
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		if !rec.Time.Before(from) && !rec.Time.After(to) {
			out = append(out, rec)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("vm %s: interference log: %w", h.Name, err)
	}
	return out, nil
}
