package vm

// Integration test of the peer network at the Machine level: two real
// celeron-2.4 guests in this process, as their supervisors would run them.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lab/images"
	"lab/internal/labtest"
	"lab/vm/link"
)

// itNICMachine boots celeron-2.4 as name with the configuration's booted
// snapshot in the cache (saved by this boot if there is none yet).
func itNICMachine(t *testing.T, root Root, name string) *Machine {
	t.Helper()
	ctx := testCtx(t, 3*time.Minute)
	cfg, err := Prepare(ctx, UpOptions{Root: root, Cache: labtest.Cache(), LibDirs: images.LibDirs(labtest.LibDir()), Name: name, Profile: itProfile(t, "celeron-2.4"), Accel: "tcg", Clock: Clock{Mode: "host"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := root.Dir(name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	m, err := Start(ctx, dir, *cfg, StartOptions{Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Kill)
	t.Logf("%s up in %.2fs (%s)", name, m.Ready.Sub(m.Started).Seconds(), m.Boot)
	return m
}

// itSh runs a shell script in m's guest and returns its stdout.
func itSh(t *testing.T, m *Machine, script string, args ...string) string {
	t.Helper()
	out, err := guestSh(testCtx(t, time.Minute), m.Client, script, args...)
	if err != nil {
		t.Fatalf("machine %s: %q: %v", m.cfg.Name, script, err)
	}
	return out
}

// hardware is what a guest's network hardware looks like from inside: its
// interfaces and whether virtio_net is loaded.
const hardware = `ls /sys/class/net | tr '\n' ' '; grep -q '^virtio_net ' /proc/modules && echo virtio_net || echo no-virtio_net`

// inetSockets lists the sockets of process pid that are not unix sockets
// (TCP, UDP, raw or packet sockets in /proc/net), as "file: inode".
func inetSockets(t *testing.T, pid int) []string {
	t.Helper()
	fds, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/fd/*")
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	if len(inodes) == 0 {
		t.Fatalf("qemu (pid %d) has no sockets at all: not the process it should be", pid)
	}
	var found []string
	for _, f := range []string{"tcp", "tcp6", "udp", "udp6", "raw", "raw6", "packet"} {
		b, err := os.ReadFile("/proc/net/" + f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			for _, col := range fields {
				if inodes[col] && col != "0" {
					found = append(found, f+": "+col)
				}
			}
		}
	}
	return found
}

// TestIntegrationNIC: two guests (the second restored from the booted
// snapshot) get a NIC each, hot-plugged; the first reaches the second at
// 169.254.0.2 by ping and by TCP, no other address appears on the cards
// (no IPv6), QEMU opens no socket but unix ones; after detaching, each
// guest has the hardware it had before (lo only, virtio_net unloaded) and
// the sockets are gone. Twice, as a VM that stays up would go through it.
func TestIntegrationNIC(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	labtest.RequireBoot(t, p)
	labtest.LockBoots(t)
	root := itRoot(t)
	a := itNICMachine(t, root, "nica")
	b := itNICMachine(t, root, "nicb")
	if b.Boot != "restored from snapshot" {
		t.Errorf("second guest: boot %q, want restored from snapshot (the first saved or restored it)", b.Boot)
	}
	before := map[*Machine]string{a: itSh(t, a, hardware), b: itSh(t, b, hardware)}
	for m, hw := range before {
		if hw != "lo no-virtio_net\n" {
			t.Errorf("%s before the nic: %q, want lo only and no virtio_net", m.cfg.Name, hw)
		}
	}
	sockA, sockB := filepath.Join(a.dir, NetSock), filepath.Join(b.dir, NetSock)
	specs := map[*Machine]NICSpec{
		a: {MAC: "02:6c:61:62:00:01", Addr: "169.254.0.1/16", Local: sockA, Remote: sockB},
		b: {MAC: "02:6c:61:62:00:02", Addr: "169.254.0.2/16", Local: sockB, Remote: sockA},
	}
	for round := 1; round <= 2; round++ {
		ctx := testCtx(t, 2*time.Minute)
		start := time.Now()
		var mu sync.Mutex
		errs := map[string]error{}
		var wg sync.WaitGroup
		for _, m := range []*Machine{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := m.AttachNIC(ctx, specs[m])
				mu.Lock()
				defer mu.Unlock()
				errs[m.cfg.Name] = err
				if err == nil {
					t.Logf("round %d: %s: %s attached: plugged %.3fs, configured %.3fs", round, m.cfg.Name, st.Iface, st.PlugSeconds, st.ConfigSeconds)
				}
			}()
		}
		wg.Wait()
		for name, err := range errs {
			if err != nil {
				t.Fatalf("round %d: AttachNIC(%s): %v\nconsole:\n%s", round, name, err, ConsoleTail(root.Dir(name), 20))
			}
		}
		attached := time.Since(start)
		if _, err := guestSh(ctx, a.Client, pingScript, "169.254.0.2"); err != nil {
			t.Fatalf("round %d: nica cannot ping nicb: %v", round, err)
		}
		t.Logf("round %d: both attached in %.3fs, nicb answered nica's ping %.3fs later", round, attached.Seconds(), (time.Since(start) - attached).Seconds())

		// TCP, as netbench's clients will use it.
		var got bytes.Buffer
		srv, err := b.Client.Start(ctx, &link.ExecRequest{Argv: []string{"/bin/sh", "-c", "exec nc -l -p 7070"}, KillGroup: true}, link.StartOptions{Stdout: &got})
		if err != nil {
			t.Fatal(err)
		}
		sent := false
		for i := 0; i < 20 && !sent; i++ {
			_, err := guestSh(ctx, a.Client, `echo hello-from-a | nc -w 2 169.254.0.2 7070`)
			sent = err == nil
			if !sent {
				time.Sleep(100 * time.Millisecond) // the listener is not up yet
			}
		}
		select {
		case <-srv.Done():
		case <-time.After(10 * time.Second):
			srv.Close()
		}
		if strings.TrimSpace(got.String()) != "hello-from-a" {
			t.Errorf("round %d: nicb's listener got %q over TCP, want hello-from-a", round, got.String())
		}

		for _, m := range []*Machine{a, b} {
			st := m.NIC()
			if st == nil || st.Iface == "" {
				t.Fatalf("round %d: %s: NIC() = %+v after attaching", round, m.cfg.Name, st)
			}
			addrs := itSh(t, m, `ip -4 -o addr show dev "$1" | awk '{print $4}'; grep " $1\$" /proc/net/if_inet6 || true`, st.Iface)
			if want := specs[m].Addr + "\n"; addrs != want {
				t.Errorf("round %d: %s: addresses on %s %q, want only %q (no IPv6)", round, m.cfg.Name, st.Iface, addrs, want)
			}
			if socks := inetSockets(t, m.Pid()); len(socks) > 0 {
				t.Errorf("round %d: %s: qemu has sockets outside the unix domain: %v", round, m.cfg.Name, socks)
			}
		}

		start = time.Now()
		for _, m := range []*Machine{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := m.DetachNIC(ctx)
				mu.Lock()
				defer mu.Unlock()
				errs[m.cfg.Name] = err
			}()
		}
		wg.Wait()
		for name, err := range errs {
			if err != nil {
				t.Fatalf("round %d: DetachNIC(%s): %v", round, name, err)
			}
		}
		t.Logf("round %d: both detached in %.3fs", round, time.Since(start).Seconds())
		for m, hw := range before {
			if got := itSh(t, m, hardware); got != hw {
				t.Errorf("round %d: %s after detaching: %q, want %q as before", round, m.cfg.Name, got, hw)
			}
			if m.NIC() != nil {
				t.Errorf("round %d: %s: NIC() = %+v after detaching", round, m.cfg.Name, m.NIC())
			}
			if _, err := os.Lstat(specs[m].Local); !os.IsNotExist(err) {
				t.Errorf("round %d: %s: socket %s still there (%v)", round, m.cfg.Name, specs[m].Local, err)
			}
		}
	}
	// Detaching with no NIC does nothing.
	if err := a.DetachNIC(context.Background()); err != nil {
		t.Errorf("DetachNIC without a nic = %v", err)
	}
}
