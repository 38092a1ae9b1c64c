package link

import (
	"context"
	"io"
	"syscall"
	"time"
)

// How long StopOnCancel waits, once its context is cancelled, for the
// program to exit after the signal it forwarded (then it sends SIGKILL),
// and then after SIGKILL (then it closes the stream). Together under the
// 2 s in which an interrupted `lab exec` must be gone.
const (
	KillAfter  = time.Second
	LetGoAfter = 500 * time.Millisecond
)

// CopyStdin copies r to the program's stdin in a goroutine, then closes
// it: the program reads EOF.
func (p *Process) CopyStdin(r io.Reader) {
	go func() {
		in := p.Stdin()
		_, _ = io.Copy(in, r)
		in.Close()
	}()
}

// StopOnCancel watches ctx until the program ends: once ctx is cancelled,
// the program gets the signal sig returns (whatever its stdin is doing),
// then SIGKILL after KillAfter if it lingers; if even that gets no exit
// within LetGoAfter (a guest that stopped answering), the stream is closed
// and the agent kills the program's group when it sees the host gone.
// It returns at once.
func (p *Process) StopOnCancel(ctx context.Context, sig func() int) {
	go func() {
		select {
		case <-p.Done():
			return
		case <-ctx.Done():
		}
		// In goroutines: a signal frame never waits behind stdin, but a
		// write to a guest that stopped answering could block, and the
		// escalation must go on regardless.
		go func() { _ = p.Signal(sig()) }()
		select {
		case <-p.Done():
			return
		case <-time.After(KillAfter):
		}
		go func() { _ = p.Signal(int(syscall.SIGKILL)) }()
		select {
		case <-p.Done():
			return
		case <-time.After(LetGoAfter):
		}
		_ = p.Close()
	}()
}
