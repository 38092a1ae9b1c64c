package vm

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveQMPLines is a QMP server on a unix socket that answers every
// human-monitor-command with answer and, straight after it, burst events:
// the shape of QEMU's reply to "info registers -a" on a guest that is
// busy emitting events.
func serveQMPLines(t *testing.T, answer string, burst int) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "qmp.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		w := bufio.NewWriter(c)
		w.WriteString(`{"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}, "package": ""}, "capabilities": []}}` + "\n")
		w.Flush()
		dec := json.NewDecoder(c) // commands come without newlines
		for {
			var cmd struct {
				Execute string `json:"execute"`
			}
			if dec.Decode(&cmd) != nil {
				return
			}
			if cmd.Execute != "human-monitor-command" {
				w.WriteString(`{"return": {}}` + "\n")
				w.Flush()
				continue
			}
			b, _ := json.Marshal(map[string]string{"return": answer})
			w.Write(append(b, '\n'))
			for i := 0; i < burst; i++ {
				w.WriteString(`{"timestamp": {"seconds": 1, "microseconds": 2}, "event": "RTC_CHANGE", "data": {"offset": 0, "qom-path": "/machine/unattached/device[12]/rtc"}}` + "\n")
			}
			w.Flush()
		}
	}()
	return sock
}

// TestQMPAnswerSurvivesNextLine: an answer is read whole even when QEMU
// sends more lines right behind it. go-qemu's SocketMonitor hands Run the
// bufio.Scanner's buffer, which reading the next line overwrites (go-qemu
// issue 226): under the race detector CI failed in
// TestIntegrationBootStallBothTimes on a 4 KB "info registers -a".
func TestQMPAnswerSurvivesNextLine(t *testing.T) {
	answer := strings.Repeat("EIP=0000fff0 EFL=00000002 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=0\r\n", 80)
	sock := serveQMPLines(t, answer, 40)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	q, err := dialQMP(ctx, "t", sock, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for i := 0; i < 50; i++ {
		got, err := q.HMP(ctx, "info registers -a")
		if err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
		if got != answer {
			t.Fatalf("command %d: the answer came back altered (%d bytes, want %d)", i, len(got), len(answer))
		}
	}
}
