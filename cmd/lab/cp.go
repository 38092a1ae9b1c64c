package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
)

func cpCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "cp",
		Usage:     "copy a file into or out of a VM, keeping mode bits",
		ArgsUsage: "SRC NAME:DST | NAME:SRC DST",
		Description: "Copies one regular file between the host and a guest. A destination that\n" +
			"ends in / (or is a directory on the host) receives the file under its own name.\n\n" +
			"Examples:\n" +
			"   lab cp ./prog celeron-2.4:/root/prog\n" +
			"   lab cp celeron-2.4:/proc/cpuinfo ./cpuinfo.txt",
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return fmt.Errorf("lab cp needs SRC and DST, one of them NAME:PATH")
			}
			return e.cp(c, c.Args().Get(0), c.Args().Get(1))
		},
	}
}

// remote splits "NAME:PATH"; ok is false for a host path.
func remote(arg string) (name, p string, ok bool) {
	i := strings.Index(arg, ":")
	if i <= 0 || strings.Contains(arg[:i], "/") {
		return "", "", false
	}
	return arg[:i], arg[i+1:], true
}

func (e *env) cp(c *cli.Context, src, dst string) error {
	sname, spath, sremote := remote(src)
	dname, dpath, dremote := remote(dst)
	switch {
	case sremote && dremote:
		return fmt.Errorf("both %q and %q name a VM; copy through the host in two steps", src, dst)
	case !sremote && !dremote:
		return fmt.Errorf("neither %q nor %q names a VM (write NAME:PATH)", src, dst)
	case dremote:
		h, err := e.roots.vm.Open(dname)
		if err != nil {
			return err
		}
		release, err := e.lockGuest(c, h)
		if err != nil {
			return err
		}
		defer release()
		if dpath == "" || strings.HasSuffix(dpath, "/") {
			dpath += filepath.Base(src)
		}
		if !path.IsAbs(dpath) {
			dpath = "/root/" + dpath
		}
		if _, err := h.Link().PutFile(c.Context, src, dpath, 0); err != nil {
			return fmt.Errorf("vm %s: %w", dname, err)
		}
		return nil
	default:
		h, err := e.roots.vm.Open(sname)
		if err != nil {
			return err
		}
		release, err := e.lockGuest(c, h)
		if err != nil {
			return err
		}
		defer release()
		if !path.IsAbs(spath) {
			spath = "/root/" + spath
		}
		if fi, err := os.Stat(dst); err == nil && fi.IsDir() {
			dst = filepath.Join(dst, path.Base(spath))
		}
		tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".lab-*")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		mode, err := h.Link().Get(c.Context, spath, tmp)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("vm %s: %w", sname, err)
		}
		if err := os.Chmod(tmp.Name(), mode.Perm()); err != nil {
			return err
		}
		return os.Rename(tmp.Name(), dst)
	}
}
