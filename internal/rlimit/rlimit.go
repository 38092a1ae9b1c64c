// Package rlimit gets and sets resource limits on every kernel lab's
// guests run, down to Linux 2.6.32. Go's syscall.Setrlimit and
// golang.org/x/sys/unix's use prlimit64 only, which Linux gained in 2.6.36:
// on 2.6.32 a stack limit set that way fails with ENOSYS and does not
// take. These try prlimit64 and fall back, on ENOSYS, to the system calls
// that came before it (ugetrlimit and setrlimit on i386).
package rlimit

import "golang.org/x/sys/unix"

// Get reads the calling process's limit of resource.
func Get(resource int, r *unix.Rlimit) error {
	err := unix.Prlimit(0, resource, nil, r)
	if err != unix.ENOSYS {
		return err
	}
	return getOld(resource, r)
}

// Set sets the calling process's limit of resource; processes it starts
// inherit it.
func Set(resource int, r *unix.Rlimit) error {
	err := unix.Prlimit(0, resource, r, nil)
	if err != unix.ENOSYS {
		return err
	}
	return setOld(resource, r)
}
