package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"lab/vm"
)

// statusRow is one VM in `lab status`.
type statusRow struct {
	Name        string  `json:"name"`
	Profile     string  `json:"profile"`
	State       string  `json:"state"`
	Accelerator string  `json:"accelerator"`
	Clock       string  `json:"clock"`
	Uptime      float64 `json:"uptime_seconds"`
	PID         int     `json:"pid"`
	QEMUPID     int     `json:"qemu_pid"`
	BootSeconds float64 `json:"boot_seconds"`
	Boot        string  `json:"boot"`
	// NIC is the card a peer network attached while a run uses a peer
	// guest, if any.
	NIC *vm.NICState `json:"nic,omitempty"`
}

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
			entries, err := e.roots.vm.List()
			if err != nil {
				return err
			}
			rows := []statusRow{}
			for _, en := range entries {
				r := statusRow{Name: en.Name, State: "stale (supervisor gone; cleaned up)"}
				if st := en.State; st != nil {
					r.Profile, r.Accelerator, r.Clock, r.PID, r.QEMUPID = st.Profile.Name, st.Accel, st.Clock.String(), st.SupervisorPID, st.QEMUPID
					r.BootSeconds, r.Boot = st.BootSeconds, st.Boot
				}
				if !en.Stale && en.State != nil {
					r.State = en.State.Phase
					if h, err := e.roots.vm.Open(en.Name); err == nil {
						if s, err := h.Status(c.Context); err == nil {
							r.State = s.RunState
							r.Uptime = s.Uptime.Seconds()
							r.NIC = s.NIC
						}
					}
				}
				rows = append(rows, r)
			}
			// VMs that died since the last look: said once, with why.
			for _, en := range e.roots.vm.Unreported() {
				rows = append(rows, statusRow{Name: en.Name, Profile: en.Profile,
					State: fmt.Sprintf("died: %s at %s (its console: lab console %s)", en.Reason, en.Time.Local().Format("2006-01-02 15:04:05"), en.Name)})
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
