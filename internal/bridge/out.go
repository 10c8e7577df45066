package bridge

import (
	"errors"
	"os"
	"sync"

	"github.com/agentjq/agentjq/internal/asyncq"
	"github.com/agentjq/agentjq/internal/protocol"
)

// dropNote says what a lossy stream dropped.
const dropNote = "agentjq: %d bytes of stderr dropped: stderr is not being read\n"

// lineWriter is an io.Writer over a lossy asyncq.Writer: each Write is
// queued as its own copy, never blocking the writer.
type lineWriter struct{ q *asyncq.Writer }

func (l lineWriter) Write(p []byte) (int, error) {
	l.q.Send(append([]byte(nil), p...), nil)
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
	q    *asyncq.Writer
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
	// Tapped before it is queued: the agent's reply can come no sooner.
	in.tap(party, line)
	buf := make([]byte, 0, len(line)+1)
	if !in.q.Send(append(append(buf, line...), '\n'), nil) {
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
	s.out.Send(append(b[:len(b):len(b)], '\n'), nil)
}

func (s *session) warn(code, msg string) { s.warnLine(code, msg, 0) }

func (s *session) warnLine(code, msg string, line int) {
	w := protocol.NewWarning(code, msg)
	w.Line = line
	s.event(w)
}
