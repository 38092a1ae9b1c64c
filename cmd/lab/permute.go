package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// permute moves a command's flags in front of its positional arguments,
// so `lab run forkbench -p n=500` works like `lab run -p n=500 forkbench`
// (urfave/cli v2 stops parsing flags at the first positional argument).
// Everything from "--" on is left alone, and so is `lab exec`, whose
// command line belongs to the guest.
func permute(cmds []*cli.Command, args []string) []string {
	if len(args) < 3 {
		return args
	}
	cmd := findCommand(cmds, args[1])
	if cmd == nil || cmd.Name == "exec" {
		return args
	}
	i := 2
	if sub := findCommand(cmd.Subcommands, args[i]); sub != nil {
		cmd = sub
		i++
	}
	var flags, pos []string
	rest := args[i:]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			pos = append(pos, rest[j:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			if !strings.Contains(a, "=") && takesValue(cmd, strings.TrimLeft(a, "-")) && j+1 < len(rest) {
				flags = append(flags, rest[j+1])
				j++
			}
			continue
		}
		pos = append(pos, a)
	}
	out := append([]string{}, args[:i]...)
	out = append(out, flags...)
	return append(out, pos...)
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

func takesValue(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}
