package bridge

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
)

// Turns in flight.
//
// The CLI folds turns: user messages that arrive while a turn runs are
// queued and then answered together, one result for several turns. So
// "one result, one turn done" undercounts finished turns, and a session
// that waits for the count to reach zero never closes the agent's stdin.
//
// Folding happens only to a turn written while another is in flight. Such
// a turn gets an id from agentjq (the envelope's "uuid"; a turn from stdin
// that carries one keeps it); a turn written to an idle agent does not, so
// the ordinary session's lines are exactly what the agent writes for it.
// The CLI names the turns each result answers in user_message_uuid(s), and
// reports each turn's end in command_lifecycle events (completed,
// cancelled). A result finishes every turn up to the last it names (turns
// are taken in order), or, naming none agentjq knows, the oldest. For an
// agent that echoes no ids (the context profile, fakes)
// and when the agent has been silent since a result that said how many
// turns were still queued, and every turn was written well before, that
// count is believed (re-evaluated whenever the state changes, not only
// when the result came).

const typeCommandLifecycle = "command_lifecycle"

// foldSettle is how long after writing a turn agentjq assumes the agent
// may not have read it yet.
const foldSettle = time.Second

type openTurn struct {
	id   string // "" when the agent will not name it
	sent time.Time
}

// newTurnID returns a random UUID (version 4).
func newTurnID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// turnID returns the uuid a user message line carries, if any.
func turnID(line []byte) string {
	id, _ := protocol.String(protocol.Fields(line, "uuid")[0])
	return id
}

// withNewTurnID returns the line with a new uuid added at its end.
func withNewTurnID(line []byte) ([]byte, string) {
	id := newTurnID()
	out := make([]byte, 0, len(line)+50)
	out = append(out, line[:len(line)-1]...) // the closing brace
	out = append(out, `,"uuid":"`...)
	out = append(out, id...)
	return append(out, `"}`...), id
}

// turnSentLocked counts a turn in flight. s.mu is held.
func (s *session) turnSentLocked(id string) {
	s.open = append(s.open, openTurn{id: id, sent: time.Now()})
	s.turns++
	s.lastSent = time.Now()
}

// finishTurnsLocked marks turns done: with names, every turn up to the
// last one named (the agent takes turns in order, so one sent before a
// turn it has answered is answered too, alone or folded into it); with no
// name it knows, the oldest.
func (s *session) finishTurnsLocked(ids []string) {
	last := -1
	for i, t := range s.open {
		for _, id := range ids {
			if t.id != "" && t.id == id {
				last = i
			}
		}
	}
	if last < 0 {
		// No names, or ids from another run (a recording replayed as
		// the agent): as good as none.
		last = min(0, len(s.open)-1)
	}
	s.open = s.open[last+1:]
}

// cancelTurnLocked forgets one turn the agent dropped.
func (s *session) cancelTurnLocked(id string) {
	for i, t := range s.open {
		if t.id == id {
			s.open = append(s.open[:i:i], s.open[i+1:]...)
			return
		}
	}
}

// namesOpenLocked reports whether ids name a turn in flight.
func (s *session) namesOpenLocked(ids []string) bool {
	for _, t := range s.open {
		for _, id := range ids {
			if t.id != "" && t.id == id {
				return true
			}
		}
	}
	return false
}

// inFlightLocked is the number of turns still in flight, after believing
// the last result's queued_turn_count where that is safe. When it is not
// safe yet but may become so, it arranges to be asked again.
func (s *session) inFlightLocked() int {
	if s.queuedHint >= 0 && len(s.open) > s.queuedHint {
		quietSince := s.resultAt
		if s.lastSent.After(quietSince) {
			quietSince = s.lastSent
		}
		switch {
		case s.outputSeq != s.resultSeq:
			// The agent wrote since: the hint is stale.
			s.queuedHint = -1
		case time.Since(quietSince) >= foldSettle:
			s.open = s.open[len(s.open)-s.queuedHint:]
			s.queuedHint = -1
		default:
			if !s.hintTimer {
				s.hintTimer = true
				time.AfterFunc(foldSettle-time.Since(quietSince)+time.Millisecond, func() {
					s.mu.Lock()
					s.hintTimer = false
					s.mu.Unlock()
					s.notify()
				})
			}
		}
	}
	return len(s.open)
}

// result counts the turns a result answers. Only what the session needs
// now is read: f, the line's values of protocol.ResultKeys, which the
// scan that classified it found; the last result is kept raw and decoded
// once, for the outcome. It returns the ids of agentjq's own initialize
// requests given up on (passedOverLocked), for warnPassedOver.
func (s *session) result(line []byte, f [len(protocol.ResultKeys)][]byte) (passedOver []string) {
	// Only the ids are needed: read them where they lie rather than decode
	// the inputs they come with.
	var denials []string
	if len(f[0]) > 2 { // not "[]"
		for _, d := range protocol.Elements(f[0]) {
			id, _ := protocol.String(protocol.Fields(d, "tool_use_id")[0])
			denials = append(denials, id)
		}
	}
	queued := -1
	if f[1] != nil {
		if q, err := strconv.Atoi(string(f[1])); err == nil && q >= 0 {
			queued = q
		}
	}
	var ids []string
	if f[2] != nil {
		for _, e := range protocol.Elements(f[2]) {
			if id, ok := protocol.String(e); ok {
				ids = append(ids, id)
			}
		}
	}
	if id, ok := protocol.String(f[3]); ok && f[3] != nil {
		ids = append(ids, id)
	}
	s.mu.Lock()
	s.lastResult = append(s.lastResult[:0], line...)
	for _, key := range denials {
		if key == "" {
			key = "result-" + strconv.Itoa(len(s.denied))
		}
		s.denied[key] = true
	}
	named := s.namesOpenLocked(ids)
	s.finishTurnsLocked(ids)
	s.queuedHint = -1
	if !named && queued >= 0 {
		s.queuedHint, s.resultAt, s.resultSeq = queued, time.Now(), s.outputSeq
	}
	passed := s.passedOverLocked()
	s.mu.Unlock()
	s.notify()
	return passed
}

// warnPassedOver warns of the initialize requests a result showed the
// agent went past (result), once the result itself is passed on.
func (s *session) warnPassedOver(ids []string) {
	for _, id := range ids {
		s.warn(protocol.WarnUnanswered, fmt.Sprintf("the agent did not answer agentjq's init request (%s) and has finished a turn sent after it; going on without it (what it registers, hooks and MCP servers, may not be active)", id))
	}
}

// lifecycle follows command_lifecycle: a turn completed or cancelled is no
// longer in flight. It reports whether the event is about an id agentjq
// added itself: such events exist only because of agentjq and are not
// passed on, so that stdout is what the agent writes for the turns as the
// client sent them.
func (s *session) lifecycle(line []byte) (own bool) {
	var ev struct {
		UUID  string `json:"command_uuid"`
		State string `json:"state"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.UUID == "" {
		return false
	}
	s.mu.Lock()
	own = s.addedIDs[ev.UUID]
	switch ev.State {
	case "completed":
		if s.namesOpenLocked([]string{ev.UUID}) {
			s.finishTurnsLocked([]string{ev.UUID})
		}
		delete(s.addedIDs, ev.UUID)
	case "cancelled":
		s.cancelTurnLocked(ev.UUID)
		delete(s.addedIDs, ev.UUID)
	}
	s.mu.Unlock()
	s.notify()
	return own
}
