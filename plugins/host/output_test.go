package host

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// TestOutputSinkNeverBlocks: with a reader that never reads, Write
// returns at once whatever is written, past the cap it drops and counts,
// and Close returns within its grace (issue 31: the link's reader must
// never wait for go-plugin's).
func TestOutputSinkNeverBlocks(t *testing.T) {
	_, w := io.Pipe() // nobody reads
	s := newOutputSink(w, 1<<10, 64)
	start := time.Now()
	chunk := bytes.Repeat([]byte("x"), 4096)
	for range 100 {
		if n, err := s.Write(chunk); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("400 KiB to a sink nobody reads took %v", took)
	}
	s.Close()
	if took := time.Since(start); took > closeGrace+time.Second {
		t.Errorf("Close took %v, want at most its grace %v", took, closeGrace)
	}
	total, dropped := s.Counts()
	if total != 409600 || dropped < 409600-2*(1<<10) {
		t.Errorf("counts %d written, %d dropped; want 409600 written, all but the queue dropped", total, dropped)
	}
	if d := s.describe("stdout"); !strings.Contains(d, "400.0 KiB to its stdout") || !strings.Contains(d, "dropped") {
		t.Errorf("describe = %q", d)
	}
}

// TestOutputSinkCutsLongLines: a reader of lines (go-plugin's scanner
// gives up on a line over 64 KiB) gets everything, cut into lines of at
// most maxLine bytes; newlines of its own are kept.
func TestOutputSinkCutsLongLines(t *testing.T) {
	r, w := io.Pipe()
	s := newOutputSink(w, 1<<20, 100)
	got := make(chan []string)
	go func() {
		var lines []string
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		got <- lines
	}()
	s.Write([]byte("short\n"))
	s.Write(bytes.Repeat([]byte("y"), 250))
	s.Write([]byte("\nend\n"))
	s.Close()
	lines := <-got
	want := []string{"short", strings.Repeat("y", 100), strings.Repeat("y", 100), strings.Repeat("y", 50), "end"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", lines, want)
	}
	if _, dropped := s.Counts(); dropped != 0 || s.describe("stderr") != "" {
		t.Errorf("dropped %d (%q), want none", dropped, s.describe("stderr"))
	}
}
