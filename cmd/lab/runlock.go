package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"lab/vm"
)

// noWaitFlag lets `lab exec` and `lab cp` use a guest while a `lab run`
// measures there. The default is to wait: a disturbed measurement cannot be
// undisturbed, and recording the disturbance only tells you to run again.
const noWaitFlag = "no-wait"

// lockGuest is called by `lab exec` and `lab cp` right after they open the
// VM: it takes the VM's run lock shared for as long as the command uses the
// guest, waiting (and saying so) while a `lab run` measures there, unless
// --no-wait was given; then it goes ahead and the run records it as
// interference. The caller defers release.
func (e *env) lockGuest(c *cli.Context, h *vm.Handle) (release func(), err error) {
	return lockShared(c.Context, h, e.args, e.noWait || c.Bool(noWaitFlag), e.stderr)
}

func lockShared(ctx context.Context, h *vm.Handle, command []string, noWait bool, stderr io.Writer) (func(), error) {
	return h.LockShared(ctx, command, noWait, func(holder vm.RunHolder, waiting bool) {
		fmt.Fprintln(stderr, busyMessage(h.Name, holder, waiting))
	})
}

// busyMessage is what a command that finds a run in its guest says.
func busyMessage(vmName string, holder vm.RunHolder, waiting bool) string {
	run := "vm " + vmName + " is busy with a `lab run`"
	if !holder.Started.IsZero() {
		run += " (started " + holder.Started.Local().Format("15:04:05") + ")"
	}
	if !waiting {
		return run + "; going ahead (--no-wait): this is recorded in the run's result as interference"
	}
	return run + "; waiting... (use --no-wait to go ahead anyway; that is recorded in the run's result as interference)"
}

// splitNoWait takes --no-wait out of a `lab exec` command line. lab exec
// parses no flags (the command line after -- belongs to the guest), so
// --no-wait counts only before the "--"; without a "--" every word is the
// guest's.
func splitNoWait(args []string) ([]string, bool) {
	if len(args) < 2 || args[1] != "exec" {
		return args, false
	}
	dash := slices.Index(args, "--")
	if dash < 0 {
		return args, false
	}
	out := make([]string, 0, len(args))
	found := false
	for i, a := range args {
		if i >= 2 && i < dash && a == "--"+noWaitFlag {
			found = true
			continue
		}
		out = append(out, a)
	}
	return out, found
}

// withNoWait adds --no-wait to the help of `lab exec` and as a flag of
// `lab cp`.
func withNoWait(cmd *cli.Command) *cli.Command {
	const usage = "do not wait for a lab run measuring in the VM: go ahead, and the run records this command in its result as interference"
	if cmd.SkipFlagParsing {
		cmd.ArgsUsage = strings.Replace(cmd.ArgsUsage, "--", "[--no-wait] --", 1)
		cmd.Description += "\n\nWhile a `lab run` measures in the VM, lab exec waits for it to finish\n" +
			"(saying so). --no-wait (before the --) goes ahead instead, and the run\n" +
			"records this command in its result as interference."
		return cmd
	}
	cmd.Flags = append(cmd.Flags, &cli.BoolFlag{Name: noWaitFlag, Usage: usage})
	return cmd
}
