package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestGetRefusesDevices: a device is not copied out of the guest: /dev/zero
// would stream without end (lab cp vm:/dev/zero ./z), so it is refused at
// once, naming what it is (issue 22 item 12).
func TestGetRefusesDevices(t *testing.T) {
	l := connect(t, newTestAgent(t))
	for _, path := range []string{"/dev/zero", "/dev/urandom", "/dev/null"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := l.c.Get(ctx, path, io.Discard)
		cancel()
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "character device") || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Get(%s) = %v, want it refused as a character device, not a regular file", path, err)
		}
	}
}
