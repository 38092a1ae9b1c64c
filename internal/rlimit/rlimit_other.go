//go:build !386

package rlimit

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// On 64-bit x86 getrlimit and setrlimit take the 64-bit struct itself.

func getOld(resource int, r *unix.Rlimit) error {
	if _, _, e := unix.RawSyscall(unix.SYS_GETRLIMIT, uintptr(resource), uintptr(unsafe.Pointer(r)), 0); e != 0 {
		return e
	}
	return nil
}

func setOld(resource int, r *unix.Rlimit) error {
	if _, _, e := unix.RawSyscall(unix.SYS_SETRLIMIT, uintptr(resource), uintptr(unsafe.Pointer(r)), 0); e != 0 {
		return e
	}
	return nil
}
