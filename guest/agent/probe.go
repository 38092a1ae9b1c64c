package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probe runs the agent's diagnostic subcommands (when not PID 1).
func probe(args []string) int {
	if len(args) == 1 && args[0] == "addrspace" {
		fmt.Printf("address_space_mb %d\n", addrSpace()>>20)
		return 0
	}
	fmt.Fprintln(os.Stderr, "usage: /init addrspace   (the lab agent; it runs as PID 1 in lab guests)")
	return 2
}

// addrSpace reserves address space (PROT_NONE, nothing committed) in
// shrinking chunks until nothing more fits, then sums this process's
// mappings: on i386 with a 3G/1G split that is just under 3 GB.
//
// The Go runtime needs a little address space of its own afterwards (to
// open and read /proc/self/maps): a headroom block is reserved first and
// released before reading, then counted back in (once, whatever the
// runtime maps there meanwhile). The loop itself
// allocates nothing (MmapPtr keeps no bookkeeping), so the runtime is
// never starved mid-way ("fatal error: runtime: cannot allocate memory").
func addrSpace() uint64 {
	const limit = 64 << 30 // enough to tell a 64-bit guest apart; stop there
	const headroom = 32 << 20
	reserve := func(size uintptr) (unsafe.Pointer, bool) {
		p, err := unix.MmapPtr(-1, 0, nil, size, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
		return p, err == nil
	}
	room, ok := reserve(headroom)
	var reserved uint64
	for size := uintptr(1 << 30); size >= 64<<10; size >>= 1 {
		for reserved < limit {
			if _, ok := reserve(size); !ok {
				break
			}
			reserved += uint64(size)
		}
	}
	var extra uint64
	roomLo := uint64(uintptr(room))
	if ok && unix.MunmapPtr(room, headroom) == nil {
		extra = headroom
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0
	}
	defer f.Close()
	total := extra
	s := bufio.NewScanner(f)
	for s.Scan() {
		rng, _, _ := strings.Cut(s.Text(), " ")
		lo, hi, _ := strings.Cut(rng, "-")
		a, _ := strconv.ParseUint(lo, 16, 64)
		b, _ := strconv.ParseUint(hi, 16, 64)
		total += b - a
		if extra > 0 { // what the runtime mapped into the headroom is counted once
			lo, hi := max(a, roomLo), min(b, roomLo+headroom)
			if lo < hi {
				total -= hi - lo
			}
		}
	}
	return total
}
