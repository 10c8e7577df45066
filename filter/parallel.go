package filter

import "sync"

// The stream mode: one goroutine reads lines into batches, workers decode
// and run batches in parallel, and Run's goroutine writes the results in
// input order. A batch closes as soon as the reader would wait for more
// input, so a live stream is not held back; the number of batches in
// flight is bounded, and so is the output each holds (a worker hands it
// on in pieces through a short queue and waits when the queue is full),
// so memory grows neither with the stream nor with one input's outputs.

const (
	batchLines = 1024
	batchBytes = 512 << 10
)

type batch struct {
	data  []byte
	spans []lineSpan
	// pieces carries the batch's output in order; the worker closes it
	// when the batch is done.
	pieces chan *result
}

// piecesQueued is how many pieces of output a batch holds before its
// worker waits for the writer.
const piecesQueued = 2

var resultPool = sync.Pool{New: func() any { return new(result) }}

// lineSpan is a line whose text is data[start:end].
type lineSpan struct {
	line
	start, end int
}

var batchPool = sync.Pool{New: func() any { return new(batch) }}

func (e *engine) stream() {
	n := e.o.workers()
	ordered := make(chan *batch, n+1)
	jobs := make(chan *batch, n)
	stop := make(chan struct{})
	lr := e.lr
	e.lr = nil // the reader goroutine owns it now

	go func() {
		defer close(jobs)
		defer close(ordered)
		defer lr.close()
		b := newBatch()
		send := func() bool {
			select {
			case ordered <- b:
			case <-stop:
				return false
			}
			select {
			case jobs <- b:
			case <-stop:
				return false
			}
			b = newBatch()
			return true
		}
		for {
			l, ok := lr.read()
			if !ok {
				if len(b.spans) > 0 {
					send()
				}
				return
			}
			start := len(b.data)
			b.data = append(b.data, l.text...)
			l.text = nil
			b.spans = append(b.spans, lineSpan{line: l, start: start, end: len(b.data)})
			if len(b.spans) >= batchLines || len(b.data) >= batchBytes || lr.br == nil || lr.br.Buffered() == 0 {
				if !send() {
					return
				}
			}
		}
	}()

	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := e.newWorker()
			for {
				var b *batch
				select {
				case b = <-jobs:
				case <-stop:
					return
				}
				if b == nil {
					return
				}
				w.stopped = false
				w.handOff = func() bool {
					r := resultPool.Get().(*result)
					*r, w.result = w.result, *r
					select {
					case b.pieces <- r:
						return true
					case <-stop:
						return false
					}
				}
				for i := range b.spans {
					s := &b.spans[i]
					s.text = b.data[s.start:s.end]
					w.line(s.line)
					if w.halt != nil || w.stopped {
						break
					}
				}
				w.spill()
				close(b.pieces)
			}
		}()
	}

	for b := range ordered {
		for r := range b.pieces {
			e.flushResult(r)
			resultPool.Put(r)
			if e.halt != nil || e.writeErr != nil {
				break
			}
		}
		e.flushLive()
		if e.halt != nil || e.writeErr != nil {
			close(stop)
			// Drain so the workers finish their batches and exit; the
			// reader may be blocked on input and is left to the process.
			go func() {
				for range ordered {
				}
			}()
			wg.Wait()
			return
		}
		batchPool.Put(b)
	}
	wg.Wait()
}

func newBatch() *batch {
	b := batchPool.Get().(*batch)
	b.data = b.data[:0]
	b.spans = b.spans[:0]
	b.pieces = make(chan *result, piecesQueued)
	return b
}
