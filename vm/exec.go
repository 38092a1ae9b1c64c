package vm

import (
	"context"
	"fmt"
	"io"
	"syscall"

	"lab/vm/link"
)

// Exec runs argv in the guest until it exits, its output streamed to
// stdout and stderr and stdin, unless nil, forwarded. When ctx is
// cancelled the program gets the signal sig names, then SIGKILL
// (link.Process.StopOnCancel). A program that did not start is a
// *link.StartError (wrapped).
func (h *Handle) Exec(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, sig func() syscall.Signal) (link.Exit, error) {
	p, err := h.Link().Start(ctx, &link.ExecRequest{Argv: argv, Stdin: stdin != nil}, link.StartOptions{Stdout: stdout, Stderr: stderr})
	if err != nil {
		return link.Exit{}, fmt.Errorf("vm %s: %w", h.Name, err)
	}
	if stdin != nil {
		p.CopyStdin(stdin)
	}
	p.StopOnCancel(ctx, func() int { return int(sig()) })
	ex, err := p.Wait()
	if err != nil && ctx.Err() != nil {
		// Closed after the signal and SIGKILL went unanswered.
		return ex, fmt.Errorf("vm %s: %s not seen to exit after %v and SIGKILL; the guest agent kills its process group: %w", h.Name, argv[0], sig(), context.Cause(ctx))
	}
	if err != nil {
		return ex, fmt.Errorf("vm %s: %w", h.Name, err)
	}
	return ex, nil
}
