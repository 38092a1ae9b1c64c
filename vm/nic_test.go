package vm

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
)

func goodNIC() NICSpec {
	return NICSpec{MAC: "02:6c:61:62:00:01", Addr: "169.254.0.1/16", Local: "/s/a/net.sock", Remote: "/s/b/net.sock"}
}

func TestNICSpecCheck(t *testing.T) {
	long := "/" + strings.Repeat("d", 100) + "/net.sock"
	for _, c := range []struct {
		name string
		edit func(*NICSpec)
		want string // "" for no error
	}{
		{"good", func(*NICSpec) {}, ""},
		{"a longer prefix", func(s *NICSpec) { s.Addr = "169.254.7.9/24" }, ""},
		{"upper-case mac", func(s *NICSpec) { s.MAC = "02:6C:61:62:00:01" }, ""},
		{"routable address", func(s *NICSpec) { s.Addr = "10.0.0.1/16" }, "must lie in 169.254.0.0/16"},
		{"prefix reaching out", func(s *NICSpec) { s.Addr = "169.254.0.1/8" }, "must lie in 169.254.0.0/16"},
		{"ipv6", func(s *NICSpec) { s.Addr = "fe80::1/64" }, "must lie in 169.254.0.0/16"},
		{"no prefix", func(s *NICSpec) { s.Addr = "169.254.0.1" }, "want ADDRESS/PREFIX"},
		{"network address", func(s *NICSpec) { s.Addr = "169.254.0.0/16" }, "network's own or its broadcast"},
		{"broadcast address", func(s *NICSpec) { s.Addr = "169.254.255.255/16" }, "network's own or its broadcast"},
		{"multicast mac", func(s *NICSpec) { s.MAC = "03:6c:61:62:00:01" }, "unicast, locally administered"},
		{"qemu's own prefix", func(s *NICSpec) { s.MAC = "52:54:00:12:34:56" }, ""}, // 0x52 has the local bit
		{"vendor mac", func(s *NICSpec) { s.MAC = "00:16:3e:00:00:01" }, "unicast, locally administered"},
		{"bad mac", func(s *NICSpec) { s.MAC = "02:6c" }, "six hex bytes"},
		{"long mac", func(s *NICSpec) { s.MAC = "02:00:00:00:00:00:00:01" }, "six hex bytes"},
		{"relative socket", func(s *NICSpec) { s.Local = "net.sock" }, "absolute path"},
		{"socket path too long", func(s *NICSpec) { s.Remote = long }, "longer than a unix socket path"},
		{"one socket", func(s *NICSpec) { s.Remote = s.Local }, "both"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := goodNIC()
			c.edit(&s)
			err := s.Check()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Check(%+v) = %v, want nil", s, err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Check(%+v) = %v, want an error containing %q", s, err, c.want)
			}
		})
	}
}

func TestNICMAC(t *testing.T) {
	for addr, want := range map[string]string{"169.254.0.1": "02:6c:61:62:00:01", "169.254.0.2": "02:6c:61:62:00:02", "169.254.12.200": "02:6c:61:62:0c:c8"} {
		got := nicMAC(netip.MustParseAddr(addr))
		if got != want {
			t.Errorf("nicMAC(%s) = %s, want %s", addr, got, want)
		}
		s := goodNIC()
		s.MAC = got
		if err := s.Check(); err != nil {
			t.Errorf("nicMAC(%s) = %s fails Check: %v", addr, got, err)
		}
	}
}

// TestNICQMP: the card is a virtio-net-pci on a dgram netdev between the
// two unix sockets, with the MAC given and no option ROM.
func TestNICQMP(t *testing.T) {
	netdev, device := nicQMP(goodNIC())
	var gotN, gotD map[string]any
	if err := json.Unmarshal(netdev, &gotN); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(device, &gotD); err != nil {
		t.Fatal(err)
	}
	wantN := map[string]any{"execute": "netdev_add", "arguments": map[string]any{
		"type": "dgram", "id": "labnet0",
		"local":  map[string]any{"type": "unix", "path": "/s/a/net.sock"},
		"remote": map[string]any{"type": "unix", "path": "/s/b/net.sock"},
	}}
	wantD := map[string]any{"execute": "device_add", "arguments": map[string]any{
		"driver": "virtio-net-pci", "id": "labnic0", "netdev": "labnet0", "mac": "02:6c:61:62:00:01", "romfile": "",
	}}
	if !reflect.DeepEqual(gotN, wantN) {
		t.Errorf("netdev_add = %s\nwant %v", netdev, wantN)
	}
	if !reflect.DeepEqual(gotD, wantD) {
		t.Errorf("device_add = %s\nwant %v", device, wantD)
	}
}

func TestQMPPlugUnplugNIC(t *testing.T) {
	f := newQMPFake(t, "running")
	f.ejectAfter = 20 * time.Millisecond
	q := f.monitor(t)
	ctx := testCtx(t, 10*time.Second)
	if err := q.plugNIC(ctx, goodNIC()); err != nil {
		t.Fatalf("plugNIC: %v", err)
	}
	if !f.devices["labnic0"] || !f.netdevs["labnet0"] {
		t.Fatalf("after plugNIC: devices %v netdevs %v, want labnic0 on labnet0", f.devices, f.netdevs)
	}
	// Plugged twice: QEMU refuses the second netdev.
	if err := q.plugNIC(ctx, goodNIC()); err == nil || !strings.Contains(err.Error(), "Duplicate ID") {
		t.Errorf("second plugNIC = %v, want QEMU's duplicate-id error", err)
	}
	if err := q.unplugNIC(ctx, 5*time.Second); err != nil {
		t.Fatalf("unplugNIC: %v", err)
	}
	if len(f.devices) != 0 || len(f.netdevs) != 0 {
		t.Errorf("after unplugNIC: devices %v netdevs %v, want none", f.devices, f.netdevs)
	}
	want := []string{"netdev_add", "device_add", "netdev_add", "device_del", "netdev_del"}
	if got := f.commands(); !reflect.DeepEqual(got, want) {
		t.Errorf("commands %v, want %v (netdev_del only after DEVICE_DELETED)", got, want)
	}
	// Nothing left to unplug: not an error.
	if err := q.unplugNIC(ctx, 5*time.Second); err != nil {
		t.Errorf("unplugNIC with no nic = %v, want nil", err)
	}
}

// TestQMPPlugNICDeviceRefused: a card QEMU refuses takes its netdev with it.
func TestQMPPlugNICDeviceRefused(t *testing.T) {
	f := newQMPFake(t, "running")
	f.errOn["device_add"] = "Bus 'pci.0' does not support hotplugging"
	q := f.monitor(t)
	err := q.plugNIC(testCtx(t, 5*time.Second), goodNIC())
	if err == nil || !strings.Contains(err.Error(), "does not support hotplugging") {
		t.Fatalf("plugNIC = %v, want QEMU's error", err)
	}
	if got, want := f.commands(), []string{"netdev_add", "device_add", "netdev_del"}; !reflect.DeepEqual(got, want) {
		t.Errorf("commands %v, want %v", got, want)
	}
	if len(f.netdevs) != 0 {
		t.Errorf("netdevs %v left, want none", f.netdevs)
	}
}

// TestQMPUnplugNICNoEject: a guest that never ejects the card is an error
// after the wait, and the netdev stays (QEMU still uses it).
func TestQMPUnplugNICNoEject(t *testing.T) {
	f := newQMPFake(t, "running")
	f.ejectAfter = -1
	q := f.monitor(t)
	ctx := testCtx(t, 10*time.Second)
	if err := q.plugNIC(ctx, goodNIC()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := q.unplugNIC(ctx, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not eject its nic within 200ms") {
		t.Fatalf("unplugNIC = %v, want a timeout saying the guest did not eject", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("unplugNIC took %v, want about the 200ms wait", d)
	}
	if !f.netdevs["labnet0"] {
		t.Errorf("netdev removed under a card still plugged in")
	}
}
