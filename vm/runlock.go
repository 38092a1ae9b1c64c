package vm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// LockRun takes the VM's run lock so two `lab run` never interleave on one
// guest. If another run holds it, waiting is called once and LockRun waits
// its turn (until ctx ends). The lock dies with the process holding it.
func (h *Handle) LockRun(ctx context.Context, waiting func()) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(h.Dir, "run.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("vm %s: run lock: %w", h.Name, err)
	}
	told := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if err != unix.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("vm %s: run lock: %w", h.Name, err)
		}
		if !told && waiting != nil {
			waiting()
			told = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
