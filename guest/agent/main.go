// Command agent is PID 1 in every lab guest. It mounts the pseudo
// filesystems, loads the virtio modules, applies the profile's guest
// settings (stack limit, CPUs offline, sysctls) to everything it starts,
// serves the host link (vm/link), reaps orphans, and never exits: a fatal
// error is printed to the console and the guest powers off.
//
// Run as an ordinary program it offers probes for tests:
//
//	/init addrspace   print how much address space one process can map
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// version is reported over the link.
const version = "0.2.0"

func main() {
	if os.Getpid() != 1 {
		os.Exit(probe(os.Args[1:]))
	}
	a := &agent{started: time.Now(), blobDir: blobDir, pluginDir: pluginDir, powerOff: powerOff}
	if err := a.setup(); err != nil {
		fatal(err)
	}
	a.cacheBudget = cacheBudgetFor(memTotalKB())
	logf("ready for the host (guest uptime %.2fs at /init, set-up took %v; plugin cache budget %s)", a.uptimeAtInit, time.Since(a.started).Round(time.Millisecond), describeBudget(a.cacheBudget))
	a.serveLink() // never returns
}

// logOutput is the console in a guest; tests quieten it.
var logOutput io.Writer = os.Stderr

func logf(format string, args ...any) {
	fmt.Fprintf(logOutput, "lab-agent: "+format+"\n", args...)
}

// fatal reports err on the console and powers the guest off: PID 1 must not
// exit (the kernel would panic with a less useful message).
func fatal(err error) {
	logf("fatal: %v", err)
	powerOff()
}

func powerOff() {
	unix.Sync()
	_ = unix.Kill(-1, unix.SIGTERM)
	time.Sleep(100 * time.Millisecond)
	_ = unix.Kill(-1, unix.SIGKILL)
	unix.Sync()
	for {
		_ = unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
		time.Sleep(time.Second)
	}
}
