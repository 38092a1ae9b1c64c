package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
)

func consoleCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "console",
		Usage:     "print a VM's serial console log",
		ArgsUsage: "[NAME]",
		Description: "Prints the kernel and agent messages of the VM's serial console. With -f,\n" +
			"keeps printing new lines until the VM goes down or Ctrl-C. For a VM that is\n" +
			"gone, prints the log it had when it ended, and why it ended.\n\n" +
			"Example:\n   lab console celeron-2.4 -f",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new output"}},
		Action: func(c *cli.Context) error {
			h, err := e.roots.vm.OpenDefault(c.Args().First())
			if err != nil {
				// A VM that is gone: the console log its supervisor kept.
				if name := c.Args().First(); name != "" {
					if kept := e.roots.vm.EndedConsole(name); kept != "" {
						return e.printEndedConsole(name, kept)
					}
				}
				return err
			}
			return h.CopyConsole(c.Context, e.stdout, c.Bool("follow"))
		},
	}
}

// printEndedConsole prints the console log kept when VM name ended, saying
// on stderr that it is gone and why.
func (e *env) printEndedConsole(name, path string) error {
	why := "it is gone"
	if en, err := e.roots.vm.ReadEnded(name); err == nil {
		why = fmt.Sprintf("%s: %s at %s", en.Cause, en.Reason, en.Time.Local().Format("2006-01-02 15:04:05"))
	}
	fmt.Fprintf(e.stderr, "vm %s is not up (%s); its console log as it was:\n", name, why)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(e.stdout, f)
	return err
}
