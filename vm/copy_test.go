package vm

import (
	"context"
	"strings"
	"testing"
)

// TestCopyOutUnwritableDestination: a destination that cannot be
// written is named with its directory, not the temporary file lab writes
// first (issue 31), and the copy fails before asking the guest anything.
func TestCopyOutUnwritableDestination(t *testing.T) {
	h := &Handle{Name: "v"}
	for _, dst := range []string{"/nonexistent-dir/out.txt", "/proc/1/out.txt"} {
		err := h.CopyOut(context.Background(), "/etc/hostname", dst)
		if err == nil || !strings.Contains(err.Error(), "cannot write "+dst+": its directory ") || strings.Contains(err.Error(), ".lab-") {
			t.Errorf("CopyOut to %s: %v; want the destination and its directory named, no temporary file", dst, err)
		}
	}
}
