package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"lab/vm/link"
)

func execCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "exec",
		Usage:     "run a command in a VM; output streamed, exit code propagated",
		ArgsUsage: "[NAME] -- CMD [ARG...]",
		Description: "Runs CMD in the guest with the profile's settings (stack limit...) applied.\n" +
			"stdout and stderr are streamed; the exit code is the guest program's\n" +
			"(128+n when killed by signal n; 127 when the program does not exist).\n" +
			"stdin is forwarded when it is not a terminal. With one VM up, NAME may be\n" +
			"left out.\n\n" +
			"Examples:\n" +
			"   lab exec -- uname -a\n" +
			"   lab exec celeron-2.4 -- sh -c 'ulimit -s; grep \"model name\" /proc/cpuinfo'\n" +
			"   echo hello | lab exec -- cat",
		// The command line belongs to the guest: lab parses none of it, so a
		// "--" inside the guest command stays where it is.
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
				return cli.ShowSubcommandHelp(c)
			}
			name, argv, err := splitNameCmd(args)
			if err != nil {
				return err
			}
			if name == "" && !slices.Contains(args, "--") {
				// `lab exec NAME` or `lab exec NAME CMD`: a VM's name
				// where the command goes is a missing "--", not a
				// program to look for in the guest.
				if h, err := e.roots.vm.Open(argv[0]); err == nil {
					cmd := "CMD"
					if len(argv) > 1 {
						cmd = strings.Join(argv[1:], " ")
					}
					return fmt.Errorf("%s is a VM, not a command: the command goes after --, as in `lab exec %s -- %s`", h.Name, h.Name, cmd)
				}
			}
			return e.exec(c, name, argv)
		},
	}
}

// splitNameCmd splits `[NAME] -- CMD...`. Without "--" everything is the
// command.
func splitNameCmd(args []string) (string, []string, error) {
	for i, a := range args {
		if a == "--" {
			if i > 1 {
				return "", nil, fmt.Errorf("expected `lab exec [NAME] -- CMD...`, got %d words before --", i)
			}
			name := ""
			if i == 1 {
				name = args[0]
			}
			if len(args[i+1:]) == 0 {
				return "", nil, errors.New("no command given after --")
			}
			return name, args[i+1:], nil
		}
	}
	if len(args) == 0 {
		return "", nil, errors.New("no command given: `lab exec [NAME] -- CMD...`")
	}
	return "", args, nil
}

// stdinPiped says whether r should be forwarded: anything but a terminal
// (no interactive sessions, yet).
func stdinPiped(r io.Reader) bool {
	return r != nil && !isTerminal(r)
}

// interruptSignal is the signal that cancelled ctx (see main), SIGINT if
// it was cancelled otherwise (tests, a caller's deadline).
func interruptSignal(ctx context.Context) syscall.Signal {
	var s *signalled
	if errors.As(context.Cause(ctx), &s) {
		return s.sig
	}
	return syscall.SIGINT
}

func (e *env) exec(c *cli.Context, name string, argv []string) error {
	h, err := e.roots.vm.OpenDefault(name)
	if err != nil {
		return err
	}
	release, err := e.lockGuest(c, h)
	if err != nil {
		return err
	}
	defer release()
	var stdin io.Reader
	if stdinPiped(e.stdin) {
		stdin = e.stdin
	}
	// Ctrl-C, SIGTERM, SIGHUP (main turns each into the cancellation of
	// c.Context): the guest program gets the same signal, then SIGKILL.
	ex, err := h.Exec(c.Context, argv, stdin, e.stdout, e.stderr, func() syscall.Signal { return interruptSignal(c.Context) })
	var se *link.StartError
	if errors.As(err, &se) {
		return &exitCode{code: se.Code, msg: se.Msg}
	} else if err != nil {
		return err
	}
	if ex.Code != 0 {
		msg := ""
		if ex.Signal != 0 {
			msg = fmt.Sprintf("%s killed by signal %d (%s)", argv[0], ex.Signal, unix.SignalName(syscall.Signal(ex.Signal)))
		}
		return &exitCode{code: ex.Code, msg: msg}
	}
	return nil
}
