package vm

import (
	"context"
	"fmt"
)

// Summary is one VM as `lab status` lists it.
type Summary struct {
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
	NIC *NICState `json:"nic,omitempty"`
}

// Summaries lists every VM of r (List: stale ones are cleaned up and
// said to be), asking each live one's supervisor its run state, then the
// VMs that died since the last look (Unreported), each said once with
// why.
func (r Root) Summaries(ctx context.Context) ([]Summary, error) {
	entries, err := r.List()
	if err != nil {
		return nil, err
	}
	rows := []Summary{}
	for _, en := range entries {
		s := Summary{Name: en.Name, State: "stale (supervisor gone; cleaned up)"}
		if st := en.State; st != nil {
			s.Profile, s.Accelerator, s.Clock, s.PID, s.QEMUPID = st.Profile.Name, st.Accel, st.Clock.String(), st.SupervisorPID, st.QEMUPID
			s.BootSeconds, s.Boot = st.BootSeconds, st.Boot
		}
		if !en.Stale && en.State != nil {
			s.State = en.State.Phase
			if h, err := r.Open(en.Name); err == nil {
				if live, err := h.Status(ctx); err == nil {
					s.State = live.RunState
					s.Uptime = live.Uptime.Seconds()
					s.NIC = live.NIC
				}
			}
		}
		rows = append(rows, s)
	}
	for _, en := range r.Unreported() {
		rows = append(rows, Summary{Name: en.Name, Profile: en.Profile,
			State: fmt.Sprintf("died: %s at %s (its console: lab console %s)", en.Reason, en.Time.Local().Format("2006-01-02 15:04:05"), en.Name)})
	}
	return rows, nil
}
