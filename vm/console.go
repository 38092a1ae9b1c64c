package vm

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"
)

// CopyConsole copies h's serial console log to w; with follow it keeps
// copying new lines until the VM goes down (its state directory is gone)
// or ctx ends.
func (h *Handle) CopyConsole(ctx context.Context, w io.Writer, follow bool) error {
	f, err := os.Open(filepath.Join(h.Dir, ConsoleLog))
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		if _, err := io.Copy(w, f); err != nil {
			return err
		}
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
		if _, err := os.Stat(h.Dir); errors.Is(err, os.ErrNotExist) {
			_, _ = io.Copy(w, f)
			return nil
		}
	}
}
