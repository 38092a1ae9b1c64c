//go:build linux

package plugins

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCountCPUList(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{in: "0\n", want: 1},
		{in: "0-3", want: 4},
		{in: "0-1,4,6-7\n", want: 5},
		{in: "", want: 0},
		{in: "3-1", wantErr: true},
		{in: "a-b", wantErr: true},
	}
	for _, tt := range tests {
		got, err := countCPUList(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("countCPUList(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCollectEnvFS(t *testing.T) {
	got := collectEnvFS(os.DirFS("testdata/env"))
	want := GuestEnv{
		CPUModel: "Intel(R) Celeron(R) CPU 2.00GHz", CPUFamily: 15, CPUModelNum: 2,
		OnlineCPUs: 1, PresentCPUs: 2, MemTotalKB: 250712,
	}
	if got != want {
		t.Errorf("collectEnvFS = %+v, want %+v", got, want)
	}
}

func TestCollectEnvOnHost(t *testing.T) {
	env := CollectEnv()
	if env.KernelRelease == "" || !strings.HasPrefix(env.Uname, "Linux "+env.KernelRelease) {
		t.Errorf("Uname = %q, KernelRelease = %q; want \"Linux <release> ...\"", env.Uname, env.KernelRelease)
	}
	if env.OnlineCPUs < 1 || env.PresentCPUs < env.OnlineCPUs || env.MemTotalKB <= 0 {
		t.Errorf("env = %+v: want CPUs and memory", env)
	}
	if env.StackKB == 0 || env.StackKB < -1 {
		t.Errorf("StackKB = %d, want -1 or a size", env.StackKB)
	}
}

func TestWorkloadDir(t *testing.T) {
	t.Setenv(WorkloadDirEnv, "/somewhere/workload")
	if got, err := WorkloadDir(); err != nil || got != "/somewhere/workload" {
		t.Errorf("WorkloadDir() = %q, %v; want the env value", got, err)
	}
	t.Setenv(WorkloadDirEnv, "")
	exe, _ := os.Executable()
	if got, err := WorkloadDir(); err != nil || got != filepath.Join(filepath.Dir(exe), "workload") {
		t.Errorf("WorkloadDir() = %q, %v; want workload/ next to %s", got, err, exe)
	}
}

// script writes a shell script standing in for a workload.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "workload.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunWorkload(t *testing.T) {
	path := script(t, `
echo "# a comment"
echo "fork_wait_us 87.5 us"
echo
echo "libc glibc-2.36"
echo "real_s 0.25 s"
echo "n $1"
`)
	res, err := RunWorkload(context.Background(), path, "200")
	if err != nil {
		t.Fatalf("RunWorkload: %v", err)
	}
	want := map[string]WorkloadValue{
		"fork_wait_us": {"87.5", "us"}, "libc": {"glibc-2.36", ""},
		"real_s": {"0.25", "s"}, "n": {"200", ""},
	}
	if !maps.Equal(res.Values, want) {
		t.Errorf("Values = %v, want %v", res.Values, want)
	}
	if f, err := res.Float("fork_wait_us"); err != nil || f != 87.5 {
		t.Errorf("Float(fork_wait_us) = %v, %v; want 87.5", f, err)
	}
	if _, err := res.Float("libc"); err == nil {
		t.Error("Float(libc): want an error for a non-number")
	}
	if _, err := res.Float("missing"); err == nil {
		t.Error("Float(missing): want an error")
	}
	if got := res.Libc(); got != "glibc-2.36" {
		t.Errorf("Libc() = %q, want glibc-2.36", got)
	}
	if res.RealS != 0.25 {
		t.Errorf("RealS = %v, want the workload's own 0.25", res.RealS)
	}
	if res.WallS <= 0 {
		t.Errorf("WallS = %v, want > 0", res.WallS)
	}
}

func TestRunWorkloadRusage(t *testing.T) {
	// A child burning CPU: wait4's rusage must include waited-for children.
	path := script(t, `i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo "done 1"`)
	res, err := RunWorkload(context.Background(), path)
	if err != nil {
		t.Fatalf("RunWorkload: %v", err)
	}
	if res.UserS+res.SysS <= 0 || res.MaxRSSKB <= 0 {
		t.Errorf("user %v s, sys %v s, maxrss %d KiB; want CPU time and memory", res.UserS, res.SysS, res.MaxRSSKB)
	}
	if res.RealS != res.WallS {
		t.Errorf("RealS = %v, want WallS %v when the workload prints no real_s", res.RealS, res.WallS)
	}
}

func TestRunWorkloadFailures(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr []string
	}{
		{
			name:    "exit status",
			body:    "echo 'ratio 3 x'; for i in $(seq 1 500); do echo \"noise line $i\" >&2; done; echo 'forktime: fork: Resource temporarily unavailable' >&2; exit 3",
			wantErr: []string{"workload.sh exited with status 3", "fork: Resource temporarily unavailable", "noise line 500"},
		},
		{
			name:    "signal",
			body:    "echo 'about to crash' >&2; kill -SEGV $$",
			wantErr: []string{"workload.sh killed by signal SIGSEGV", "about to crash"},
		},
		{name: "no stderr", body: "exit 1", wantErr: []string{"status 1", "(no stderr)"}},
		{name: "malformed output", body: "echo 'this is not key value'", wantErr: []string{"want `key value [unit]`"}},
		{name: "duplicate key", body: "echo 'n 1'; echo 'n 2'", wantErr: []string{`key "n" printed twice`}},
		{name: "bad real_s", body: "echo 'real_s soon'", wantErr: []string{`"soon" is not a number`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := RunWorkload(context.Background(), script(t, tt.body))
			if err == nil {
				t.Fatalf("RunWorkload succeeded, want an error")
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if len(err.Error()) > stderrTailBytes+200 {
				t.Errorf("error is %d bytes long, want the stderr tail only", len(err.Error()))
			}
			if res == nil {
				t.Error("want the result alongside the error")
			}
		})
	}
	if _, err := RunWorkload(context.Background(), filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("RunWorkload(absent binary) succeeded, want an error")
	}
}

// Cancelling must kill the whole process group, children included, and
// return promptly.
func TestRunWorkloadCancelKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	path := script(t, "sleep 300 & echo $! > "+pidFile+"; wait")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := RunWorkload(ctx, path)
		done <- err
	}()
	child := waitForPID(t, pidFile)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("RunWorkload error = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunWorkload did not return within 10s of cancel")
	}
	deadline := time.Now().Add(10 * time.Second)
	for alive(child) {
		if time.Now().After(deadline) {
			t.Fatalf("workload's child %d still alive after cancel", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitForPID(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("workload did not write %s", file)
	return 0
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// An OOM kill during a workload (the kernel's oom_kill count went up) is
// said plainly, whether the workload died of it or carried on: its
// figures are not of the run asked for. The count is faked here; the
// threadbench integration tests run a guest out of memory for real.
func TestRunWorkloadReportsOOM(t *testing.T) {
	vmstat := filepath.Join(t.TempDir(), "vmstat")
	old := vmstatPath
	vmstatPath = vmstat
	t.Cleanup(func() { vmstatPath = old })
	for _, tt := range []struct {
		name, body string
		want       []string
	}{
		{"killed", `echo "oom_kill 3" > ` + vmstat + `; kill -9 $$`, []string{"killed by signal SIGKILL", "ran out of memory", "killed 2 process(es)"}},
		{"carried on", `echo "oom_kill 2" > ` + vmstat + `; echo "n 1"`, []string{"ran out of memory", "killed 1 process(es)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(vmstat, []byte("nr_free_pages 1\noom_kill 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := RunWorkload(context.Background(), script(t, tt.body))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	// No OOM kill: no error.
	if err := os.WriteFile(vmstat, []byte("oom_kill 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RunWorkload(context.Background(), script(t, `echo "n 1"`)); err != nil {
		t.Errorf("without an OOM kill: %v", err)
	}
}

// A workload does not inherit the plugin's oom_score_adj (protectFromOOM
// lowers it to -900 in the guest): it runs with 0, as any program would.
// Here the test raises its own (lowering needs a privilege this host may
// not grant), and the workload must still get 0.
func TestRunWorkloadOOMScore(t *testing.T) {
	const self = "/proc/self/oom_score_adj"
	before, err := os.ReadFile(self)
	if err != nil {
		t.Fatalf("%s: %v", self, err)
	}
	if err := os.WriteFile(self, []byte("500"), 0); err != nil {
		t.Fatalf("raising our oom_score_adj: %v", err)
	}
	t.Cleanup(func() { _ = os.WriteFile(self, before, 0) })
	// The adjustment is written just after the exec: read it a moment on.
	res, err := RunWorkload(context.Background(), script(t, `sleep 0.3; echo "adj $(cat /proc/self/oom_score_adj)"`))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Values["adj"].Text; got != "0" {
		t.Errorf("the workload's oom_score_adj is %s, want 0", got)
	}
}
