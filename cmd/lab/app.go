package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"lab/vm"
)

// exitCode is an error that carries the process exit status (e.g. the
// guest program's status for `lab exec`).
type exitCode struct {
	code int
	msg  string
}

func (e *exitCode) Error() string { return e.msg }

// env is what a command may touch: injected so the CLI runs in-process in
// tests.
type env struct {
	args           []string
	stdin          io.Reader
	stdout, stderr io.Writer
	// roots are the directories and switches read from the environment.
	roots roots
	// noWait is `lab exec --no-wait`: lab exec parses no flags of its own,
	// so run takes it out of the command line (see splitNoWait).
	noWait bool
}

// run is the whole CLI; main is a few lines around it. getenv is the
// environment (os.Getenv in main): nothing below reads the process's.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) >= 3 && args[1] == vm.SuperviseArg {
		var ready *os.File
		if f := os.NewFile(3, "ready"); f != nil {
			ready = f
		}
		return vm.Supervise(args[2], ready, stderr)
	}
	e := &env{args: args, stdin: stdin, stdout: stdout, stderr: stderr, roots: readRoots(getenv)}
	args, e.noWait = splitNoWait(args)
	app := &cli.App{
		Name:  "lab",
		Usage: "boot emulated historical machines and run OS benchmarks inside them",
		Description: "lab boots QEMU guests that look, from inside, like the machines of published\n" +
			"OS experiments (CPU identity, cores, memory, address-space split, stack limit),\n" +
			"and runs commands and benchmark plugins in them.\n\n" +
			"   lab up celeron-2.4 && lab exec -- uname -a",
		Version:         versionString(buildVersion()),
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		Commands: []*cli.Command{
			upCommand(e),
			statusCommand(e),
			withNoWait(execCommand(e)),
			withNoWait(cpCommand(e)),
			consoleCommand(e),
			downCommand(e),
			profilesCommand(e),
			imageCommand(e),
			pluginsCommand(e),
			runCommand(e),
			claimsCommand(e),
			reproduceCommand(e),
			resultsCommand(e),
			compareCommand(e),
			historyCommand(e),
			reportCommand(e),
			matrixCommand(e),
			pluginBuildCommand(e),
		},
		ExitErrHandler: func(*cli.Context, error) {}, // we print errors ourselves
		// -p designs=0,1,6 is one value; repeat a flag for more.
		DisableSliceFlagSeparator: true,
	}
	err := app.RunContext(ctx, permute(app.Commands, args))
	if err == nil {
		return 0
	}
	var ec *exitCode
	if errors.As(err, &ec) {
		if ec.msg != "" {
			fmt.Fprintln(stderr, "lab:", ec.msg)
		}
		return ec.code
	}
	fmt.Fprintln(stderr, "lab:", err)
	if errors.Is(err, context.Canceled) {
		return 130
	}
	return 1
}

// printJSON writes v indented.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print machine-readable JSON"}

var profileFileFlag = &cli.StringSliceFlag{
	Name:  "profile-file",
	Usage: "load extra profiles from `FILE` (YAML or JSON, same schema as the built-ins); repeatable",
}
