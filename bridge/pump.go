package bridge

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/agentjq/agentjq/protocol"
)

// The agent's stdout is the hot path: a gigabyte of events must cost little
// more than cat. It is read in chunks of whole lines; workers on every core
// validate and classify the lines of different chunks at once; the session
// then takes the chunks in order, writes a chunk of plain events with one
// write, and acts on the few lines that need it.

// lineKind is what a worker found a line to be.
type lineKind uint8

const (
	linePlain  lineKind = iota // a JSON object agentjq only passes on
	lineRouted                 // a JSON object agentjq acts on
	lineBlank                  // white space only: dropped
	lineBad                    // not a JSON object: a warning, not passed on
)

type chunk struct {
	buf   []byte // whole lines; only the stream's last may lack its '\n'
	first int    // number of its first line in the stream
	lines [][]byte
	kinds []lineKind
	heads []protocol.Head
	plain bool // every line is linePlain
	ready chan struct{}
}

const (
	chunkSize = 256 << 10
	// keepChunk is the largest buffer returned to the pool.
	keepChunk = 4 << 20
	// chunksAhead bounds the chunks read ahead of the session.
	chunksAhead = 4
	// longPiece is the size of the pieces a long line is read in.
	longPiece = 1 << 20
	// smallChunk is the size under which the reader classifies a chunk
	// itself.
	smallChunk = 16 << 10
)

var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, chunkSize); return &b }}

// readChunks reads r into chunks of whole lines, handing each to the
// workers and, in order, to out. It closes out at the end of r. classify
// is the workers' classifier, which it uses for small chunks itself.
func readChunks(r io.Reader, work chan<- *chunk, out chan<- *chunk, classify func(*chunk)) {
	defer close(work)
	defer close(out)
	var carry []byte // a partial line from the previous read
	lineNo := 1
	for {
		bp := chunkPool.Get().(*[]byte)
		buf := append((*bp)[:0], carry...)
		var err error
		var pieces [][]byte // a line longer than one buffer, read in pieces
		for {
			if len(buf) == cap(buf) {
				// A line longer than the buffer: keep it as a piece and
				// read on into a new one. The pieces are joined once when
				// the line ends, so a huge line costs twice its size at
				// most, never a run of ever larger copies.
				pieces = append(pieces, buf)
				buf = make([]byte, 0, longPiece)
			}
			var n int
			n, err = r.Read(buf[len(buf):cap(buf)])
			start := len(buf)
			buf = buf[:len(buf)+n]
			if bytes.IndexByte(buf[start:], '\n') >= 0 || err != nil {
				break
			}
		}
		if pieces != nil {
			total := len(buf)
			for _, p := range pieces {
				total += len(p)
			}
			joined := make([]byte, 0, total)
			for _, p := range pieces {
				joined = append(joined, p...)
			}
			buf = append(joined, buf...)
		}
		end := bytes.LastIndexByte(buf, '\n') + 1
		if err != nil {
			end = len(buf) // the last line, newline or not
		}
		carry = append(carry[:0], buf[end:]...)
		if end > 0 {
			c := &chunk{buf: buf[:end], first: lineNo, ready: make(chan struct{})}
			lineNo += bytes.Count(c.buf, []byte{'\n'})
			if len(c.buf) < smallChunk {
				// A live session writes a line at a time: classify it
				// here rather than pay a hand-off to a worker.
				classify(c)
			} else {
				work <- c
			}
			out <- c
		} else {
			chunkPool.Put(bp)
		}
		if err != nil {
			// EOF, or the pipe closed under us after the agent exited
			// (a grandchild held it): either way the stream is over.
			return
		}
	}
}

// classify splits a chunk into lines and finds what each is.
func classify(c *chunk) {
	c.plain = true
	rest := c.buf
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		var line []byte
		if i < 0 {
			line, rest = rest, nil
		} else {
			line, rest = rest[:i], rest[i+1:]
		}
		head, ok := protocol.Scan(line)
		kind := linePlain
		switch {
		case !ok && len(bytes.TrimSpace(line)) == 0:
			kind = lineBlank
		case !ok:
			kind = lineBad
		case routed(head):
			kind = lineRouted
		}
		if kind != linePlain {
			c.plain = false
		}
		c.lines = append(c.lines, line)
		c.kinds = append(c.kinds, kind)
		c.heads = append(c.heads, head)
	}
	close(c.ready)
}

// routed reports whether agentjq acts on a line with this head.
func routed(h protocol.Head) bool {
	typ, sub := h.Type, h.Subtype
	if h.Escaped {
		t, st, _ := h.Strings()
		typ, sub = []byte(t), []byte(st)
	}
	switch string(typ) {
	case protocol.TypeResult, protocol.TypeControlRequest, protocol.TypeControlCancel, protocol.TypeControlResp:
		return true
	case protocol.TypeSystem:
		return systemRouted(string(sub))
	}
	return false
}

// readAgentStdout copies the agent's lines to our stdout byte for byte and
// routes the ones agentjq acts on.
func (s *session) readAgentStdout(ctx context.Context, r io.Reader) {
	work := make(chan *chunk, chunksAhead)
	ordered := make(chan *chunk, chunksAhead)
	classify := s.classifier()
	go readChunks(r, work, ordered, classify)
	var wg sync.WaitGroup
	for range max(1, runtime.NumCPU()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				classify(c)
			}
		}()
	}
	defer wg.Wait()
	for c := range ordered {
		<-c.ready
		s.mu.Lock()
		s.lastOutput = time.Now()
		s.mu.Unlock()
		more := len(ordered) > 0
		if c.plain && s.opts.Tap == nil {
			s.out.write(c.buf, !more)
		} else {
			s.passRuns(ctx, c, !more)
		}
		if cap(c.buf) <= keepChunk {
			b := c.buf[:0]
			chunkPool.Put(&b)
		}
	}
}

// passRuns writes each run of plain lines with one write, and handles the
// other lines one by one. The lines of a chunk lie end to end in its
// buffer, newlines included, so a run is one slice of it. A tap sees each
// plain line as the run reaches it, so it sees every line in order.
func (s *session) passRuns(ctx context.Context, c *chunk, flush bool) {
	runStart := -1 // offset in c.buf of the first line of the current run
	offset := 0
	for i, line := range c.lines {
		next := offset + len(line) + 1
		if c.kinds[i] == linePlain {
			s.tapOut(c, i)
			if runStart < 0 {
				runStart = offset
			}
		} else {
			if runStart >= 0 {
				s.out.write(c.buf[runStart:offset], false)
				runStart = -1
			}
			s.agentLine(ctx, c, i, flush && i == len(c.lines)-1)
		}
		offset = next
	}
	if runStart >= 0 {
		s.out.write(c.buf[runStart:], flush)
	}
}

// tapOut taps line i of c.
func (s *session) tapOut(c *chunk, i int) {
	s.tap(protocol.DirOut, c.lines[i])
}

// agentLine passes line i of c on and acts on it when it must.
func (s *session) agentLine(ctx context.Context, c *chunk, i int, flush bool) {
	n, kind, head, line := c.first+i, c.kinds[i], c.heads[i], c.lines[i]
	if s.fwd != nil && s.forwardAgentLine(ctx, kind, head, line, flush) {
		return
	}
	switch kind {
	case lineBlank:
		return
	case lineBad:
		s.nonJSON(n, line)
		return
	}
	s.tapOut(c, i)
	s.out.line(line, flush)
	if kind != lineRouted {
		return
	}
	typ, subtype := string(head.Type), string(head.Subtype)
	if head.Escaped {
		typ, subtype, _ = head.Strings()
	}
	switch typ {
	case protocol.TypeResult:
		s.result(line)
	case protocol.TypeSystem:
		s.system(subtype, head, line)
	default:
		env, err := protocol.DecodeEnvelope(line)
		if err != nil {
			s.warn(protocol.WarnInternal, "agent stdout: undecodable "+typ+": "+err.Error())
			return
		}
		s.control(ctx, env)
	}
}
