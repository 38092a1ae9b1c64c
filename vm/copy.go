package vm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// SplitPath splits "NAME:PATH", a path in the VM NAME (`lab cp`); ok is
// false for a host path.
func SplitPath(arg string) (name, p string, ok bool) {
	i := strings.Index(arg, ":")
	if i <= 0 || strings.Contains(arg[:i], "/") {
		return "", "", false
	}
	return arg[:i], arg[i+1:], true
}

// guestPath is p in the guest: a relative path is under /root.
func guestPath(p string) string {
	if !path.IsAbs(p) {
		return "/root/" + p
	}
	return p
}

// CopyIn copies the host file src into the guest as dst, keeping its mode
// bits: a dst that is empty or ends in / receives the file under its own
// name.
func (h *Handle) CopyIn(ctx context.Context, src, dst string) error {
	if dst == "" || strings.HasSuffix(dst, "/") {
		dst += filepath.Base(src)
	}
	if _, err := h.Link().PutFile(ctx, src, guestPath(dst), 0); err != nil {
		return fmt.Errorf("vm %s: %w", h.Name, err)
	}
	return nil
}

// CopyOut copies the guest file src to the host as dst (a directory
// receives it under its own name), keeping its mode bits; dst appears
// whole or not at all.
func (h *Handle) CopyOut(ctx context.Context, src, dst string) error {
	src = guestPath(src)
	if fi, err := os.Stat(dst); err == nil && fi.IsDir() {
		dst = filepath.Join(dst, path.Base(src))
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".lab-*")
	if err != nil {
		// The temporary file is ours; the user's problem is dst's
		// directory.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot write %s: its directory %s: %v; choose a destination you can write", dst, filepath.Dir(dst), err)
	}
	defer os.Remove(tmp.Name())
	mode, err := h.Link().Get(ctx, src, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("vm %s: %w", h.Name, err)
	}
	if err := os.Chmod(tmp.Name(), mode.Perm()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
