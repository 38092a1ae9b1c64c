package host

import (
	"testing"
)

func TestReadyWriter(t *testing.T) {
	for _, c := range []struct {
		name   string
		chunks []string
		want   bool
	}{
		{"one line", []string{"ready\n"}, true},
		{"split", []string{"rea", "dy", "\n"}, true},
		{"after other lines", []string{"listening on 7070\nready\nmore\n"}, true},
		{"with spaces and CR", []string{"  ready \r\n"}, true},
		{"not yet ended", []string{"ready"}, false},
		{"a longer word", []string{"already\n", "ready-ish\n"}, false},
		{"nothing", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newReadyWriter()
			for _, s := range c.chunks {
				if n, err := r.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", s, n, err, len(s))
				}
			}
			got := isDone(r.ready)
			if got != c.want {
				t.Errorf("ready after %q = %v, want %v", c.chunks, got, c.want)
			}
		})
	}
	// Everything is kept for errors, ready or not.
	r := newReadyWriter()
	r.Write([]byte("ready\nlater output\n"))
	if got := r.tail.String(); got != "ready\nlater output\n" {
		t.Errorf("tail %q", got)
	}
}
