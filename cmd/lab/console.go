package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"lab/vm"
)

func consoleCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "console",
		Usage:     "print a VM's serial console log",
		ArgsUsage: "[NAME]",
		Description: "Prints the kernel and agent messages of the VM's serial console. With -f,\n" +
			"keeps printing new lines until the VM goes down or Ctrl-C.\n\n" +
			"Example:\n   lab console celeron-2.4 -f",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new output"}},
		Action: func(c *cli.Context) error {
			h, err := e.roots.vm.OpenDefault(c.Args().First())
			if err != nil {
				return err
			}
			f, err := os.Open(filepath.Join(h.Dir, vm.ConsoleLog))
			if err != nil {
				return err
			}
			defer f.Close()
			for {
				if _, err := io.Copy(e.stdout, f); err != nil {
					return err
				}
				if !c.Bool("follow") {
					return nil
				}
				select {
				case <-c.Context.Done():
					return nil
				case <-time.After(200 * time.Millisecond):
				}
				if _, err := os.Stat(h.Dir); errors.Is(err, os.ErrNotExist) {
					_, _ = io.Copy(e.stdout, f)
					return nil
				}
			}
		},
	}
}
