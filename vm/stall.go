package vm

// A cold boot that stalls before /init. Under TCG, two-CPU guests
// (rockhopper-2.4, rockhopper-2.4-linux-2.6.32) were seen, rarely, to stop
// printing at 0.41 s of guest time and never reach /init: twice in CI, never
// in 218 cold boots here (33 alone, 25 beside three busy loops, 160 as four
// boot loops at once, 2.6.32 among them). The guest is not measured yet, so a
// stalled boot is ended early, what its vCPUs were doing is kept, and the
// machine is booted cold once more, saying so.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// stallTimeoutTCG is how long a cold boot under TCG may go without the
// agent's first console line before it counts as stalled: boots reach it in
// 3-14 s here, 4 at once on 2 cores included.
const stallTimeoutTCG = 45 * time.Second

// agentConsoleMark starts every line the agent prints on the console; the
// first one means the kernel reached /init.
const agentConsoleMark = "lab-agent:"

// stalled says whether a cold boot has stalled before /init: StallTimeout
// has passed since QEMU started and the console shows nothing from the
// agent.
func (m *Machine) stalled(console string) bool {
	return !m.restore && m.cfg.StallTimeout > 0 && time.Since(m.Started) >= m.cfg.StallTimeout &&
		!strings.Contains(console, agentConsoleMark)
}

// stallError describes a stalled boot: how long it waited, the console's
// last line and what the vCPUs were doing (sampled over QMP).
func (m *Machine) stallError(ctx context.Context, console string) *BootError {
	last := "nothing"
	if l := lastConsoleLine(console); l != "" {
		last = fmt.Sprintf("%q", l)
	}
	reason := fmt.Sprintf("the kernel did not reach /init within %v of a cold boot (the agent printed nothing; the console's last line: %s)",
		m.cfg.StallTimeout, last)
	return &BootError{Name: m.cfg.Name, Reason: reason, Console: m.ConsoleTail(15), Stalled: true, VCPUs: m.sampleVCPUs(ctx)}
}

// sampleVCPUs reads every vCPU's instruction pointer and halt state three
// times, 200 ms apart, within 5 s; on failure it says why. It uses the
// boot's QMP connection and never dials one: a dial still retrying after
// this QEMU is killed could reach the next boot's socket in the same
// directory, and QEMU serves one QMP client at a time.
func (m *Machine) sampleVCPUs(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res := make(chan string, 1)
	go func() { res <- m.readVCPUs(ctx) }()
	select {
	case s := <-res:
		return s
	case <-ctx.Done():
		return "vCPU registers unavailable: QMP did not answer within 5 s"
	}
}

func (m *Machine) readVCPUs(ctx context.Context) string {
	var samples []string
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		q, err := m.openMonitor()
		if err == nil {
			var out string
			if out, err = q.HMP(ctx, "info registers -a"); err == nil {
				samples = append(samples, out)
				continue
			}
		}
		if len(samples) == 0 {
			return fmt.Sprintf("vCPU registers unavailable: %v", err)
		}
		break
	}
	m.logf("machine %s: stalled boot, last vCPU registers:\n%s", m.cfg.Name, samples[len(samples)-1])
	return summarizeVCPUs(samples)
}

// openMonitor is the machine's QMP connection if one is open and not being
// dialled.
func (m *Machine) openMonitor() (*qmpMonitor, error) {
	if !m.qmpMu.TryLock() {
		return nil, errors.New("QMP is still being connected")
	}
	defer m.qmpMu.Unlock()
	if m.qmp == nil {
		return nil, errors.New("QMP was never connected")
	}
	select {
	case <-m.qmp.Closed():
		return nil, errors.New("the QMP connection is closed")
	default:
		return m.qmp, nil
	}
}

var (
	cpuHeadRE = regexp.MustCompile(`(?m)^CPU#(\d+)`)
	ipRE      = regexp.MustCompile(`\b[ER]IP=([0-9a-fA-F]+)`)
	hltRE     = regexp.MustCompile(`\bHLT=(\d)`)
)

// summarizeVCPUs turns samples of HMP `info registers -a` into one line
// per vCPU: its distinct instruction pointers in order and whether the
// last sample found it halted, e.g. "vCPU 0: halted, EIP c1002b4e; vCPU 1:
// running, EIP c10b1a20 c10b1a24".
func summarizeVCPUs(samples []string) string {
	type cpu struct {
		ips    []string
		halted bool
	}
	cpus := map[int]*cpu{}
	for _, s := range samples {
		heads := cpuHeadRE.FindAllStringSubmatchIndex(s, -1)
		for i, h := range heads {
			end := len(s)
			if i+1 < len(heads) {
				end = heads[i+1][0]
			}
			block := s[h[0]:end]
			var n int
			fmt.Sscan(s[h[2]:h[3]], &n)
			c := cpus[n]
			if c == nil {
				c = &cpu{}
				cpus[n] = c
			}
			if ip := ipRE.FindStringSubmatch(block); ip != nil {
				v := strings.ToLower(strings.TrimLeft(ip[1], "0"))
				if v == "" {
					v = "0"
				}
				if len(c.ips) == 0 || c.ips[len(c.ips)-1] != v {
					c.ips = append(c.ips, v)
				}
			}
			if h := hltRE.FindStringSubmatch(block); h != nil {
				c.halted = h[1] == "1"
			}
		}
	}
	if len(cpus) == 0 {
		return "vCPU registers unreadable"
	}
	ids := make([]int, 0, len(cpus))
	for n := range cpus {
		ids = append(ids, n)
	}
	sort.Ints(ids)
	var parts []string
	for _, n := range ids {
		c := cpus[n]
		state := "running"
		if c.halted {
			state = "halted"
		}
		ip := "unknown"
		if len(c.ips) > 0 {
			ip = strings.Join(c.ips, " ")
		}
		parts = append(parts, fmt.Sprintf("vCPU %d: %s, IP %s", n, state, ip))
	}
	return strings.Join(parts, "; ")
}

// lastConsoleLine is the console's last non-empty line, at most 160 bytes.
func lastConsoleLine(console string) string {
	lines := strings.Split(strings.TrimRight(console, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			if len(l) > 160 {
				l = l[:160] + "..."
			}
			return l
		}
	}
	return ""
}
