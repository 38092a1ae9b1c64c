package vm

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/digitalocean/go-qemu/qmp"
)

// qmpRun sends one raw QMP command. go-qemu's generated raw API predates
// QEMU 7, so commands are sent as raw JSON.
func qmpRun(sock, cmd string) ([]byte, error) {
	mon, err := qmp.NewSocketMonitor("unix", sock, 2*time.Second)
	if err != nil {
		return nil, fmt.Errorf("qmp %s: %w", sock, err)
	}
	if err := mon.Connect(); err != nil {
		return nil, fmt.Errorf("qmp %s: %w", sock, err)
	}
	defer mon.Disconnect()
	return mon.Run([]byte(cmd))
}

// QMPStatus returns the VM run state QEMU reports ("running", "paused"...).
func QMPStatus(sock string) (string, error) {
	out, err := qmpRun(sock, `{"execute":"query-status"}`)
	if err != nil {
		return "", err
	}
	var resp struct {
		Return struct {
			Status string `json:"status"`
		} `json:"return"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return "", fmt.Errorf("qmp query-status: %w", err)
	}
	return resp.Return.Status, nil
}

// QMPQuit asks QEMU to exit at once.
func QMPQuit(sock string) error {
	_, err := qmpRun(sock, `{"execute":"quit"}`)
	return err
}
