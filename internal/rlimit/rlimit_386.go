package rlimit

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// rlimit32 is struct rlimit of i386's ugetrlimit and setrlimit: 32-bit
// values, RLIM_INFINITY all ones.
type rlimit32 struct{ Cur, Max uint32 }

const rlimInf32 = ^uint32(0)

func getOld(resource int, r *unix.Rlimit) error {
	var rl rlimit32
	if _, _, e := unix.RawSyscall(unix.SYS_UGETRLIMIT, uintptr(resource), uintptr(unsafe.Pointer(&rl)), 0); e != 0 {
		return e
	}
	r.Cur, r.Max = from32(rl.Cur), from32(rl.Max)
	return nil
}

func setOld(resource int, r *unix.Rlimit) error {
	cur, ok1 := to32(r.Cur)
	max, ok2 := to32(r.Max)
	if !ok1 || !ok2 {
		return unix.EINVAL // not expressible before prlimit64
	}
	rl := rlimit32{cur, max}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRLIMIT, uintptr(resource), uintptr(unsafe.Pointer(&rl)), 0); e != 0 {
		return e
	}
	return nil
}

func from32(v uint32) uint64 {
	if v == rlimInf32 {
		return unix.RLIM_INFINITY
	}
	return uint64(v)
}

func to32(v uint64) (uint32, bool) {
	if v == unix.RLIM_INFINITY {
		return rlimInf32, true
	}
	if v >= uint64(rlimInf32) {
		return 0, false
	}
	return uint32(v), true
}
