package bridge

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
)

// The agent's stdout is the data path. One goroutine reads it in chunks of
// whole lines, one chunk ahead of the pump, which finds what each line is
// (validation is most of the work) and hands runs of lines it only
// passes on to the stdout writer without copying them; the chunk's buffer
// goes back to the pool once the writer is done with it. The writer's
// queue is bounded, so a slow reader of our stdout slows the agent down
// (backpressure) rather than filling memory. A line of any length is read
// in pieces and joined once.

// lineKind is what a line is to the session.
type lineKind uint8

const (
	linePlain  lineKind = iota // a JSON object agentjq only passes on
	lineRouted                 // a JSON object agentjq acts on
	lineBlank                  // white space only: dropped
	lineBad                    // not a JSON object: a warning, not passed on
	lineDeep                   // JSON nested deeper than protocol.MaxDepth: see tooDeep
)

const (
	chunkSize = 256 << 10
	// keepChunk is the largest buffer returned to the pool.
	keepChunk = 4 << 20
	// longPiece is the size of the pieces a long line is read in.
	longPiece = 1 << 20
	// outQueue bounds the bytes of agent output waiting for our stdout.
	outQueue = 1 << 20
)

var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, chunkSize); return &b }}

// chunkReader reads whole lines, many at a time.
type chunkReader struct {
	r     io.Reader
	carry []byte // a partial line from the previous read
	done  bool
}

// next returns the next run of whole lines (only the stream's last may
// lack its '\n'), in a buffer from the pool, or nil at the end.
func (cr *chunkReader) next() []byte {
	for !cr.done {
		bp := chunkPool.Get().(*[]byte)
		buf := append((*bp)[:0], cr.carry...)
		var err error
		var pieces [][]byte // a line longer than one buffer, read in pieces
		for {
			if len(buf) == cap(buf) {
				// Keep the full buffer as a piece and read on into a new
				// one; the pieces are joined once when the line ends, so
				// a huge line costs twice its size at most.
				pieces = append(pieces, buf)
				buf = make([]byte, 0, longPiece)
			}
			var n int
			n, err = cr.r.Read(buf[len(buf):cap(buf)])
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
			// EOF, or the pipe closed under us after the agent exited (a
			// grandchild held it): either way the stream is over.
			end = len(buf)
			cr.done = true
		}
		cr.carry = append(cr.carry[:0], buf[end:]...)
		if cap(cr.carry) > keepChunk {
			cr.carry = append([]byte(nil), cr.carry...)
		}
		if end > 0 {
			return buf[:end]
		}
		putChunk(buf)
	}
	return nil
}

func putChunk(b []byte) {
	if cap(b) <= keepChunk {
		b = b[:0]
		chunkPool.Put(&b)
	}
}

// classify finds what a line is.
func classify(line []byte) (lineKind, protocol.Head) {
	head, err := protocol.ScanLine(line)
	switch {
	case err == nil && routed(head):
		return lineRouted, head
	case err == nil:
		return linePlain, head
	case len(bytes.TrimSpace(line)) == 0:
		return lineBlank, head
	}
	if _, deep := err.(*protocol.DepthError); deep {
		return lineDeep, head
	}
	return lineBad, head
}

// routed reports whether agentjq acts on a line with this head.
func routed(h protocol.Head) bool {
	typ, sub := h.Type, h.Subtype
	if h.Escaped {
		t, st, _ := h.Strings()
		typ, sub = []byte(t), []byte(st)
	}
	switch string(typ) {
	case protocol.TypeResult, protocol.TypeControlRequest, protocol.TypeControlCancel, protocol.TypeControlResp, typeCommandLifecycle:
		return true
	case protocol.TypeSystem:
		return systemRouted(string(sub))
	}
	return false
}

// readAgentStdout copies the agent's lines to our stdout byte for byte and
// routes the ones agentjq acts on, in the order they came. One chunk is
// read ahead while the last is checked and passed on, so reading the pipe
// and scanning lines overlap.
func (s *session) readAgentStdout(ctx context.Context, w *pumpWatch) {
	ahead := make(chan []byte, 1)
	go func() {
		defer close(ahead)
		cr := &chunkReader{r: w}
		for buf := cr.next(); buf != nil; buf = cr.next() {
			ahead <- buf
		}
	}()
	lineNo := 1
	for {
		buf, ok := w.next(ahead)
		if !ok {
			return
		}
		s.sawOutput()
		// Backpressure: wait here, holding nothing, until the writer has
		// room for this chunk.
		s.out.WaitRoom(len(buf), 0, nil)
		lineNo = s.passChunk(ctx, buf, lineNo)
		s.out.Send(nil, func() { putChunk(buf) })
	}
}

// pumpWatch tells whether the stdout pump is waiting on a read of the
// agent's pipe, and since when that read started: the pump waiting on a
// pipe that yields nothing is the one state in which cutting the pipe off
// loses no line. It reads the pipe for the read-ahead.
type pumpWatch struct {
	r       io.Reader
	idle    atomic.Bool  // the pump waits for the next chunk
	reading atomic.Bool  // a read is under way
	since   atomic.Int64 // UnixNano: the start of that read
}

func (w *pumpWatch) Read(p []byte) (int, error) {
	w.since.Store(time.Now().UnixNano())
	w.reading.Store(true)
	n, err := w.r.Read(p)
	w.reading.Store(false)
	return n, err
}

func (w *pumpWatch) next(ahead <-chan []byte) ([]byte, bool) {
	w.idle.Store(true)
	buf, ok := <-ahead
	w.idle.Store(false)
	return buf, ok
}

func (w *pumpWatch) waitingSince() (time.Time, bool) {
	if !w.idle.Load() || !w.reading.Load() {
		return time.Time{}, false
	}
	return time.Unix(0, w.since.Load()), true
}

// lineInfo is one line of a chunk: where it lies (end excludes its
// newline, next is the offset of the next line) and what it is.
type lineInfo struct {
	start, end, next int
	kind             lineKind
	head             protocol.Head
}

// classifyLines finds the lines of buf and what each is, appending to
// infos. One goroutine: classifying a chunk's parts on both cores of the
// project's machine measured no faster on a 1 GiB stream (1.42 s against
// 1.45 s, medians of six), and took more CPU.
func classifyLines(buf []byte, infos []lineInfo, classify func([]byte) (lineKind, protocol.Head)) []lineInfo {
	for off := 0; off < len(buf); {
		end := bytes.IndexByte(buf[off:], '\n')
		next := len(buf)
		if end >= 0 {
			end += off
			next = end + 1
		} else {
			end = len(buf)
		}
		kind, head := classify(buf[off:end])
		infos = append(infos, lineInfo{off, end, next, kind, head})
		off = next
	}
	return infos
}

// passChunk writes each run of plain lines as one slice of buf, and
// handles the other lines one by one. A tap sees each line as the run
// reaches it, so it sees every line in order. It returns the number of
// the next line.
func (s *session) passChunk(ctx context.Context, buf []byte, n int) int {
	s.infos = classifyLines(buf, s.infos[:0], s.classifier())
	runStart := -1 // offset of the first line of the current run
	for _, li := range s.infos {
		line := buf[li.start:li.end]
		if li.kind == linePlain {
			if s.opts.Watch != nil && watchWants(li.head, line) {
				if events, stop := s.watchLine(li.head, line); len(events) > 0 || stop != "" {
					// Its events go out ahead of it: end the run here.
					if runStart >= 0 {
						s.out.Send(buf[runStart:li.start], nil)
						runStart = -1
					}
					s.watched(events, stop)
				}
			}
			s.tap(protocol.DirOut, line, li.head.Known)
			if runStart < 0 {
				runStart = li.start
			}
		} else {
			if runStart >= 0 {
				s.out.Send(buf[runStart:li.start], nil)
				runStart = -1
			}
			s.agentLine(ctx, n, li.kind, li.head, line, buf[li.start:li.next])
		}
		n++
	}
	if runStart >= 0 {
		s.passOut(buf[runStart:])
	}
	return n
}

// tap hands a line to Options.Tap (the recorder), in the order the line
// is passed on.
func (s *session) tap(dir protocol.Direction, line []byte, known protocol.Known) {
	if s.opts.Tap != nil && !s.ended.Load() {
		s.opts.Tap(dir, line, known)
	}
}

// passOut queues whole lines of agent output; the stream's last line may
// come without its newline and gets one.
func (s *session) passOut(b []byte) {
	s.out.Send(b, nil)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		s.out.Send([]byte{'\n'}, nil)
	}
}

// agentLine passes a line on and acts on it when it must; withNL is the
// line as it lies in the buffer, newline included when it has one.
func (s *session) agentLine(ctx context.Context, n int, kind lineKind, head protocol.Head, line, withNL []byte) {
	if s.fwd != nil && s.fwd.forwardAgentLine(ctx, kind, head, line, withNL) {
		if kind != lineBlank && kind != lineBad && kind != lineDeep {
			s.watched(s.watchLine(head, line))
		}
		return
	}
	switch kind {
	case lineBlank:
		return
	case lineBad:
		s.nonJSON(n, line)
		return
	case lineDeep:
		s.tooDeep(ctx, n, head, line)
		return
	}
	typ, subtype := string(head.Type), string(head.Subtype)
	if head.Escaped {
		typ, subtype, _ = head.Strings()
	}
	if typ == typeCommandLifecycle && s.turns.lifecycle(line) {
		return // about a turn id agentjq added: its own bookkeeping
	}
	if typ == protocol.TypeResult {
		// The turn is ended before anyone sees its result: a client that
		// writes its next turn on seeing it finds nothing in flight (so
		// that turn is not marked as one the agent may fold).
		passed := s.result(line, head.Result)
		s.tap(protocol.DirOut, line, head.Known)
		s.passOut(withNL)
		s.warnPassedOver(passed)
		return
	}
	s.watched(s.watchLine(head, line))
	s.tap(protocol.DirOut, line, head.Known)
	s.passOut(withNL)
	switch typ {
	case protocol.TypeSystem:
		s.system(subtype, head, line)
	case typeCommandLifecycle:
	default:
		s.ctl.control(ctx, typ, line)
	}
}

// watchLine asks Options.Watch about a line of type system, assistant or
// user.
func (s *session) watchLine(head protocol.Head, line []byte) ([]any, string) {
	if s.opts.Watch == nil {
		return nil, ""
	}
	typ, subtype := string(head.Type), string(head.Subtype)
	if head.Escaped {
		typ, subtype, _ = head.Strings()
	}
	if typ == "" {
		typ = passOnlyType(line) // a proxy's pass-only line, not scanned
	}
	switch typ {
	case protocol.TypeSystem, "assistant", "user":
		return s.opts.Watch(typ, subtype, line)
	}
	return nil, ""
}

// watched writes Watch's events (they go out ahead of the line) and ends
// the session on a stop.
func (s *session) watched(events []any, stop string) {
	for _, e := range events {
		s.event(e)
	}
	if stop != "" && s.stopped.CompareAndSwap(nil, &stop) {
		s.abort()
	}
}

// watchWants is Watch's cheap first look at a line agentjq only passes
// on: the assistant lines that may call Bash and the user lines that may
// carry a tool's result. Other lines never reach Watch by this path.
func watchWants(head protocol.Head, line []byte) bool {
	typ := string(head.Type)
	if head.Escaped {
		typ, _, _ = head.Strings()
	}
	if typ == "" {
		typ = passOnlyType(line)
	}
	switch typ {
	case "assistant":
		return bytes.Contains(line, []byte(`"name":"Bash"`))
	case "user":
		return bytes.Contains(line, []byte(`"tool_result"`))
	}
	return false
}

// passOnlyType is the type of a line a proxy did not scan (passOnly).
func passOnlyType(line []byte) string {
	for _, t := range []string{"assistant", "user"} {
		if bytes.HasPrefix(line, []byte(`{"type":"`+t+`"`)) {
			return t
		}
	}
	return ""
}

// classifier is classify, except in a proxy with no tap: there a line is
// passed on as it is whatever it holds, so only a line that may need
// routing is scanned. A tapped session keeps validating every line (the
// recorder relies on it).
func (s *session) classifier() func([]byte) (lineKind, protocol.Head) {
	if s.fwd != nil && s.opts.Tap == nil && s.fwd.opts.TapParty == nil {
		return classifyForward
	}
	return classify
}
