package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"
)

func downCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "down",
		Usage:     "power a VM off (forced after --timeout) and remove its state",
		ArgsUsage: "[NAME] | --all",
		Description: "Asks the guest agent to power off; if the guest does not go within\n" +
			"--timeout, QEMU is told to quit, then killed.\n\n" +
			"Examples:\n   lab down celeron-2.4\n   lab down --all",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "power off every VM"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "grace period before forcing"},
		},
		Action: func(c *cli.Context) error {
			var names []string
			if c.Bool("all") {
				if c.NArg() > 0 {
					return errors.New("give a NAME or --all, not both")
				}
				entries, err := e.roots.vm.List()
				if err != nil {
					return err
				}
				for _, en := range entries {
					if !en.Stale {
						names = append(names, en.Name)
					}
				}
				if len(names) == 0 {
					fmt.Fprintln(e.stdout, "no VMs are up")
					return nil
				}
			} else {
				h, err := e.roots.vm.OpenDefault(c.Args().First())
				if err != nil {
					return err
				}
				names = []string{h.Name}
			}
			var errs []error
			for _, n := range names {
				h, err := e.roots.vm.Open(n)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				t := time.Now()
				if err := h.Down(c.Context, c.Duration("timeout")); err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(e.stdout, "%s down (%.1fs)\n", n, time.Since(t).Seconds())
			}
			return errors.Join(errs...)
		},
	}
}
