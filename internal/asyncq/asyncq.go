// Package asyncq is agentjq's one bounded asynchronous writer. Callers put
// whole pieces (lines, batches of lines) and return at once, or wait for
// room; one goroutine of the queue's own hands them, in the order they were
// put, a batch at a time, to a sink. A reader that stops reading therefore
// stalls that goroutine alone, never the caller: the caller waits for it
// only with a bound (Drain, Flushed, WaitRoom with stalled).
//
// Writer is a Queue of whole lines over an io.Writer: the bridge's outputs
// (stdout, stderr, the agent's stdin, a front end's own client) are
// Writers; the recorder (its lines, its writes to the file) runs on Queues
// with sinks of its own.
package asyncq

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Options configure a queue.
type Options[T any] struct {
	// Limit is how many bytes the queue holds before WaitRoom holds its
	// caller back and Offer drops. One piece larger than Limit is let in
	// once the queue is empty.
	Limit int
	// Copy has Put copy the bytes into the queue's own buffers (two of
	// Limit's size, one filling while the sink has the other), so the
	// caller may reuse them at once. Bytes then count against Limit until
	// the sink takes them; without Copy, until the sink is done with them.
	Copy bool
	// Release, when set, is called for each item the queue drops itself
	// (after Abandon, or once the stream is closed); the sink is
	// responsible for the items it is handed.
	Release func(Item[T])
}

// Item is one piece put: Meta is the caller's, B the bytes (with Copy, the
// queue's copy, valid until the sink returns).
type Item[T any] struct {
	Meta T
	B    []byte
}

// Batch is what the sink is handed: the items put since the last batch,
// and how many bytes Offer dropped meanwhile. Ended is set once, on the
// last call, when the queue was ended and everything before was handed.
type Batch[T any] struct {
	Items   []Item[T]
	Dropped int64
	Ended   bool
}

// Sink writes one batch. An error closes the queue: nothing is handed on.
type Sink[T any] func(q *Queue[T], b Batch[T]) error

// Queue is one bounded asynchronous stream.
type Queue[T any] struct {
	opts Options[T]
	sink Sink[T]

	mu        sync.Mutex
	items     []Item[T]
	spare     []Item[T]
	buf, free []byte // with Copy: the buffer Put fills, the one the sink has
	queued    int
	dropped   int64
	progress  time.Time // a batch or a segment was written, or the queue was empty
	ending    bool      // End: drain and stop, no more puts
	closed    bool      // the sink failed, or the stream was closed or abandoned
	wake      chan struct{}
	room      chan struct{} // closed and renewed whenever bytes leave the queue
	closedC   chan struct{}
	done      chan struct{}
}

// New starts a queue that hands its batches to sink.
func New[T any](opts Options[T], sink Sink[T]) *Queue[T] {
	q := &Queue[T]{opts: opts, sink: sink, wake: make(chan struct{}, 1),
		room: make(chan struct{}), closedC: make(chan struct{}), done: make(chan struct{}), progress: time.Now()}
	if opts.Copy {
		q.buf, q.free = make([]byte, 0, opts.Limit), make([]byte, 0, opts.Limit)
	}
	go q.run()
	return q
}

// WaitRoom waits until n more bytes fit, and reports false when the stream
// ended first. With stalled > 0 it gives up on a reader that has taken
// nothing for stalled: the stream is abandoned. It also gives up,
// reporting false, once stop (when not nil) is closed: the caller's
// request was cancelled.
func (q *Queue[T]) WaitRoom(n int, stalled time.Duration, stop <-chan struct{}) bool {
	var tick <-chan time.Time
	if stalled > 0 {
		t := time.NewTicker(max(stalled/10, time.Millisecond))
		defer t.Stop()
		tick = t.C
	}
	for {
		q.mu.Lock()
		if q.closed || q.ending {
			q.mu.Unlock()
			return false
		}
		if q.queued == 0 || q.queued+n <= q.opts.Limit {
			q.mu.Unlock()
			return true
		}
		room := q.room
		q.mu.Unlock()
		select {
		case <-room:
		case <-q.closedC:
		case <-stop:
			return false
		case <-tick:
			if q.StalledFor() >= stalled {
				q.Abandon()
				return false
			}
		}
	}
}

// Put queues b (WaitRoom first for backpressure). It reports false, and
// releases the item, when the stream has ended.
func (q *Queue[T]) Put(meta T, b []byte) bool { return q.put(meta, b, false) }

// Offer is Put that drops b rather than go past the limit: the bytes
// dropped are counted and handed to the sink (Batch.Dropped).
func (q *Queue[T]) Offer(meta T, b []byte) bool { return q.put(meta, b, true) }

func (q *Queue[T]) put(meta T, b []byte, lossy bool) bool {
	it := Item[T]{Meta: meta, B: b}
	q.mu.Lock()
	if q.closed || q.ending || (lossy && q.queued > 0 && q.queued+len(b) > q.opts.Limit) {
		if lossy && !q.closed {
			q.dropped += int64(len(b))
		}
		q.mu.Unlock()
		q.release(it)
		return false
	}
	if q.queued == 0 {
		q.progress = time.Now()
	}
	if q.opts.Copy {
		off := len(q.buf)
		q.buf = append(q.buf, b...)
		it.B = q.buf[off:len(q.buf):len(q.buf)]
	}
	wake := len(q.items) == 0
	q.items = append(q.items, it)
	q.queued += len(b)
	q.mu.Unlock()
	if wake {
		q.signal()
	}
	return true
}

func (q *Queue[T]) release(it Item[T]) {
	if q.opts.Release != nil {
		q.opts.Release(it)
	}
}

func (q *Queue[T]) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *Queue[T]) run() {
	defer close(q.done)
	for {
		q.mu.Lock()
		for len(q.items) == 0 && q.dropped == 0 && !q.ending && !q.closed {
			q.mu.Unlock()
			<-q.wake
			q.mu.Lock()
		}
		if q.closed {
			batch := q.items
			q.items = nil
			q.mu.Unlock()
			for _, it := range batch {
				q.release(it)
			}
			q.freed()
			return
		}
		b := Batch[T]{Items: q.items, Dropped: q.dropped}
		b.Ended = len(b.Items) == 0 && b.Dropped == 0 // ending, and all handed
		q.items, q.spare, q.dropped = q.spare[:0], nil, 0
		n := 0
		for _, it := range b.Items {
			n += len(it.B)
		}
		if q.opts.Copy {
			q.buf, q.free = q.free[:0], q.buf
			if cap(q.buf) > 2*q.opts.Limit {
				q.buf = make([]byte, 0, q.opts.Limit) // a huge line's buffer is not kept
			}
			q.queued -= n
		}
		q.mu.Unlock()
		if q.opts.Copy {
			q.freed()
		}
		err := q.sink(q, b)
		q.mu.Lock()
		if q.spare == nil {
			q.spare = b.Items
		}
		if !q.opts.Copy {
			q.queued -= n
		}
		q.progress = time.Now()
		if err != nil {
			q.closeLocked()
		}
		q.mu.Unlock()
		q.freed()
		if err != nil || b.Ended {
			return
		}
	}
}

// Progress notes that the sink's write is moving (between the segments of
// a large piece), so a reader slowly taking a long line is not taken for
// one that takes nothing.
func (q *Queue[T]) Progress() {
	q.mu.Lock()
	q.progress = time.Now()
	q.mu.Unlock()
}

// freed wakes the callers waiting for room.
func (q *Queue[T]) freed() {
	q.mu.Lock()
	close(q.room)
	q.room = make(chan struct{})
	q.mu.Unlock()
}

func (q *Queue[T]) closeLocked() {
	if !q.closed {
		q.closed = true
		close(q.closedC)
		q.queued = 0
	}
}

// MarkClosed drops everything from now on (the reader went away).
func (q *Queue[T]) MarkClosed() {
	q.mu.Lock()
	q.closeLocked()
	q.mu.Unlock()
	q.signal()
}

// IsClosed reports whether the stream is closed (a write failed, or it was
// closed or abandoned).
func (q *Queue[T]) IsClosed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

// Queued is the bytes put and not yet written.
func (q *Queue[T]) Queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued
}

// Stopped reports whether the stream takes no more pieces: it was ended
// or closed.
func (q *Queue[T]) Stopped() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed || q.ending
}

// Ending reports whether End was called.
func (q *Queue[T]) Ending() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ending
}

// Closed is closed when the stream is.
func (q *Queue[T]) Closed() <-chan struct{} { return q.closedC }

// Done is closed when the queue's goroutine has returned.
func (q *Queue[T]) Done() <-chan struct{} { return q.done }

// Flushed waits until everything put so far is written (without Copy),
// the stream fails, or deadline passes (a zero deadline: until then).
func (q *Queue[T]) Flushed(deadline time.Time) {
	var expired <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		expired = t.C
	}
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
		case <-expired:
			return
		}
	}
}

// End stops taking pieces and lets the sink finish what is queued (its
// last batch is Ended). It does not wait: Done does.
func (q *Queue[T]) End() {
	q.mu.Lock()
	q.ending = true
	q.mu.Unlock()
	q.signal()
	q.freed()
}

// Drain ends the stream and waits for everything queued to be written: d
// at least, and past d for as long as the reader keeps taking bytes. It
// gives up on a reader that has taken nothing for stalled, at once if it
// already has (waiting longer for it only delays the exit), and reports
// the bytes it gave up on (0: all written). A reader that is slow but
// reading, such as a pipeline taking a 32 MiB line, gets all of it.
func (q *Queue[T]) Drain(d, stalled time.Duration) int {
	q.End()
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
	if q.StalledFor() >= stalled {
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
	return q.Abandon()
}

// StalledFor is how long the stream has had pieces queued without a write
// finishing (0 when nothing waits).
func (q *Queue[T]) StalledFor() time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queued == 0 || q.closed {
		return 0
	}
	return time.Since(q.progress)
}

// Abandon gives up on the stream: queued pieces are dropped and waiting
// callers released. A write already under way is left to its goroutine,
// which may stay blocked: nothing waits for it. It returns the bytes lost.
func (q *Queue[T]) Abandon() int {
	q.mu.Lock()
	lost := q.queued
	batch := q.items
	q.items = nil
	if !q.closed {
		// queued stays: a later Drain reports the same loss.
		q.closed = true
		close(q.closedC)
	}
	q.mu.Unlock()
	for _, it := range batch {
		q.release(it)
	}
	q.signal()
	q.freed()
	return lost
}

// Writer is a Queue of whole lines for one stream a peer reads (agentjq's
// stdout or stderr, the agent's stdin, a front end's events): callers
// hand it lines and return at once, so a peer that stops reading stalls
// the queue's goroutine alone. A line's done func, when set, is called
// once its bytes are no longer needed (written or dropped).
//
// Lines are written in the order they were put. Once a write fails (the
// reader went away) everything is dropped and Closed is closed.
type Writer struct {
	*Queue[func()]
	w       io.Writer
	opts    WriterOptions
	scratch []byte // the queue goroutine's
}

// WriterOptions configure a Writer.
type WriterOptions struct {
	// Limit is the Queue's: the bytes held before WaitRoom waits (or,
	// with Lossy, Send drops).
	Limit int
	// Lossy: past the limit, lines are dropped (and counted) rather than
	// queued without bound; for a stream that must never hold anyone up
	// (stderr). DropNote, a format taking the bytes dropped, is written
	// in their place.
	Lossy    bool
	DropNote string
	// Closer, when set, is closed once the queue has drained on End (the
	// agent's stdin: EOF after the last line).
	Closer io.Closer
	// Hold, when set, is called before each batch is written and returns
	// when it may be (or once stop is closed): a gate that holds output
	// while a prompt is open.
	Hold func(stop <-chan struct{})
}

// NewWriter starts a Writer over w (io.Discard when nil).
func NewWriter(w io.Writer, opts WriterOptions) *Writer {
	if w == nil {
		w = io.Discard
	}
	q := &Writer{w: w, opts: opts}
	q.Queue = New(Options[func()]{Limit: opts.Limit, Release: release}, q.write)
	return q
}

func release(it Item[func()]) {
	if it.Meta != nil {
		it.Meta()
	}
}

// Send queues b without waiting; it reports false when b was dropped.
func (q *Writer) Send(b []byte, done func()) bool {
	if q.opts.Lossy {
		return q.Offer(done, b)
	}
	return q.Put(done, b)
}

var errGivenUp = errors.New("the stream was closed")

// write writes one batch out. Small lines are joined into one write, so a
// burst of events costs one system call; large ones go as they are.
func (q *Writer) write(aq *Queue[func()], b Batch[func()]) error {
	if b.Ended {
		if q.opts.Closer != nil {
			q.opts.Closer.Close()
		}
		return nil
	}
	if q.opts.Hold != nil {
		q.opts.Hold(aq.Closed())
		if aq.IsClosed() {
			releaseAll(b.Items)
			return errGivenUp
		}
	}
	var err error
	if b.Dropped > 0 && q.opts.DropNote != "" {
		_, err = fmt.Fprintf(q.w, q.opts.DropNote, b.Dropped)
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
				err = q.writeSegments(scratch)
				scratch = scratch[:0]
			}
			if err == nil {
				err = q.writeSegments(p.B)
			}
		}
		release(p)
	}
	if err == nil && len(scratch) > 0 {
		err = q.writeSegments(scratch)
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
func (q *Writer) writeSegments(b []byte) error {
	for len(b) > 0 {
		n := min(len(b), largeSegment)
		if _, err := q.w.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		if len(b) > 0 {
			q.Progress()
		}
	}
	return nil
}

func releaseAll(ps []Item[func()]) {
	for _, p := range ps {
		release(p)
	}
}
