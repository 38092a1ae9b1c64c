package main

// Programs the agent starts get default signal dispositions, whatever the
// agent inherited: `make test` under nohup, or as a background job of a
// non-interactive shell, starts the agent's tests with SIGHUP or SIGINT
// ignored, and a guest program must still die of the signals lab exec
// forwards.

import (
	"bufio"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lab/vm/link"
)

// ignoredEnv marks the re-run of this test binary with SIGINT and SIGHUP
// ignored.
const ignoredEnv = "LAB_AGENT_TEST_SIGNALS_IGNORED"

// ignoredAtStart: whether this test process started with SIGINT ignored,
// read before any test starts a program (the agent then catches it).
var ignoredAtStart = signal.Ignored(syscall.SIGINT)

// TestChildSignalDefaults: a program the agent starts has SIGINT and
// SIGHUP at their defaults and nothing blocked (SigIgn and SigBlk of
// /proc/PID/status). Run again with the two ignored in the test process
// (as nohup leaves them), together with the tests that signal programs.
func TestChildSignalDefaults(t *testing.T) {
	if os.Getenv(ignoredEnv) != "" && !ignoredAtStart {
		t.Fatal("the re-run was started with SIGINT ignored, but it is not")
	}
	l := connect(t, newTestAgent(t))
	var stdout syncBuffer
	p := start(t, l, &link.ExecRequest{Argv: []string{"cat", "/proc/self/status"}}, link.StartOptions{Stdout: &stdout})
	if ex, err := waitExit(t, p, 10*time.Second); err != nil || ex.Code != 0 {
		t.Fatalf("cat /proc/self/status: exit %+v, %v", ex, err)
	}
	masks := map[string]uint64{}
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && (k == "SigIgn" || k == "SigBlk") {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			masks[k] = n
		}
	}
	if len(masks) != 2 {
		t.Fatalf("no SigIgn and SigBlk in the program's /proc/self/status:\n%s", stdout.String())
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT} {
		bit := uint64(1) << (sig - 1)
		if masks["SigIgn"]&bit != 0 {
			t.Errorf("the program started with %v ignored (SigIgn %016x), want the default", sig, masks["SigIgn"])
		}
	}
	if masks["SigBlk"] != 0 {
		t.Errorf("the program started with signals blocked (SigBlk %016x), want none", masks["SigBlk"])
	}
	if os.Getenv(ignoredEnv) != "" {
		return
	}

	// The re-run: this binary, started by a shell that ignores SIGINT and
	// SIGHUP and execs it (what nohup and a background job do). Started by
	// the test reaper, which would take the status of any other child.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	argv := []string{"sh", "-c", `trap "" INT HUP; exec "$0" "$@"`, exe,
		"-test.run", "^(TestChildSignalDefaults|TestExecSignal|TestSignalWithFloodedStdin)$", "-test.v"}
	sh, err := findSh()
	if err != nil {
		t.Fatal(err)
	}
	proc, waitCh, err := testReaper.start(sh, argv, &os.ProcAttr{
		Env:   append(os.Environ(), ignoredEnv+"=1"),
		Files: []*os.File{nil, out, out},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	select {
	case w := <-waitCh:
		ws = syscall.WaitStatus(w)
	case <-time.After(60 * time.Second):
		_ = proc.Kill()
		ws = syscall.WaitStatus(<-waitCh)
	}
	proc.Release()
	if !ws.Exited() || ws.ExitStatus() != 0 {
		b, _ := os.ReadFile(out.Name())
		t.Errorf("with SIGINT and SIGHUP ignored in the test process, the signal tests failed (%v):\n%s", ws, b)
	}
}

func findSh() (string, error) {
	for _, p := range []string{"/bin/sh", "/usr/bin/sh"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}
