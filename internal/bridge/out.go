package bridge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/agentjq/agentjq/internal/asyncq"
	"github.com/agentjq/agentjq/internal/protocol"
)

// queueWriter owns one stream a peer reads (agentjq's stdout or stderr,
// the agent's stdin): an asyncq.Queue whose goroutine writes the lines.
// Callers hand it whole lines and return at once, so a peer that stops
// reading stalls that goroutine alone, never the session's control loop,
// its timers or its signals: the shutdown path only ever waits for it with
// a deadline. A line's Meta, when set, is called once its bytes are no
// longer needed (written or dropped).
//
// Lines are written in the order they were put. Once a write fails (the
// reader went away) everything is dropped and Closed is closed.
type queueWriter struct {
	*asyncq.Queue[func()]
	w io.Writer
	// lossy: past the limit, lines are dropped (and counted) rather than
	// queued without bound; for stderr, which must never hold anyone up.
	lossy bool
	// closer, when set, is closed once the queue has drained on end (the
	// agent's stdin: EOF after the last line).
	closer io.Closer
	// gate, when set, holds the writes while a prompt is open.
	gate    *OutputGate
	scratch []byte // the writer goroutine's
}

func newQueueWriter(w io.Writer, limit int) *queueWriter {
	if w == nil {
		w = io.Discard
	}
	q := &queueWriter{w: w}
	q.Queue = asyncq.New(asyncq.Options[func()]{Limit: limit, Release: release}, q.write)
	return q
}

func release(it asyncq.Item[func()]) {
	if it.Meta != nil {
		it.Meta()
	}
}

// put queues b. With wait, it first holds the caller back while the queue
// is over its limit (backpressure for the data path), unless the stream
// closes or is abandoned. It reports false when b was dropped.
func (q *queueWriter) put(b []byte, done func(), wait bool) bool {
	if wait && !q.WaitRoom(len(b), 0, nil) {
		release(asyncq.Item[func()]{Meta: done})
		return false
	}
	return q.putNow(b, done)
}

func (q *queueWriter) putNow(b []byte, done func()) bool {
	if q.lossy {
		return q.Offer(done, b)
	}
	return q.Put(done, b)
}

var errGivenUp = errors.New("the stream was closed")

// write writes one batch out. Small lines are joined into one write, so a
// burst of events costs one system call; large ones go as they are.
func (q *queueWriter) write(aq *asyncq.Queue[func()], b asyncq.Batch[func()]) error {
	if b.Ended {
		if q.closer != nil {
			q.closer.Close()
		}
		return nil
	}
	if q.gate != nil {
		q.gate.wait(aq.Closed())
		if aq.IsClosed() {
			releaseAll(b.Items)
			return errGivenUp
		}
	}
	var err error
	if b.Dropped > 0 {
		_, err = fmt.Fprintf(q.w, "agentjq: %d bytes of stderr dropped: stderr is not being read\n", b.Dropped)
	}
	scratch := q.scratch[:0]
	for i, p := range b.Items {
		if err != nil {
			releaseAll(b.Items[i:])
			break
		}
		if len(p.B) < 32<<10 {
			scratch = append(scratch, p.B...)
		} else {
			if len(scratch) > 0 {
				err = q.writeSegments(aq, scratch)
				scratch = scratch[:0]
			}
			if err == nil {
				err = q.writeSegments(aq, p.B)
			}
		}
		release(p)
	}
	if err == nil && len(scratch) > 0 {
		err = q.writeSegments(aq, scratch)
	}
	if cap(scratch) > 1<<20 {
		scratch = nil
	}
	q.scratch = scratch[:0]
	return err
}

// largeSegment is how much of a large piece one write hands the reader.
// Progress is noted between segments, so a reader slowly taking a 32 MiB
// line is not mistaken for one that takes nothing.
const largeSegment = 256 << 10

// writeSegments writes b a segment at a time, noting progress between them.
func (q *queueWriter) writeSegments(aq *asyncq.Queue[func()], b []byte) error {
	for len(b) > 0 {
		n := min(len(b), largeSegment)
		if _, err := q.w.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		if len(b) > 0 {
			aq.Progress()
		}
	}
	return nil
}

func releaseAll(ps []asyncq.Item[func()]) {
	for _, p := range ps {
		release(p)
	}
}

// lineWriter is an io.Writer over a lossy queueWriter: each Write is
// queued as its own copy, never blocking the writer.
type lineWriter struct{ q *queueWriter }

func (l lineWriter) Write(p []byte) (int, error) {
	l.q.put(append([]byte(nil), p...), nil, false)
	return len(p), nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	if len(p) > t.max {
		p = p[len(p)-t.max:]
	}
	t.buf = append(t.buf, p...)
	// Trim only once the buffer holds twice the tail: a flood of short
	// lines then costs a copy of the tail per max bytes, not per line.
	if len(t.buf) >= 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	if over := len(t.buf) - t.max; over > 0 {
		return string(t.buf[over:])
	}
	return string(t.buf)
}

// agentStdin is the agent's stdin: a queue that never blocks its writers,
// and a lock that keeps the tap's order of lines that of the queue.
type agentStdin struct {
	mu   sync.Mutex
	q    *queueWriter
	file *os.File
	tap  func(party protocol.Party, line []byte)
}

// write queues one line of agentjq's own for the agent's stdin; it never
// blocks.
func (in *agentStdin) write(line []byte) error { return in.writeAs(protocol.PartyAgentjq, line) }

// writeAs is write for a line whose party is known: in a proxy the
// recording marks who wrote it.
func (in *agentStdin) writeAs(party protocol.Party, line []byte) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.writeLocked(party, line)
}

func (in *agentStdin) writeLocked(party protocol.Party, line []byte) error {
	if in.q.Stopped() {
		return errors.New("the agent's stdin is closed")
	}
	in.tap(party, line)
	buf := make([]byte, 0, len(line)+1)
	if !in.q.put(append(append(buf, line...), '\n'), nil, false) {
		return errors.New("the agent's stdin is closed")
	}
	return nil
}

// close ends the agent's stdin once what is queued is written: the agent
// reads every answer, then EOF.
func (in *agentStdin) close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.q.End()
}

// forceClose closes the pipe at once, whatever is queued or being
// written: the writer's blocked write fails and its goroutine ends.
func (in *agentStdin) forceClose() {
	in.close()
	in.q.Abandon()
	in.file.Close()
}

// tapIn taps a line written to the agent's stdin; in a proxy the
// recording marks who wrote it.
func (s *session) tapIn(party protocol.Party, line []byte) {
	if s.fwd != nil {
		s.fwd.tap(s, protocol.DirIn, party, line, 0)
	} else {
		s.tap(protocol.DirIn, line, 0)
	}
}

// event writes one of agentjq's own events, unless --no-events.
func (s *session) event(v any) {
	if s.ended.Load() {
		return
	}
	b := protocol.Marshal(v)
	if s.fwd != nil {
		s.fwd.event(s, protocol.PartyAgentjq, b)
		return
	}
	s.tap(protocol.DirEvent, b, 0)
	if !s.opts.NoEvents {
		s.outLine(b)
	}
}

// outLine queues one line of agentjq's own for stdout; it never blocks.
func (s *session) outLine(b []byte) {
	s.out.put(append(b[:len(b):len(b)], '\n'), nil, false)
}

func (s *session) warn(code, msg string) { s.warnLine(code, msg, 0) }

func (s *session) warnLine(code, msg string, line int) {
	w := protocol.NewWarning(code, msg)
	w.Line = line
	s.event(w)
}
