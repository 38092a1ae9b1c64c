package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"lab/vm"
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

func (e *env) cp(c *cli.Context, src, dst string) error {
	sname, spath, sremote := vm.SplitPath(src)
	dname, dpath, dremote := vm.SplitPath(dst)
	switch {
	case sremote && dremote:
		return fmt.Errorf("both %q and %q name a VM; copy through the host in two steps", src, dst)
	case !sremote && !dremote:
		return fmt.Errorf("neither %q nor %q names a VM (write NAME:PATH)", src, dst)
	}
	name := dname
	if sremote {
		name = sname
	}
	h, err := e.roots.vm.Open(name)
	if err != nil {
		return err
	}
	release, err := e.lockGuest(c, h)
	if err != nil {
		return err
	}
	defer release()
	if dremote {
		return h.CopyIn(c.Context, src, dpath)
	}
	return h.CopyOut(c.Context, spath, dst)
}
