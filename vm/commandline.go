package vm

import (
	"strings"

	"lab/images"
)

// CommandLine is the QEMU command line of profile p under accel and
// clock, as `lab profiles show` prints it: the kernel's boot image in
// cache (KERNEL if the cache lacks it), INITRD for the initramfs, which
// is made at boot, and p's state directory in r.
func (r Root) CommandLine(cache images.Cache, p images.Profile, accel string, clock Clock) ([]string, error) {
	kernel, initrd := "KERNEL", "INITRD"
	if k, err := cache.LoadKernel(p.Kernel); err == nil {
		sha, _ := k.BootImage(p, false)
		kernel = cache.BlobPath(sha)
	}
	return Args(Options{Profile: p, Kernel: kernel, Initrd: initrd, StateDir: r.Dir(p.Name), Accel: accel, Clock: clock})
}

// ShellQuote renders argv so it can be pasted into a shell.
func ShellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=.,/:+", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
