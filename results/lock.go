package results

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// LockFile is the file in an output directory whose lock says one writer
// has it: `lab reproduce` and `lab matrix` take it for their --out.
const LockFile = ".lock"

// LockDir takes dir's writer lock (creating dir, private, if need be) for
// as long as the process holds it or until release is called: two
// commands writing one output would run its cells twice at once. If
// another process holds it, the error names that process's command, pid
// and start, and the choice left. what is the command taking it, as it
// is recorded for the next one to read.
func LockDir(dir, what string) (release func(), err error) {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		h := strings.TrimSpace(string(holder))
		if h == "" {
			h = "another process"
		}
		return nil, fmt.Errorf("%s is in use by %s: one writer at a time, or its cells would run twice at once; wait for it to end (the same command then resumes), or give another --out", dir, h)
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "`%s` (pid %d, started %s)\n", what, os.Getpid(), time.Now().Format("15:04:05"))
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
