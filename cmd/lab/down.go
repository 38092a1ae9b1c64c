package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"lab/vm"
)

func downCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "down",
		Usage:     "power a VM off (forced after --timeout) and remove its state",
		ArgsUsage: "[NAME] | --all",
		Description: "Asks the guest agent to power off; if the guest does not go within\n" +
			"--timeout, QEMU is told to quit, then killed.\n\n" +
			"A VM a `lab run` is measuring on is left alone, saying which run: --wait\n" +
			"waits for the run to end first, --force takes the VM down under it (the run\n" +
			"saves what it measured, its outcome saying the VM was taken down by lab down).\n" +
			"A `lab exec` or `lab cp` using the VM is waited for (at most --timeout, saying\n" +
			"so), so that a copy in flight ends whole; --force does not wait.\n\n" +
			"Examples:\n   lab down celeron-2.4\n   lab down --all\n   lab down --wait celeron-2.4",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "power off every VM"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "grace period before forcing"},
			&cli.BoolFlag{Name: "force", Usage: "take the VM down even while a `lab run` measures on it (the run fails, saying so)"},
			&cli.BoolFlag{Name: "wait", Usage: "wait for a `lab run` on the VM to end, then take it down"},
		},
		Action: func(c *cli.Context) error {
			var names []string
			if c.Bool("all") {
				if c.NArg() > 0 {
					return errors.New("give a NAME or --all, not both")
				}
				var err error
				if names, err = e.roots.vm.Up(); err != nil {
					return err
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
			if c.Bool("force") && c.Bool("wait") {
				return errors.New("give --force or --wait, not both")
			}
			var errs []error
			for _, n := range names {
				h, err := e.roots.vm.Open(n)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if err := e.waitForRun(c.Context, h, c.Bool("force"), c.Bool("wait")); err != nil {
					errs = append(errs, err)
					continue
				}
				unlock := func() {}
				if !c.Bool("force") {
					unlock = e.waitForUsers(c.Context, h, c.Duration("timeout"))
				}
				t := time.Now()
				err = h.Down(c.Context, c.Duration("timeout"))
				unlock()
				if err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(e.stdout, "%s down (%.1fs)\n", n, time.Since(t).Seconds())
			}
			return errors.Join(errs...)
		},
	}
}

// waitForRun is what lab down does about a `lab run` measuring on h:
// refuse (naming the run and the flags), wait for it to end (wait), or
// go ahead (force).
func (e *env) waitForRun(ctx context.Context, h *vm.Handle, force, wait bool) error {
	holder := h.RunHolder()
	if holder == nil || force {
		return nil
	}
	what := fmt.Sprintf("`%s` (pid %d, since %s)", strings.Join(holder.CommandLine(), " "), holder.PID, holder.Started.Local().Format("15:04:05"))
	if !wait {
		return fmt.Errorf("vm %s: a lab run is measuring on it: %s; wait for it (`lab down --wait %s`) or interrupt it (`lab down --force %s`)", h.Name, what, h.Name, h.Name)
	}
	fmt.Fprintf(e.stderr, "vm %s: waiting for %s to end...\n", h.Name, what)
	return h.WaitRun(ctx)
}

// waitForUsers waits, up to timeout, for the `lab exec` and `lab cp`
// commands using h to finish (they hold its run lock shared), saying so,
// and holds the lock until unlock so that none starts under the power
// off: a copy in flight must not end in a broken pipe. Past the timeout
// it goes ahead, saying so.
func (e *env) waitForUsers(ctx context.Context, h *vm.Handle, timeout time.Duration) (unlock func()) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	unlock, err := h.LockRun(wctx, []string{"lab", "down", h.Name}, func(*vm.RunHolder) {
		fmt.Fprintf(e.stderr, "vm %s: waiting for the `lab exec`/`lab cp` using it to finish (at most %s)...\n", h.Name, timeout)
	})
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(e.stderr, "vm %s: still in use after %s; taking it down under them\n", h.Name, timeout)
		}
		return func() {}
	}
	return unlock
}
