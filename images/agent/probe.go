package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

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
func addrSpace() uint64 {
	const limit = 64 << 30 // enough to tell a 64-bit guest apart; stop there
	var reserved uint64
	for size := 1 << 30; size >= 64<<10; size >>= 1 {
		for reserved < limit {
			_, err := unix.Mmap(-1, 0, size, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_NORESERVE)
			if err != nil {
				break
			}
			reserved += uint64(size)
		}
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0
	}
	defer f.Close()
	var total uint64
	s := bufio.NewScanner(f)
	for s.Scan() {
		rng, _, _ := strings.Cut(s.Text(), " ")
		lo, hi, _ := strings.Cut(rng, "-")
		a, _ := strconv.ParseUint(lo, 16, 64)
		b, _ := strconv.ParseUint(hi, 16, 64)
		total += b - a
	}
	return total
}
