package vm

import (
	"strings"
	"testing"
	"time"
)

// Two samples of HMP `info registers -a` as QEMU 7.2 prints them for a
// two-CPU i386 guest (trimmed to the lines read).
const hmpSample1 = `CPU#0
EAX=00000000 EBX=c1b2c000 ECX=00000001 EDX=00000000
EIP=c1002b4e EFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=1
CPU#1
EAX=00000001 EBX=00000000 ECX=00000000 EDX=00000000
EIP=c10b1a20 EFL=00000202 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=0
`
const hmpSample2 = `CPU#0
EIP=c1002b4e EFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=1
CPU#1
EIP=c10b1a24 EFL=00000202 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=0
`

func TestSummarizeVCPUs(t *testing.T) {
	for _, c := range []struct {
		name    string
		samples []string
		want    string
	}{
		{"one sample", []string{hmpSample1}, "vCPU 0: halted, IP c1002b4e; vCPU 1: running, IP c10b1a20"},
		{"distinct IPs in order, repeats once", []string{hmpSample1, hmpSample2, hmpSample2},
			"vCPU 0: halted, IP c1002b4e; vCPU 1: running, IP c10b1a20 c10b1a24"},
		{"x86_64 RIP, reset vector", []string{"CPU#0\nRIP=000000000000fff0 RFL=00000002 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=0\n"},
			"vCPU 0: running, IP fff0"},
		{"nothing readable", []string{"Error: no CPU"}, "vCPU registers unreadable"},
	} {
		if got := summarizeVCPUs(c.samples); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// stalled holds for a cold boot past its stall timeout whose agent has
// printed nothing; never for a restore, a boot without a stall timeout,
// one still within it, or one whose agent printed.
func TestStalled(t *testing.T) {
	long := time.Now().Add(-time.Minute)
	kernelOnly := "[    0.410000] Failed to access perfctr msr (MSR c2 is 0)\n"
	agent := kernelOnly + "lab-agent: ready for the host (guest uptime 2.22s at /init)\n"
	for _, c := range []struct {
		name    string
		m       *Machine
		console string
		want    bool
	}{
		{"cold, past the timeout, kernel lines only", &Machine{cfg: Config{StallTimeout: 45 * time.Second}, Started: long}, kernelOnly, true},
		{"cold, past the timeout, empty console", &Machine{cfg: Config{StallTimeout: 45 * time.Second}, Started: long}, "", true},
		{"the agent printed", &Machine{cfg: Config{StallTimeout: 45 * time.Second}, Started: long}, agent, false},
		{"within the timeout", &Machine{cfg: Config{StallTimeout: 45 * time.Second}, Started: time.Now()}, kernelOnly, false},
		{"no stall timeout", &Machine{Started: long}, kernelOnly, false},
		{"a restore", &Machine{cfg: Config{StallTimeout: 45 * time.Second}, Started: long, restore: true}, "", false},
	} {
		if got := c.m.stalled(c.console); got != c.want {
			t.Errorf("%s: stalled = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestStallReasonNamesLastLine(t *testing.T) {
	if got := lastConsoleLine("a\n[ 0.41] Failed to access perfctr msr\n\n"); got != "[ 0.41] Failed to access perfctr msr" {
		t.Errorf("lastConsoleLine = %q", got)
	}
	if got := lastConsoleLine(strings.Repeat("x", 300)); len(got) != 163 {
		t.Errorf("lastConsoleLine of 300 bytes: %d bytes, want 160 and ...", len(got))
	}
}
