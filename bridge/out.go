package bridge

import (
	"bufio"
	"io"
	"sync"
)

// outWriter is agentjq's stdout: whole lines only, from any goroutine. It
// flushes when the caller says a burst has ended, so a live pipeline sees
// each event as it happens while a fast stream still moves in large writes.
// Once a write fails (the reader went away) it drops everything and says so
// on closedC.
type outWriter struct {
	mu      sync.Mutex
	w       *bufio.Writer
	closed  bool
	closedC chan struct{}
}

func newOutWriter(w io.Writer) *outWriter {
	if w == nil {
		w = io.Discard
	}
	return &outWriter{w: bufio.NewWriterSize(w, 64<<10), closedC: make(chan struct{})}
}

// line writes b and a newline; flush says no more lines are waiting.
func (o *outWriter) line(b []byte, flush bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	// bufio.Writer keeps its first error, so checking the last call is enough.
	o.w.Write(b)
	err := o.w.WriteByte('\n')
	if err == nil && flush {
		err = o.w.Flush()
	}
	if err != nil {
		o.closeLocked()
	}
}

// write writes whole lines at once; a last line without its newline gets
// one, as line would give it.
func (o *outWriter) write(b []byte, flush bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	_, err := o.w.Write(b)
	if err == nil && len(b) > 0 && b[len(b)-1] != '\n' {
		err = o.w.WriteByte('\n')
	}
	if err == nil && flush {
		err = o.w.Flush()
	}
	if err != nil {
		o.closeLocked()
	}
}

func (o *outWriter) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed && o.w.Flush() != nil {
		o.closeLocked()
	}
}

func (o *outWriter) markClosed() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closeLocked()
}

func (o *outWriter) closeLocked() {
	if !o.closed {
		o.closed = true
		close(o.closedC)
	}
}

func (o *outWriter) isClosed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.buf) }
