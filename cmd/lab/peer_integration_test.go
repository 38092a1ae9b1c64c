package main

// Integration tests of runs with a peer guest (an experiment's peer, issue
// #11): the test plugin peertest asks its workload echod in the peer who
// it is over the link-local network; its experiment broken's peer
// workload exits before it is ready.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lab/engine"
	"lab/internal/labtest"
	"lab/results"
	"lab/vm"
)

// itPeerPlugin builds peertest onto $LAB_PLUGIN_PATH.
func itPeerPlugin(t *testing.T) {
	t.Helper()
	root, err := labtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	itMust(t, 5*time.Minute, nil, "plugin", "build", "--out", dir, filepath.Join(root, "internal", "testplugins", "peertest"))
	setEnv(t, "LAB_PLUGIN_PATH", dir)
}

// itHardware is the run's guest's network hardware as seen from inside:
// its interfaces and whether virtio_net is loaded ("lo no-virtio_net" for
// a guest as booted).
func itHardware(t *testing.T, name string) string {
	t.Helper()
	r := itMust(t, itCallTimeout, nil, "exec", name, "--", "sh", "-c",
		`echo $(ls /sys/class/net) $(grep -q '^virtio_net ' /proc/modules && echo virtio_net || echo no-virtio_net)`)
	return strings.TrimSpace(r.stdout)
}

// itNoPeer checks that the peer of vm name is gone (no process, no state)
// and that vm name has its own hardware again: no NIC in its supervisor's
// view or in the guest, no socket left in its state directory. The
// supervisor may still be detaching (after a kill): wait for it.
func itNoPeer(t *testing.T, root, name string) {
	t.Helper()
	peer := filepath.Join(root, engine.PeerName(name))
	if procs := labtest.WaitNoProcs(peer, 20*time.Second); len(procs) > 0 {
		t.Errorf("the peer guest still runs: %v", procs)
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(peer); errors.Is(err, os.ErrNotExist) {
			break
		} else if i == 50 {
			t.Errorf("the peer's state directory %s is still there (%v)", peer, err)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	h, err := testRoots(t).vm.Open(name)
	if err != nil {
		t.Fatalf("vm %s after the run: %v", name, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := h.Status(ctx)
		cancel()
		if err != nil {
			t.Fatalf("vm %s status: %v", name, err)
		}
		if st.NIC == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("vm %s still has its nic 30 s after the run: %+v", name, st.NIC)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if hw := itHardware(t, name); hw != "lo no-virtio_net" {
		t.Errorf("vm %s after the run: %q, want its own hardware again (lo no-virtio_net)", name, hw)
	}
	if _, err := os.Lstat(filepath.Join(h.Dir, vm.NetSock)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still in vm %s's state directory (%v)", vm.NetSock, name, err)
	}
}

// TestIntegrationRunPeer: `-p where=peer` boots a second guest from the
// run's profile (its booted snapshot), joins the two, starts echod there
// and runs the plugin, which reaches echod at 169.254.0.2 from 169.254.0.1;
// the result records the peer; afterwards there is no peer and the run's
// guest has its own hardware again. The same without the peer has no
// peer and no peer address. Then the failures: a peer that does not boot,
// a peer workload that never gets ready, Ctrl-C and SIGKILL during a
// peer run; each leaves nothing running on either side.
func TestIntegrationRunPeer(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	itPeerPlugin(t)
	root := itBootEnv(t, p)
	const name = "peerrun"
	itUp(t, p.Name, name)
	if hw := itHardware(t, name); hw != "lo no-virtio_net" {
		t.Fatalf("vm %s as booted: %q, want lo no-virtio_net", name, hw)
	}

	t.Run("peer", func(t *testing.T) {
		res, r := itRunJSON(t, 0, "peertest", "--vm", name, "-e", "ask", "-p", "where=peer", "--repeat", "3")
		if res.Outcome.Status != "ok" || len(res.Samples) != 3 {
			t.Fatalf("outcome %+v with %d samples, want ok with 3\n%s", res.Outcome, len(res.Samples), r.stderr)
		}
		pr := res.Peer
		if pr == nil {
			t.Fatalf("the result records no peer\n%s", r.stderr)
		}
		if pr.VM != name+"-peer" || pr.Addr != "169.254.0.2" || pr.SelfAddr != "169.254.0.1" || pr.Workload != "echod" ||
			pr.Boot != "restored from snapshot" || pr.Guest.CPUModel != res.Guest.CPUModel || pr.Error != "" {
			t.Errorf("peer record %+v", pr)
		}
		t.Logf("peer: booted in %.2fs (%s), network up in %.2fs, echod ready in %.2fs; run %.1fs in all; rtt median %.2f ms",
			pr.BootSeconds, pr.Boot, pr.JoinSeconds, pr.ReadySeconds, r.took.Seconds(), itMedian(t, res, "rtt_ms"))
		itNoPeer(t, root, name)
	})

	t.Run("local", func(t *testing.T) {
		res, r := itRunJSON(t, 0, "peertest", "--vm", name, "-e", "ask", "-p", "where=local", "--repeat", "3")
		if res.Outcome.Status != "ok" || res.Peer != nil {
			t.Errorf("run without a peer: outcome %+v, peer %+v", res.Outcome, res.Peer)
		}
		if strings.Contains(r.stderr, "peer guest") {
			t.Errorf("a run without a peer talks of one:\n%s", r.stderr)
		}
		if got := itSeries(res, "peer_env", nil); len(got) != 3 || got[0] != 0 {
			t.Errorf("peer_env %v, want 3 zeros: no LAB_PEER_ADDR without a peer", got)
		}
		t.Logf("the same run without a peer: %.1fs", r.took.Seconds())
	})

	t.Run("sweep", func(t *testing.T) {
		// One peer for the whole sweep: the local point runs beside it.
		res, r := itRunJSON(t, 0, "peertest", "--vm", name, "-e", "ask", "--sweep", "where=local,peer", "--repeat", "2")
		if res.Outcome.Status != "ok" || res.Peer == nil {
			t.Fatalf("outcome %+v, peer %+v\n%s", res.Outcome, res.Peer, r.stderr)
		}
		if got := itSeries(res, "rtt_ms", map[string]string{"where": "peer"}); len(got) != 2 || got[0] <= 0 {
			t.Errorf("rtt_ms at where=peer: %v, want 2 round trips", got)
		}
		if got := itSeries(res, "peer_env", map[string]string{"where": "local"}); len(got) != 2 || got[0] != 1 {
			t.Errorf("peer_env at where=local: %v, want 2 ones (the sweep's peer is up)", got)
		}
		itNoPeer(t, root, name)
	})

	t.Run("peer does not boot", func(t *testing.T) {
		setEnv(t, peerMemoryEnv, strconv.Itoa(1<<40)) // 1 EiB: QEMU cannot set up the guest's memory
		r := itLab(t, itRunTimeout, nil, "run", "--out", itResultsDir(t), "peertest", "--vm", name, "-e", "ask", "-p", "where=peer")
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
		}
		for _, want := range []string{"peer guest " + name + "-peer", "did not boot", "cannot set up guest memory", "nothing of it is left running", "run without -p where=peer"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("the error does not say %q:\n%s", want, r.stderr)
			}
		}
		if des, _ := os.ReadDir(itResultsDir(t)); len(des) != 0 {
			t.Errorf("a run that never started saved %d files", len(des))
		}
		itNoPeer(t, root, name)
	})

	t.Run("peer workload not ready", func(t *testing.T) {
		r := itLab(t, itRunTimeout, nil, "run", "--out", itResultsDir(t), "peertest", "--vm", name, "-e", "broken")
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
		}
		for _, want := range []string{"peer guest " + name + "-peer", "workload nready", "exited with status 3", "cannot serve (on purpose)"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("the error does not say %q:\n%s", want, r.stderr)
			}
		}
		itNoPeer(t, root, name)
	})

	labBin := filepath.Join(labtest.LibDir(), "lab")
	if _, err := os.Stat(labBin); err != nil {
		labtest.Unavailable(t, "%s missing: run `make build`", labBin)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, _, stderr, done := itStartLab(t, labBin, "run", "peertest", "--vm", name, "--out", t.TempDir(), "-e", "ask", "-p", "where=peer", "-p", "hold=1s", "--repeat", "100")
			itAwait(t, stderr, "[2/100]", 2*time.Minute)
			if sig == syscall.SIGINT {
				// Mid-run, lab status shows the run's guest on the
				// peer network.
				st := itMust(t, itCallTimeout, nil, "status")
				if !regexp.MustCompile(name + `\s.*eth\d+ 169\.254\.0\.1/16 \(peer network\)`).MatchString(st.stdout) {
					t.Errorf("lab status during a peer run does not show %s's NIC:\n%s", name, st.stdout)
				}
				itInterrupt(t, cmd, done, stderr)
			} else {
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				<-done
			}
			killed := time.Now()
			itNoPeer(t, root, name)
			t.Logf("after %v: no peer, and vm %s has its own hardware again %v later", sig, name, time.Since(killed).Round(10*time.Millisecond))
		})
	}

	// The VM is as usable as before.
	res, _ := itRunJSON(t, 0, "peertest", "--vm", name, "-e", "ask", "-p", "where=peer")
	if res.Outcome.Status != "ok" || res.Peer == nil {
		t.Errorf("a peer run after the failures: %+v, peer %+v", res.Outcome, res.Peer)
	}
	itNoPeer(t, root, name)
}

// TestIntegrationRunNetbenchPeer: netbench's designs with clients=peer
// (small loops, three designs): the clients run in a second guest through
// clientd, every connection of every design completes, the result records
// the peer, and afterwards nothing of the peer is left. The same run with
// the clients in the run's guest, for the overhead.
func TestIntegrationRunNetbenchPeer(t *testing.T) {
	p := itProfile(t, "celeron-2.4")
	root := itBootEnv(t, p)
	const name = "nbpeer"
	itUp(t, p.Name, name)
	designs := []int{0, 1, 2}
	run := func(clients string) (*results.Result, labResult) {
		args := append([]string{"netbench", "--vm", name, "-e", "designs", "--repeat", "2"}, itNetbenchArgs("-p", "designs=0+1+2", "-p", "clients="+clients)...)
		res, r := itRunJSON(t, 0, args...)
		itNetbenchCheck(t, res, designs, 2)
		return res, r
	}
	res, r := run("peer")
	pr := res.Peer
	if pr == nil || pr.VM != name+"-peer" || pr.Workload != "clientd" || pr.Addr != "169.254.0.2" || pr.Error != "" {
		t.Fatalf("peer record %+v\n%s", pr, r.stderr)
	}
	itNoPeer(t, root, name)
	local, rl := run("local")
	if local.Peer != nil {
		t.Errorf("clients=local recorded a peer: %+v", local.Peer)
	}
	t.Logf("clients=peer: %.1fs (peer booted in %.2fs, %s; network up in %.2fs; clientd ready in %.2fs); clients=local: %.1fs",
		r.took.Seconds(), pr.BootSeconds, pr.Boot, pr.JoinSeconds, pr.ReadySeconds, rl.took.Seconds())
	for _, d := range designs {
		at := map[string]string{"design": strconv.Itoa(d)}
		t.Logf("design %d: wall_s peer %v, local %v", d, itSeries(res, "wall_s", at), itSeries(local, "wall_s", at))
	}
}
