package rlimit

import (
	"testing"

	"golang.org/x/sys/unix"
)

// The fallbacks themselves, called directly (the host kernel has
// prlimit64, so Get and Set never reach them here): they read what
// prlimit64 reads, and a limit they set is what prlimit64 then reads.
func TestOldCallsAgreeWithPrlimit(t *testing.T) {
	var want, got unix.Rlimit
	if err := unix.Prlimit(0, unix.RLIMIT_STACK, nil, &want); err != nil {
		t.Fatal(err)
	}
	if err := getOld(unix.RLIMIT_STACK, &got); err != nil {
		t.Fatalf("getOld: %v", err)
	}
	if got != want {
		t.Fatalf("getOld = %+v, prlimit64 says %+v", got, want)
	}
	// Lower the soft limit by a page and put it back (both within the
	// hard limit, so no privilege is needed).
	lower := want
	if lower.Cur == unix.RLIM_INFINITY || lower.Cur > 64<<20 {
		lower.Cur = 64 << 20
	}
	lower.Cur -= 4096
	if lower.Max != unix.RLIM_INFINITY && lower.Cur > lower.Max {
		t.Skip("hard stack limit too small to lower under")
	}
	t.Cleanup(func() { _ = unix.Prlimit(0, unix.RLIMIT_STACK, &want, nil) })
	if err := setOld(unix.RLIMIT_STACK, &lower); err != nil {
		t.Fatalf("setOld: %v", err)
	}
	var after unix.Rlimit
	if err := Get(unix.RLIMIT_STACK, &after); err != nil {
		t.Fatal(err)
	}
	if after.Cur != lower.Cur {
		t.Fatalf("after setOld(%d), the soft limit is %d", lower.Cur, after.Cur)
	}
	if err := Set(unix.RLIMIT_STACK, &want); err != nil {
		t.Fatal(err)
	}
}
