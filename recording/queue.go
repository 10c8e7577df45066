package recording

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentjq/agentjq/internal/asyncq"
	"github.com/agentjq/agentjq/internal/protocol"
)

// The Async Writer's hand-off is an asyncq.Queue with Copy: Tap copies
// the line into the queue's buffer, so the caller may reuse its memory at
// once; the Writer's goroutine takes the whole buffer at a time, cuts a
// run of its lines into parts that up to WriterOptions.Workers goroutines
// redact, each taking the next part when free (processRun), then encodes
// the lines in order and writes them in batches of whole lines
// (processBatch). While it works, the next lines gather in the other
// buffer.

type qitem struct {
	dir        protocol.Direction
	party      protocol.Party
	known      protocol.Known // what the tap knew of the line
	t          time.Time
	setVersion bool // the line is a version for SetAgentVersion
	// flushed, when set, marks a Flush: it is closed once every line put
	// before it has been handed to the write goroutine and written.
	flushed chan struct{}
}

func newQueue(w *Writer, limit int) *asyncq.Queue[qitem] {
	if limit <= 0 {
		limit = 8 << 20
	}
	return asyncq.New(asyncq.Options[qitem]{Limit: limit, Copy: true}, w.processBatch)
}

// put copies line into the queue, waiting while the queue holds limit
// bytes already (a longer line is queued alone). It reports false when
// the queue is closed and took nothing.
func (w *Writer) put(it qitem, line []byte) bool {
	return w.q.WaitRoom(len(line), 0, nil) && w.q.Put(it, line)
}

// processBatch redacts, encodes and hands on one batch of lines, in
// order. A run of lines whose redaction depends on nothing but the line
// (redact's InOrder) is redacted on up to w.workers goroutines at once
// (processRun); any other item waits for the lines before it and holds
// back those after it.
func (w *Writer) processBatch(_ *asyncq.Queue[qitem], b asyncq.Batch[qitem]) error {
	items := b.Items
	for len(items) > 0 {
		if n := w.freeRun(items); n > 1 {
			w.processRun(items[:n])
			items = items[n:]
			continue
		}
		w.processItem(items[0])
		items = items[1:]
	}
	w.mu.Lock()
	w.flushLocked()
	w.mu.Unlock()
	return nil
}

// processItem processes one item of a batch by itself.
func (w *Writer) processItem(it asyncq.Item[qitem]) {
	m := it.Meta
	switch {
	case m.flushed != nil:
		w.mu.Lock()
		w.flushLocked()
		w.mu.Unlock()
		w.out.wait()
		close(m.flushed)
	case m.setVersion:
		w.setVersion(string(it.B), m.t, false)
	default:
		w.process(m.dir, m.party, it.B, m.known, m.t, false)
	}
}

// freeRun is how many of the items at the start are lines that may be
// redacted at once: none without redaction or a second worker.
func (w *Writer) freeRun(items []asyncq.Item[qitem]) int {
	if w.red == nil || w.workers < 2 {
		return 0
	}
	for i, it := range items {
		m := it.Meta
		if m.flushed != nil || m.setVersion || w.red.InOrder(m.dir, it.B, trust(m.dir, it.B, m.known)) {
			return i
		}
	}
	return len(items)
}

// minPart is the fewest bytes of lines worth a part of their own.
const minPart = 32 << 10

// partsPerWorker: a run is cut into this many parts for each worker, and
// whichever goroutine is free takes the next part, so that one held up
// (the session's goroutines run on the same cores) leaves the rest of
// the run to the others.
const partsPerWorker = 4

// processRun prepares (redacts) the lines of a run: it cuts them into up
// to partsPerWorker parts per worker of about equal bytes (cutRun), which
// up to w.workers goroutines, this one included, take one at a time
// (prepareParts); once all are done it encodes the lines in order
// (emit). Nothing of the run is written before every line of it is
// redacted, and nothing after it is looked at.
func (w *Writer) processRun(items []asyncq.Item[qitem]) {
	if cap(w.prep) < len(items) {
		w.prep = make([]prepared, len(items))
	}
	prep := w.prep[:len(items)]
	defer clear(prep) // keep no redacted line past its run
	total := 0
	for _, it := range items {
		total += len(it.B)
	}
	parts := min(w.workers*partsPerWorker, total/minPart)
	if parts < 2 {
		w.prepareRange(items, prep, 0, len(items))
	} else {
		w.prepareParts(items, prep, cutRun(items, total, parts))
	}
	for i, it := range items {
		w.emit(it.Meta.dir, it.Meta.party, prep[i], it.Meta.t, false)
	}
}

// cutRun cuts items, of total bytes, into up to parts parts of about
// total/parts bytes each; it returns where each part ends.
func cutRun(items []asyncq.Item[qitem], total, parts int) []int {
	if total <= 0 || parts < 2 {
		return []int{len(items)}
	}
	var ends []int
	sum, k := 0, 1
	for i, it := range items {
		sum += len(it.B)
		if sum*parts >= total*k {
			ends = append(ends, i+1)
			for sum*parts >= total*k {
				k++
			}
		}
	}
	ends[len(ends)-1] = len(items) // empty lines after the last byte
	return ends
}

// prepareParts prepares the parts that end at ends, each part on
// whichever of up to w.workers goroutines (this one included) takes it.
func (w *Writer) prepareParts(items []asyncq.Item[qitem], prep []prepared, ends []int) {
	var next atomic.Int64
	work := func() {
		for {
			k := int(next.Add(1)) - 1
			if k >= len(ends) {
				return
			}
			lo := 0
			if k > 0 {
				lo = ends[k-1]
			}
			w.prepareRange(items, prep, lo, ends[k])
		}
	}
	var wg sync.WaitGroup
	for range min(w.workers, len(ends)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// prepareRange prepares items[lo:hi] into prep[lo:hi].
func (w *Writer) prepareRange(items []asyncq.Item[qitem], prep []prepared, lo, hi int) {
	for i := lo; i < hi; i++ {
		m := items[i].Meta
		prep[i] = w.prepare(m.dir, items[i].B, trust(m.dir, items[i].B, m.known))
	}
}

// writeQ makes the Async Writer's write calls on a goroutine of its own,
// so that the kernel's copying of one batch into the file overlaps with
// redacting and encoding the next. Buffers go round: the one being
// filled, one being written, one spare.
type writeQ struct {
	q     *asyncq.Queue[struct{}]
	spare chan []byte

	mu  sync.Mutex
	err error // the first write error
}

func newWriteQ(w io.Writer) *writeQ {
	q := &writeQ{spare: make(chan []byte, 2)}
	q.spare <- nil
	q.spare <- nil
	q.q = asyncq.New(asyncq.Options[struct{}]{}, func(_ *asyncq.Queue[struct{}], b asyncq.Batch[struct{}]) error {
		for _, it := range b.Items {
			if q.Err() == nil {
				if _, err := w.Write(it.B); err != nil {
					q.mu.Lock()
					q.err = err
					q.mu.Unlock()
				}
			}
			buf := it.B
			if cap(buf) > 8<<20 {
				buf = nil // do not keep one huge line's buffer
			}
			q.spare <- buf[:0]
		}
		return nil
	})
	return q
}

// hand queues b for writing and returns an empty buffer, waiting for one
// while the others are being written.
func (q *writeQ) hand(b []byte) []byte {
	next := <-q.spare
	q.q.Put(struct{}{}, b)
	return next
}

// wait returns once every buffer handed so far is written.
func (q *writeQ) wait() { q.q.Flushed(time.Time{}) }

// Err returns the first write error.
func (q *writeQ) Err() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// close waits for the pending writes.
func (q *writeQ) close() { endAndWait(q.q) }

// endAndWait ends a queue and waits for its goroutine to write out what
// it holds.
func endAndWait[T any](q *asyncq.Queue[T]) {
	q.End()
	<-q.Done()
}
