package recording

import (
	"io"
	"sync"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
)

// queue is the Async Writer's hand-off: Tap copies the line into a buffer
// under a lock, so the caller may reuse its memory at once; the Writer's
// goroutine takes the whole buffer at a time, redacts and encodes its
// lines in order and writes them in batches of whole lines. While it
// works, the next lines gather in the other buffer.
type queue struct {
	w     *Writer
	limit int

	mu     sync.Mutex
	cond   *sync.Cond
	items  []qitem
	buf    []byte
	closed bool
	done   chan struct{}
}

type qitem struct {
	dir        protocol.Direction
	party      protocol.Party
	known      protocol.Known // what the tap knew of the line
	t          time.Time
	off, n     int
	setVersion bool // the line is a version for SetAgentVersion
	// flushed, when set, marks a Flush: it is closed once every line put
	// before it has been handed to the write goroutine and written.
	flushed chan struct{}
}

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

// put copies line into the queue, waiting while the queue holds limit
// bytes already (a longer line is queued alone). It reports false when
// the queue is closed and took nothing.
func (q *queue) put(it qitem, line []byte) bool {
	q.mu.Lock()
	for len(q.buf) > 0 && len(q.buf)+len(line) > q.limit && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		q.mu.Unlock()
		return false
	}
	wake := len(q.items) == 0 // the goroutine waits only on an empty queue
	it.off, it.n = len(q.buf), len(line)
	q.buf = append(q.buf, line...)
	q.items = append(q.items, it)
	if wake {
		q.cond.Broadcast()
	}
	q.mu.Unlock()
	return true
}

// flush waits until every line put so far is written.
func (q *queue) flush() {
	done := make(chan struct{})
	if q.put(qitem{flushed: done}, nil) {
		<-done
	}
}

func (q *queue) run() {
	defer close(q.done)
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
		// Take the whole queue, leave the spare buffers for Tap.
		items, q.items = q.items, items[:0]
		buf, q.buf = q.buf, buf[:0]
		if cap(q.buf) > 2*q.limit {
			q.buf = make([]byte, 0, q.limit) // a huge line's buffer is not kept
		}
		q.cond.Broadcast()
		q.mu.Unlock()
		for _, it := range items {
			line := buf[it.off : it.off+it.n]
			if it.flushed != nil {
				q.w.mu.Lock()
				q.w.flushLocked()
				q.w.mu.Unlock()
				q.w.out.wait()
				close(it.flushed)
				continue
			}
			if it.setVersion {
				q.w.setVersion(string(line), it.t, false)
				continue
			}
			q.w.process(it.dir, it.party, line, it.known, it.t, false)
		}
		q.w.mu.Lock()
		q.w.flushLocked()
		q.w.mu.Unlock()
	}
}

// close makes put a no-op and waits for the queued lines to be written.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
	<-q.done
}

// writeQ makes the Async Writer's write calls on a goroutine of its own,
// so that the kernel's copying of one batch into the file overlaps with
// redacting and encoding the next. Buffers go round: the one being
// filled, one being written, one spare.
type writeQ struct {
	full  chan []byte
	spare chan []byte
	done  chan struct{}

	mu      sync.Mutex
	cond    *sync.Cond // signalled when a write is done
	handed  int        // buffers handed for writing
	written int        // of them, written (or skipped after an error)
	err     error      // the first write error
}

func newWriteQ(w io.Writer) *writeQ {
	q := &writeQ{full: make(chan []byte, 1), spare: make(chan []byte, 2), done: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	q.spare <- nil
	q.spare <- nil
	go func() {
		defer close(q.done)
		for b := range q.full {
			var err error
			if q.Err() == nil {
				_, err = w.Write(b)
			}
			q.mu.Lock()
			if err != nil {
				q.err = err
			}
			q.written++
			q.cond.Broadcast()
			q.mu.Unlock()
			if cap(b) > 8<<20 {
				b = nil // do not keep one huge line's buffer
			}
			q.spare <- b[:0]
		}
	}()
	return q
}

// hand queues b for writing and returns an empty buffer, waiting for one
// while the others are being written.
func (q *writeQ) hand(b []byte) []byte {
	next := <-q.spare
	q.mu.Lock()
	q.handed++
	q.mu.Unlock()
	q.full <- b
	return next
}

// wait returns once every buffer handed so far is written.
func (q *writeQ) wait() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.written < q.handed {
		q.cond.Wait()
	}
}

// Err returns the first write error.
func (q *writeQ) Err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// close waits for the pending writes.
func (q *writeQ) close() {
	close(q.full)
	<-q.done
}
