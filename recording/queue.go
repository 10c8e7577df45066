package recording

import (
	"io"
	"sync"
	"time"
	"unsafe"
)

// queue is the Async Writer's hand-off: Tap appends the line's bytes to a
// buffer under a lock; one goroutine takes the whole buffer at a time,
// processes its lines in order and writes them with one write.
type queue struct {
	w     *Writer
	limit int

	mu     sync.Mutex
	cond   *sync.Cond
	items  []qitem
	buf    []byte
	lent   int // bytes of the queued lent lines
	closed bool
	done   chan struct{}
}

type qitem struct {
	dir        Direction
	party      Party
	t          time.Time
	off, n     int
	lent       []byte // the line, lent by the caller (TapChecked): not in buf
	release    func() // a Release marker: no line, call it in turn
	setVersion bool   // the line is a version for SetAgentVersion
	hintFree   bool   // Check found no hint in the line (TapChecked)
}

// A batch smaller than smallBatch waits gatherFor before it is taken.
const (
	smallBatch = 256 << 10
	gatherFor  = time.Millisecond
)

func newQueue(w *Writer, limit int) *queue {
	if limit <= 0 {
		limit = 8 << 20
	}
	// Buffers of the limit's size, so that appending never doubles them.
	q := &queue{w: w, limit: limit, done: make(chan struct{}), buf: make([]byte, 0, limit)}
	q.cond = sync.NewCond(&q.mu)
	go q.run()
	return q
}

func (q *queue) put(it qitem, line []byte) {
	q.mu.Lock()
	for q.held() > 0 && q.held()+len(line) > q.limit && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		q.mu.Unlock()
		if it.release != nil {
			it.release()
		}
		return
	}
	wake := len(q.items) == 0 // the goroutine waits only on an empty queue
	switch {
	case it.release != nil:
	case it.lent != nil:
		q.lent += len(line)
	default:
		it.off, it.n = len(q.buf), len(line)
		q.buf = append(q.buf, line...)
	}
	q.items = append(q.items, it)
	if wake {
		q.cond.Broadcast()
	}
	q.mu.Unlock()
}

func (q *queue) run() {
	defer close(q.done)
	defer q.w.wr.close()
	var items []qitem
	buf := make([]byte, 0, q.limit)
	for {
		q.mu.Lock()
		for len(q.items) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.items) == 0 {
			q.mu.Unlock()
			return
		}
		if q.held() < smallBatch && !q.closed {
			// Let a burst gather for a moment: one write and one wake-up
			// for many lines rather than one each.
			q.mu.Unlock()
			time.Sleep(gatherFor)
			q.mu.Lock()
		}
		// Take the whole queue, leave the spare buffers for Tap.
		items, q.items = q.items, items[:0]
		buf, q.buf = q.buf, buf[:0]
		q.lent = 0
		if cap(q.buf) > 2*q.limit {
			q.buf = make([]byte, 0, q.limit) // a huge line's buffer is not kept
		}
		q.cond.Broadcast()
		q.mu.Unlock()
		for i, it := range items {
			if it.release != nil {
				it.release() // the lines before it are encoded: no longer needed
				items[i] = qitem{}
				continue
			}
			line := buf[it.off : it.off+it.n]
			if it.lent != nil {
				line = it.lent
				items[i].lent = nil
			}
			if it.setVersion {
				q.w.setVersion(string(line), it.t, false)
				continue
			}
			q.w.process(it.dir, it.party, line, it.t, false, it.hintFree)
		}
		q.w.mu.Lock()
		q.w.flushLocked()
		q.w.mu.Unlock()
	}
}

// held is what the limit bounds: the bytes queued, copied or lent.
func (q *queue) held() int { return len(q.buf) + q.lent }

// close makes put a no-op and waits for the queued lines to be written.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
	<-q.done
}

// asyncWrites is the Async Writer's second goroutine: it makes the write
// calls, so that the kernel's copying into the page cache overlaps with
// redacting and encoding the next lines. Buffers of whole lines go round:
// the one being filled, and two full or spare.
type asyncWrites struct {
	full  chan batch
	spare chan []byte
	done  chan struct{}

	mu  sync.Mutex
	err error
}

// A batch is whole lines to write, b[pre:]; b[:pre] is room the write
// goroutine may use (directFile).
type batch struct {
	b   []byte
	pre int
}

func newAsyncWrites(w io.Writer) *asyncWrites {
	a := &asyncWrites{full: make(chan batch, 2), spare: make(chan []byte, 3), done: make(chan struct{})}
	size := 1 << 20
	if df, ok := w.(*directFile); ok && df != nil {
		size = directBatch + 1<<20 // a batch, and the line that ends it
	}
	for range 3 {
		a.spare <- alignedBuffer(size)
	}
	go a.run(w)
	return a
}

// first returns the first buffer to fill, with pre bytes of room.
func (a *asyncWrites) first(pre int) []byte {
	return (<-a.spare)[:pre]
}

func (a *asyncWrites) run(w io.Writer) {
	defer close(a.done)
	df, _ := w.(*directFile)
	for bt := range a.full {
		b := bt.b
		if a.Err() == nil {
			var err error
			if df != nil {
				// More to come at once: the last partial block can wait
				// for it rather than go through the page cache now.
				err = df.write(b, bt.pre, len(a.full) > 0)
			} else {
				_, err = w.Write(b[bt.pre:])
			}
			if err != nil {
				a.mu.Lock()
				a.err = err
				a.mu.Unlock()
			}
		}
		if cap(b) > 2*directBatch+2<<20 {
			b = alignedBuffer(1 << 20) // do not keep one huge line's buffer
		}
		a.spare <- b[:0]
	}
}

// hand queues bt for writing and returns an empty buffer, waiting for one
// when the others are pending.
func (a *asyncWrites) hand(bt batch) []byte {
	next := <-a.spare
	a.full <- bt
	return next
}

// alignedBuffer returns an empty buffer of capacity n whose memory starts
// on a dioAlign boundary, as O_DIRECT needs.
func alignedBuffer(n int) []byte {
	raw := make([]byte, n+dioAlign)
	skip := int(-uintptr(unsafe.Pointer(&raw[0])) & (dioAlign - 1))
	return raw[skip : skip : skip+n]
}

// Err returns the first write error.
func (a *asyncWrites) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// close waits for the pending writes.
func (a *asyncWrites) close() {
	close(a.full)
	<-a.done
}
