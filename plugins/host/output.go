package host

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// outputSink is where the link writes a plugin's stdout or stderr. Its
// Write never blocks: the link reads a program's stdout, stderr and exit
// through one stream, so a writer that waits (go-plugin stops reading
// stdout after a line longer than its scanner takes) would hold back the
// exit, the kill's answer and every later byte, and lab would wait for
// ever (issue 31: a plugin that wrote 200 MiB to fd 1 hung `lab run`
// past its --timeout and SIGTERM). What arrives is queued, up to max
// bytes, and a pump hands it on to w; past max it is dropped and
// counted. Lines are cut at maxLine bytes, so that go-plugin's line
// reader never gives up.
type outputSink struct {
	w       io.WriteCloser
	max     int
	maxLine int

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []byte
	closed  bool
	total   int64
	dropped int64
	line    int // bytes since the last newline
	done    chan struct{}
}

// The defaults: a plugin's output is for diagnosis, not data.
const (
	sinkMax     = 1 << 20
	sinkMaxLine = 16 << 10
)

func newOutputSink(w io.WriteCloser, max, maxLine int) *outputSink {
	s := &outputSink{w: w, max: max, maxLine: maxLine, done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	go s.pump()
	return s
}

// Write queues p (cut into lines of at most maxLine bytes), dropping what
// does not fit; it never blocks and never fails.
func (s *outputSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += int64(len(p))
	if s.closed {
		s.dropped += int64(len(p))
		return len(p), nil
	}
	for _, b := range p {
		if len(s.queue) >= s.max {
			s.dropped++
			continue
		}
		if b == '\n' {
			s.line = 0
		} else if s.line++; s.line > s.maxLine {
			s.queue = append(s.queue, '\n')
			s.line = 1
		}
		s.queue = append(s.queue, b)
	}
	s.cond.Signal()
	return len(p), nil
}

// pump hands the queue on to w until the sink is closed and the queue is
// empty, then closes w. A w that stops reading holds the pump, never the
// writer; Close then gives up on it.
func (s *outputSink) pump() {
	defer close(s.done)
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closed {
			s.cond.Wait()
		}
		if len(s.queue) == 0 && s.closed {
			s.mu.Unlock()
			s.w.Close()
			return
		}
		chunk := s.queue
		s.queue = nil
		s.mu.Unlock()
		if _, err := s.w.Write(chunk); err != nil {
			s.mu.Lock()
			s.dropped += int64(len(chunk))
			s.mu.Unlock()
		}
	}
}

// Close ends the stream: what is queued is handed on, then w is closed.
// A w that no longer reads gets closeGrace to take the queue, then is
// closed under the pump (an io.PipeWriter's Close ends a Write blocked
// on it), so that Close returns.
func (s *outputSink) Close() error {
	s.mu.Lock()
	s.closed = true
	s.cond.Signal()
	s.mu.Unlock()
	select {
	case <-s.done:
	case <-time.After(closeGrace):
		s.w.Close()
		<-s.done
	}
	return nil
}

// closeGrace is how long Close waits for w to take what is queued.
const closeGrace = 2 * time.Second

// Counts says how many bytes were written and how many were dropped.
func (s *outputSink) Counts() (total, dropped int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total, s.dropped
}

// describe is "" when nothing was dropped, else what was, for name
// ("stdout").
func (s *outputSink) describe(name string) string {
	total, dropped := s.Counts()
	if dropped == 0 {
		return ""
	}
	return fmt.Sprintf("the plugin wrote %s to its %s; lab dropped %s of it (it keeps at most %s queued: a plugin's output is for diagnosis, its results go in samples)",
		bytesText(total), name, bytesText(dropped), bytesText(int64(s.max)))
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
