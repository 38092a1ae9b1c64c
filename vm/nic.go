package vm

// NICs for peer guests. A run whose experiment asks for a peer (issue #11:
// E5's clients on a separate host) joins two guests by a network that
// lives only between their two QEMU processes: each gets a virtio-net card
// hot-plugged over QMP, backed by a `dgram` netdev on two unix datagram
// sockets, its own in its state directory (where it receives) and the
// other's (where it sends). Datagram sockets need no listener, so either
// side may come first (QEMU 7.2's `stream` netdev has no reconnect: its
// server would have to start first). Nothing touches the host's network
// stack: frames are unix datagrams between two processes.
//
// The booted snapshots hold no NIC and the guest loads no network driver
// at boot, so runs without a peer see the machine they always did. The
// card is hot-plugged into the running guest (the i440fx machine's ACPI PCI
// hotplug; the Debian kernel has acpiphp built in), the host loads the
// network modules the initramfs carries (images.NetModulesListPath) with
// busybox insmod, finds the interface by its MAC, turns IPv6 off on it
// before it comes up (no fe80:: address, no router solicitations: the
// only address is the one given) and sets the address. Detaching reverses
// it: device_del (the guest ejects the card; QEMU says DEVICE_DELETED),
// netdev_del, the modules unloaded, the socket removed.
//
// The guest side is busybox shell run through the agent's exec rather than
// a new agent operation: insmod, ip and sysfs do the whole job, and the
// agent (part of every snapshot's key) stays as it is.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/digitalocean/go-qemu/qmp"

	"lab/images"
	"lab/vm/link"
)

// NetSock is the unix datagram socket a VM's NIC receives on, in its state
// directory.
const NetSock = "net.sock"

// QEMU ids of the one NIC a VM can have.
const (
	nicNetdevID = "labnet0"
	nicDeviceID = "labnic0"
)

// linkLocal is the only network a NIC's address may be in.
var linkLocal = netip.MustParsePrefix("169.254.0.0/16")

// NICSpec is a NIC to give a running guest: plain data.
type NICSpec struct {
	// MAC is the card's address: unicast and locally administered.
	MAC string `json:"mac"`
	// Addr is the guest's address with its prefix, inside 169.254.0.0/16
	// (169.254.0.1/16).
	Addr string `json:"addr"`
	// Local is the unix socket this VM's QEMU receives on; Remote the
	// other VM's, which it sends to. Absolute host paths.
	Local  string `json:"local"`
	Remote string `json:"remote"`
}

// NICState is a NIC attached to a guest and configured there.
type NICState struct {
	NICSpec
	// Iface is the guest's name for the card (eth0).
	Iface string `json:"iface"`
	// PlugSeconds is the QMP side (netdev_add, device_add); ConfigSeconds
	// the guest's (modules loaded, the card found, its address set).
	PlugSeconds   float64 `json:"plug_seconds"`
	ConfigSeconds float64 `json:"config_seconds"`
}

// maxSockPath is the longest unix socket path (sun_path, less its NUL).
const maxSockPath = 107

// Check says what is wrong with s, if anything: an address outside
// 169.254.0.0/16 or a prefix reaching outside it, a MAC that is not
// unicast and locally administered, socket paths that are not absolute,
// too long for a unix socket, or the same.
func (s NICSpec) Check() error {
	mac, err := net.ParseMAC(s.MAC)
	if err != nil || len(mac) != 6 {
		return fmt.Errorf("nic mac %q: want six hex bytes like 02:6c:61:62:00:01", s.MAC)
	}
	if mac[0]&1 != 0 || mac[0]&2 == 0 {
		return fmt.Errorf("nic mac %s: want a unicast, locally administered address (first byte x2, x6, xa or xe)", s.MAC)
	}
	p, err := netip.ParsePrefix(s.Addr)
	if err != nil {
		return fmt.Errorf("nic address %q: want ADDRESS/PREFIX like 169.254.0.1/16", s.Addr)
	}
	if !p.Addr().Is4() || !linkLocal.Contains(p.Addr()) || p.Bits() < linkLocal.Bits() {
		return fmt.Errorf("nic address %s: must lie in %s, prefix /%d or longer (a peer network is link-local only)", s.Addr, linkLocal, linkLocal.Bits())
	}
	if a, m := p.Addr(), p.Masked(); a == m.Addr() || (p.Bits() < 31 && a == lastAddr(m)) {
		return fmt.Errorf("nic address %s is the network's own or its broadcast address", s.Addr)
	}
	for _, sock := range []struct{ what, path string }{{"local", s.Local}, {"remote", s.Remote}} {
		switch {
		case !filepath.IsAbs(sock.path):
			return fmt.Errorf("nic %s socket %q: want an absolute path", sock.what, sock.path)
		case len(sock.path) > maxSockPath:
			return fmt.Errorf("nic %s socket %s: %d bytes, longer than a unix socket path may be (%d); use a shorter state directory (LAB_STATE_DIR)", sock.what, sock.path, len(sock.path), maxSockPath)
		}
	}
	if filepath.Clean(s.Local) == filepath.Clean(s.Remote) {
		return fmt.Errorf("nic local and remote socket are both %s", s.Local)
	}
	return nil
}

// nicMAC is the MAC of the card with address addr: locally administered,
// 02:6c:61:62 ("lab") and the address's last two bytes, so the two cards
// of a network differ.
func nicMAC(addr netip.Addr) string {
	b := addr.As4()
	return fmt.Sprintf("02:6c:61:62:%02x:%02x", b[2], b[3])
}

// lastAddr is the last address of prefix p (its broadcast address).
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := (uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// nicQMP is the QMP side of attaching s: the dgram netdev and the card on
// it. go-qemu's generated commands predate dgram and take no device
// properties, so these go as raw JSON.
func nicQMP(s NICSpec) (netdevAdd, deviceAdd []byte) {
	sock := func(p string) map[string]string { return map[string]string{"type": "unix", "path": p} }
	netdevAdd, _ = json.Marshal(map[string]any{"execute": "netdev_add", "arguments": map[string]any{
		"type": "dgram", "id": nicNetdevID, "local": sock(s.Local), "remote": sock(s.Remote),
	}})
	deviceAdd, _ = json.Marshal(map[string]any{"execute": "device_add", "arguments": map[string]any{
		// No option ROM: nothing boots from this card, and the ROM
		// would take guest memory the machine otherwise does not have.
		"driver": "virtio-net-pci", "id": nicDeviceID, "netdev": nicNetdevID, "mac": strings.ToLower(s.MAC), "romfile": "",
	}})
	return netdevAdd, deviceAdd
}

// run sends one raw QMP command.
func (q *qmpMonitor) run(ctx context.Context, what string, cmd []byte) error {
	return q.do(ctx, what, func() error {
		_, err := q.mon.Run(cmd)
		return err
	})
}

// plugNIC adds the netdev and the card. A card that cannot be added takes
// its netdev with it.
func (q *qmpMonitor) plugNIC(ctx context.Context, s NICSpec) error {
	netdevAdd, deviceAdd := nicQMP(s)
	if err := q.run(ctx, "netdev_add", netdevAdd); err != nil {
		return err
	}
	if err := q.run(ctx, "device_add", deviceAdd); err != nil {
		_ = q.do(context.WithoutCancel(ctx), "netdev_del", func() error { return q.raw.NetdevDel(nicNetdevID) })
		return err
	}
	return nil
}

// unplugNIC removes the card and then its netdev. device_del only asks the
// guest to eject the card (ACPI); QEMU reports DEVICE_DELETED when it is
// gone, and the netdev can go only then. A card or netdev QEMU does not
// have (already gone) is not an error.
func (q *qmpMonitor) unplugNIC(ctx context.Context, wait time.Duration) error {
	events, unsubscribe := q.subscribe("DEVICE_DELETED")
	defer unsubscribe()
	err := q.do(ctx, "device_del", func() error { return q.raw.DeviceDel(nicDeviceID) })
	switch {
	case err != nil && notFound(err):
	case err != nil:
		return err
	default:
		if err := awaitDeleted(ctx, q.name, events, nicDeviceID, wait); err != nil {
			return err
		}
	}
	err = q.do(ctx, "netdev_del", func() error { return q.raw.NetdevDel(nicNetdevID) })
	if err != nil && !notFound(err) {
		return err
	}
	return nil
}

// notFound says whether QMP refused a command for a device or netdev it
// does not have.
func notFound(err error) bool {
	s := err.Error()
	return strings.Contains(s, "not found") || strings.Contains(s, "No such")
}

// awaitDeleted waits for the DEVICE_DELETED event of device id.
func awaitDeleted(ctx context.Context, name string, events <-chan qmp.Event, id string, wait time.Duration) error {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case e, ok := <-events:
			if !ok {
				return fmt.Errorf("machine %s: the qmp connection closed while the guest ejected its nic", name)
			}
			if dev, _ := e.Data["device"].(string); dev == id {
				return nil
			}
		case <-timer.C:
			return fmt.Errorf("machine %s: the guest did not eject its nic within %v (no DEVICE_DELETED); is it still running?", name, wait)
		case <-ctx.Done():
			return fmt.Errorf("machine %s: waiting for the guest to eject its nic: %w", name, ctx.Err())
		}
	}
}

// nicScript is the guest's side, run by busybox sh: `up MAC ADDR` loads
// the network modules, waits (20 s at most) for the interface with MAC,
// turns IPv6 off on it, sets ADDR and brings it up, and prints its name;
// `down MAC` checks the interface is gone and unloads the modules (last
// loaded first). Exit codes 3 and up say which step failed; stderr says
// what to do.
const nicScript = `PATH=/bin:/sbin:/usr/bin:/usr/sbin
list=` + images.NetModulesListPath + `
mac=$2
find_iface() {
	for d in /sys/class/net/*; do
		if [ "$(cat "$d/address" 2>/dev/null)" = "$mac" ]; then
			iface=${d##*/}
			return 0
		fi
	done
	return 1
}
case $1 in
up)
	if [ ! -f $list ]; then
		echo "this guest has no $list: its initramfs was built by a lab without network modules; run 'lab image fetch', then boot the vm again" >&2
		exit 3
	fi
	while read -r m; do
		n=$(basename "$m" .ko | tr - _)
		grep -q "^$n " /proc/modules || insmod "$m" || exit 4
	done < $list
	i=0
	until find_iface; do
		i=$((i+1))
		if [ $i -gt 400 ]; then
			echo "no interface with MAC $mac appeared within 20 s of the card being plugged in (is virtio_net in $list, or built in?)" >&2
			exit 5
		fi
		sleep 0.05
	done
	if [ -e /proc/sys/net/ipv6/conf/$iface/disable_ipv6 ]; then
		echo 1 > /proc/sys/net/ipv6/conf/$iface/disable_ipv6 || exit 6
	fi
	ip addr add "$3" dev "$iface" || exit 7
	ip link set "$iface" up || exit 7
	echo "$iface"
	;;
down)
	if find_iface; then
		echo "interface $iface (MAC $mac) is still there after the card was ejected" >&2
		exit 8
	fi
	[ -f $list ] || exit 0
	tac $list | while read -r m; do
		n=$(basename "$m" .ko | tr - _)
		if grep -q "^$n " /proc/modules; then
			rmmod "$n" || exit 9
		fi
	done
	;;
*)
	echo "usage: up MAC ADDR | down MAC" >&2
	exit 2
	;;
esac
`

// pingScript waits until $1 answers a ping (the first also resolves its
// MAC), five tries of up to 2 s.
const pingScript = `for i in 1 2 3 4 5; do
	/bin/ping -c 1 -W 2 "$1" >/dev/null 2>&1 && exit 0
done
echo "no answer from $1 to 5 pings" >&2
exit 1
`

// guestSh runs a busybox shell script in the guest behind c with args and
// returns its stdout; a non-zero exit is an error quoting its stderr.
func guestSh(ctx context.Context, c *link.Client, script string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	argv := append([]string{"/bin/sh", "-c", script, "sh"}, args...)
	p, err := c.Start(ctx, &link.ExecRequest{Argv: argv, KillGroup: true}, link.StartOptions{Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		return "", err
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		p.Close() // the agent kills it
		return "", ctx.Err()
	}
	ex, err := p.Wait()
	if err != nil {
		return "", err
	}
	if ex.Code != 0 {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = "no message"
		}
		return stdout.String(), fmt.Errorf("exit status %d: %s", ex.Code, msg)
	}
	return stdout.String(), nil
}

// nicEjectWait bounds how long the guest may take to eject its card.
const nicEjectWait = 30 * time.Second

// AttachNIC hot-plugs the NIC s describes into the running guest and
// configures it there (see the top of this file). A machine has one NIC
// at most. If any step fails, what was done is undone before it returns.
func (m *Machine) AttachNIC(ctx context.Context, s NICSpec) (*NICState, error) {
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("machine %s: %w", m.cfg.Name, err)
	}
	s.MAC = strings.ToLower(s.MAC)
	m.nicMu.Lock()
	defer m.nicMu.Unlock()
	if m.nic != nil {
		return nil, fmt.Errorf("machine %s already has a nic (%s, %s); detach it first", m.cfg.Name, m.nic.Iface, m.nic.Addr)
	}
	q, err := m.monitor(ctx)
	if err != nil {
		return nil, err
	}
	removeSocket(s.Local) // left by a QEMU that was killed
	t := time.Now()
	if err := q.plugNIC(ctx, s); err != nil {
		return nil, fmt.Errorf("machine %s: plugging in the nic: %w", m.cfg.Name, err)
	}
	st := &NICState{NICSpec: s, PlugSeconds: time.Since(t).Seconds()}
	t = time.Now()
	out, err := guestSh(ctx, m.Client, nicScript, "up", s.MAC, s.Addr)
	if err != nil {
		err = fmt.Errorf("machine %s: configuring the nic in the guest: %w", m.cfg.Name, err)
		if derr := m.detachNIC(context.WithoutCancel(ctx), s); derr != nil {
			err = fmt.Errorf("%w; undoing it: %v", err, derr)
		}
		return nil, err
	}
	st.ConfigSeconds = time.Since(t).Seconds()
	st.Iface = strings.TrimSpace(out)
	m.nic = st
	return st, nil
}

// DetachNIC takes the machine's NIC away: the card ejected, its netdev
// removed, the network modules unloaded in the guest, the socket removed.
// Without a NIC it does nothing.
func (m *Machine) DetachNIC(ctx context.Context) error {
	m.nicMu.Lock()
	defer m.nicMu.Unlock()
	if m.nic == nil {
		return nil
	}
	if err := m.detachNIC(ctx, m.nic.NICSpec); err != nil {
		return err
	}
	m.nic = nil
	return nil
}

// detachNIC undoes AttachNIC of s; the caller holds nicMu.
func (m *Machine) detachNIC(ctx context.Context, s NICSpec) error {
	ctx, cancel := context.WithTimeout(ctx, nicEjectWait+30*time.Second)
	defer cancel()
	q, err := m.monitor(ctx)
	if err == nil {
		err = q.unplugNIC(ctx, nicEjectWait)
	}
	if err != nil {
		return fmt.Errorf("machine %s: unplugging the nic: %w", m.cfg.Name, err)
	}
	removeSocket(s.Local)
	if _, err := guestSh(ctx, m.Client, nicScript, "down", s.MAC); err != nil {
		return fmt.Errorf("machine %s: removing the network modules from the guest: %w", m.cfg.Name, err)
	}
	return nil
}

// NIC is the machine's NIC, nil if it has none.
func (m *Machine) NIC() *NICState {
	m.nicMu.Lock()
	defer m.nicMu.Unlock()
	if m.nic == nil {
		return nil
	}
	st := *m.nic
	return &st
}

// removeSocket removes the unix socket at path, and nothing else.
func removeSocket(path string) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		_ = os.Remove(path)
	}
}
