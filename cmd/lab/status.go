package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"
)

func statusCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "list VMs: name, profile, state, accelerator, clock, uptime, pid",
		Description: "Shows every VM that is up. State left behind by a supervisor that died\n" +
			"(killed, host crash) is noticed here, reported as stale and cleaned up. A VM\n" +
			"whose QEMU died (killed, crashed) is listed once as died, with the reason;\n" +
			"`lab console NAME` still shows its console log.\n\n" +
			"Example:\n   lab status --json",
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			rows, err := e.roots.vm.Summaries(c.Context)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(e.stdout, rows)
			}
			if len(rows) == 0 {
				fmt.Fprintln(e.stdout, "no VMs are up; start one with `lab up PROFILE`")
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPROFILE\tSTATE\tACCEL\tCLOCK\tUPTIME\tPID\tBOOT\tNETWORK")
			for _, r := range rows {
				up := "-"
				if r.Uptime > 0 {
					up = time.Duration(r.Uptime * float64(time.Second)).Round(time.Second).String()
				}
				net := "-"
				if r.NIC != nil {
					net = fmt.Sprintf("%s %s (peer network)", r.NIC.Iface, r.NIC.Addr)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.Name, r.Profile, r.State, r.Accelerator, r.Clock, up, r.PID, r.Boot, net)
			}
			return tw.Flush()
		},
	}
}
