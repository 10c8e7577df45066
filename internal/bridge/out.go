package bridge

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// queueWriter owns one stream a peer reads (agentjq's stdout or stderr,
// the agent's stdin). Callers hand it whole lines and return at once; its
// own goroutine does the writes. A peer that stops reading therefore stalls
// that goroutine alone, never the session's control loop, its timers or
// its signals: the shutdown path only ever waits for it with a deadline.
//
// Lines are written in the order they were put. Once a write fails (the
// reader went away) everything is dropped and closedC is closed.
type queueWriter struct {
	w     io.Writer
	limit int // bytes queued before put(wait) holds its caller back
	// lossy: past limit, lines are dropped (and counted) rather than
	// queued without bound; for stderr, which must never hold anyone up.
	lossy bool

	mu        sync.Mutex
	queue     []piece
	queued    int
	dropped   int64
	progress  time.Time // when a write last finished, or the queue was last empty
	ending    bool      // drain and stop: no more puts
	closed    bool      // a write failed, or the stream was closed
	abandoned bool      // given up on: the writer may be stuck in a write
	wake      chan struct{}
	room      chan struct{} // closed and renewed whenever bytes leave the queue
	closedC   chan struct{}
	done      chan struct{} // the writer goroutine returned
	// closer, when set, is closed once the queue has drained on end (the
	// agent's stdin: EOF after the last line).
	closer io.Closer
	// gate, when set, holds the writes while a prompt is open.
	gate *OutputGate
}

// piece is one queued write; release, when set, is called once its bytes
// are no longer needed (written or dropped).
type piece struct {
	b       []byte
	release func()
}

func newQueueWriter(w io.Writer, limit int) *queueWriter {
	if w == nil {
		w = io.Discard
	}
	q := &queueWriter{w: w, limit: limit, wake: make(chan struct{}, 1),
		room: make(chan struct{}), closedC: make(chan struct{}), done: make(chan struct{}), progress: time.Now()}
	go q.run()
	return q
}

// put queues b. With wait, it first holds the caller back while the queue
// is over its limit (backpressure for the data path), unless the stream
// closes or is abandoned. It reports false when b was dropped.
func (q *queueWriter) put(b []byte, release func(), wait bool) bool {
	if wait && !q.waitRoom(len(b)) {
		if release != nil {
			release()
		}
		return false
	}
	return q.putNow(b, release)
}

// waitRoom waits until n more bytes fit, or the stream ends. One piece
// larger than the limit is let in once the queue is empty.
func (q *queueWriter) waitRoom(n int) bool {
	for {
		q.mu.Lock()
		if q.closed || q.ending || q.abandoned {
			q.mu.Unlock()
			return false
		}
		if q.queued == 0 || q.queued+n <= q.limit {
			q.mu.Unlock()
			return true
		}
		room := q.room
		q.mu.Unlock()
		select {
		case <-room:
		case <-q.closedC:
		}
	}
}

func (q *queueWriter) putNow(b []byte, release func()) bool {
	q.mu.Lock()
	if q.closed || q.ending || q.abandoned || (q.lossy && q.queued > 0 && q.queued+len(b) > q.limit) {
		if q.lossy && !q.closed && !q.abandoned {
			q.dropped += int64(len(b))
		}
		q.mu.Unlock()
		if release != nil {
			release()
		}
		return false
	}
	if q.queued == 0 {
		q.progress = time.Now()
	}
	q.queue = append(q.queue, piece{b, release})
	q.queued += len(b)
	q.mu.Unlock()
	q.signal()
	return true
}

func (q *queueWriter) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run writes the queue out. Small pieces are joined into one write, so a
// burst of events costs one system call; large ones go as they are.
func (q *queueWriter) run() {
	defer close(q.done)
	var scratch []byte
	for {
		q.mu.Lock()
		for len(q.queue) == 0 && q.dropped == 0 && !q.ending && !q.closed {
			q.mu.Unlock()
			<-q.wake
			q.mu.Lock()
		}
		if q.gate != nil {
			q.mu.Unlock()
			q.gate.wait(q.closedC)
			q.mu.Lock()
		}
		batch := q.queue
		q.queue = nil
		dropped := q.dropped
		q.dropped = 0
		ending, closed := q.ending, q.closed
		q.mu.Unlock()
		if closed {
			releaseAll(batch)
			q.freed()
			return
		}
		var err error
		if dropped > 0 {
			_, err = fmt.Fprintf(q.w, "agentjq: %d bytes of stderr dropped: stderr is not being read\n", dropped)
		}
		n := 0
		for i, p := range batch {
			if err != nil {
				releaseAll(batch[i:])
				break
			}
			if len(p.b) < 32<<10 {
				scratch = append(scratch, p.b...)
			} else {
				if len(scratch) > 0 {
					err = q.writeSegments(scratch)
					scratch = scratch[:0]
				}
				if err == nil {
					err = q.writeSegments(p.b)
				}
			}
			n += len(p.b)
			if p.release != nil {
				p.release()
			}
		}
		if err == nil && len(scratch) > 0 {
			err = q.writeSegments(scratch)
		}
		if cap(scratch) > 1<<20 {
			scratch = nil
		}
		scratch = scratch[:0]
		q.mu.Lock()
		q.queued -= n
		q.progress = time.Now()
		if err != nil {
			q.closeLocked()
		}
		q.mu.Unlock()
		q.freed()
		if err != nil {
			return
		}
		if ending && len(batch) == 0 && dropped == 0 {
			q.mu.Lock()
			empty := len(q.queue) == 0
			c := q.closer
			q.mu.Unlock()
			if empty {
				if c != nil {
					c.Close()
				}
				return
			}
		}
	}
}

// largeSegment is how much of a large piece one write hands the reader.
// Progress is noted between segments, so a reader slowly taking a 32 MiB
// line is not mistaken for one that takes nothing.
const largeSegment = 256 << 10

// writeSegments writes b a segment at a time, noting progress between them.
func (q *queueWriter) writeSegments(b []byte) error {
	for len(b) > 0 {
		n := min(len(b), largeSegment)
		if _, err := q.w.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		if len(b) > 0 {
			q.mu.Lock()
			q.progress = time.Now()
			q.mu.Unlock()
		}
	}
	return nil
}

func releaseAll(ps []piece) {
	for _, p := range ps {
		if p.release != nil {
			p.release()
		}
	}
}

// freed wakes the callers waiting for room.
func (q *queueWriter) freed() {
	q.mu.Lock()
	close(q.room)
	q.room = make(chan struct{})
	q.mu.Unlock()
}

func (q *queueWriter) closeLocked() {
	if !q.closed {
		q.closed = true
		close(q.closedC)
		q.queued = 0
	}
}

// markClosed drops everything from now on (the reader went away).
func (q *queueWriter) markClosed() {
	q.mu.Lock()
	q.closeLocked()
	q.mu.Unlock()
	q.signal()
}

func (q *queueWriter) isClosed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

// flushed waits until everything queued so far is written, the stream
// fails, or deadline passes.
func (q *queueWriter) flushed(deadline time.Time) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for {
		q.mu.Lock()
		if q.queued == 0 || q.closed {
			q.mu.Unlock()
			return
		}
		room := q.room
		q.mu.Unlock()
		select {
		case <-room:
		case <-q.closedC:
		case <-t.C:
			return
		}
	}
}

// end stops taking lines and lets the writer finish what is queued (then
// close closer, if any). It does not wait.
func (q *queueWriter) end() {
	q.mu.Lock()
	q.ending = true
	q.mu.Unlock()
	q.signal()
	q.freed()
}

// drain ends the stream and waits for everything queued to be written:
// d at least, and past d for as long as the reader keeps taking bytes. It
// gives up on a reader that has taken nothing for stalled, at once if it
// already has (waiting longer for it only delays the exit), and reports
// the bytes it gave up on (0: all written). A reader that is slow but
// reading, such as a pipeline taking a 32 MiB line, gets all of it.
func (q *queueWriter) drain(d, stalled time.Duration) int {
	q.end()
	// left is how much longer the reader gets: nothing once the stream is
	// closed or given up on (its writer may be stuck for good).
	left := func() time.Duration {
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.closed {
			return 0
		}
		return stalled - time.Since(q.progress)
	}
	wait := d
	if q.stalledFor() >= stalled {
		wait = 0
	}
	for wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-q.done:
			t.Stop()
			return 0
		case <-t.C:
		}
		wait = left()
	}
	return q.abandon()
}

// stalledFor is how long the stream has had lines queued without a write
// finishing (0 when nothing waits).
func (q *queueWriter) stalledFor() time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queued == 0 || q.closed {
		return 0
	}
	return time.Since(q.progress)
}

// abandon gives up on the stream: queued lines are dropped and waiting
// callers released. A write already under way is left to its goroutine,
// which may stay blocked: nothing waits for it. It returns the bytes lost.
func (q *queueWriter) abandon() int {
	q.mu.Lock()
	lost := q.queued
	batch := q.queue
	q.queue = nil
	q.abandoned = true
	if !q.closed {
		q.closed = true
		close(q.closedC)
	}
	q.mu.Unlock()
	releaseAll(batch)
	q.signal()
	q.freed()
	return lost
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
