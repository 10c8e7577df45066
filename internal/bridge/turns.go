package bridge

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
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

// turnBook counts the turns in flight, and the background tasks. Its
// fields are guarded by the session's mu; methods named *Locked are called
// with it held, the others take it.
type turnBook struct {
	mu     *sync.Mutex
	notify func() // the session's: state the loop waits on changed

	open       []openTurn // the turns sent whose end has not been seen
	n          int        // turns sent
	lastSent   time.Time
	queuedHint int // the last id-less result's queued_turn_count; -1 none
	resultAt   time.Time
	resultSeq  int // outputSeq when that result came
	outputSeq  int // chunks of agent output read
	hintTimer  bool
	addedIDs   map[string]bool // turn ids agentjq added, until their turn ends
	background map[string]bool // background task ids
}

type openTurn struct {
	id   string // "" when the agent will not name it
	sent time.Time
}

// turnID returns the uuid a user message line carries, if any.
func turnID(line []byte) string {
	id, _ := protocol.String(protocol.Fields(line, "uuid")[0])
	return id
}

// withNewTurnID returns the line with a new uuid added at its end.
func withNewTurnID(line []byte) ([]byte, string) {
	id := protocol.NewUUID()
	out := make([]byte, 0, len(line)+50)
	out = append(out, line[:len(line)-1]...) // the closing brace
	out = append(out, `,"uuid":"`...)
	out = append(out, id...)
	return append(out, `"}`...), id
}

// turnSentLocked counts a turn in flight. s.mu is held.
func (t *turnBook) sentLocked(id string) {
	t.open = append(t.open, openTurn{id: id, sent: time.Now()})
	t.n++
	t.lastSent = time.Now()
}

// finishTurnsLocked marks turns done: with names, every turn up to the
// last one named (the agent takes turns in order, so one sent before a
// turn it has answered is answered too, alone or folded into it); with no
// name it knows, the oldest.
func (t *turnBook) finishLocked(ids []string) {
	last := -1
	for i, o := range t.open {
		for _, id := range ids {
			if o.id != "" && o.id == id {
				last = i
			}
		}
	}
	if last < 0 {
		// No names, or ids from another run (a recording replayed as
		// the agent): as good as none.
		last = min(0, len(t.open)-1)
	}
	t.open = t.open[last+1:]
}

// cancelTurnLocked forgets one turn the agent dropped.
func (t *turnBook) cancelLocked(id string) {
	for i, o := range t.open {
		if o.id == id {
			t.open = append(t.open[:i:i], t.open[i+1:]...)
			return
		}
	}
}

// namesOpenLocked reports whether ids name a turn in flight.
func (t *turnBook) namesOpenLocked(ids []string) bool {
	for _, o := range t.open {
		for _, id := range ids {
			if o.id != "" && o.id == id {
				return true
			}
		}
	}
	return false
}

// inFlightLocked is the number of turns still in flight, after believing
// the last result's queued_turn_count where that is safe. When it is not
// safe yet but may become so, it arranges to be asked again.
func (t *turnBook) inFlightLocked() int {
	if t.queuedHint >= 0 && len(t.open) > t.queuedHint {
		quietSince := t.resultAt
		if t.lastSent.After(quietSince) {
			quietSince = t.lastSent
		}
		switch {
		case t.outputSeq != t.resultSeq:
			// The agent wrote since: the hint is stale.
			t.queuedHint = -1
		case time.Since(quietSince) >= foldSettle:
			t.open = t.open[len(t.open)-t.queuedHint:]
			t.queuedHint = -1
		default:
			if !t.hintTimer {
				t.hintTimer = true
				time.AfterFunc(foldSettle-time.Since(quietSince)+time.Millisecond, func() {
					t.mu.Lock()
					t.hintTimer = false
					t.mu.Unlock()
					t.notify()
				})
			}
		}
	}
	return len(t.open)
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
	named := s.turns.namesOpenLocked(ids)
	s.turns.finishLocked(ids)
	s.turns.queuedHint = -1
	if !named && queued >= 0 {
		s.turns.queuedHint, s.turns.resultAt, s.turns.resultSeq = queued, time.Now(), s.turns.outputSeq
	}
	passed := s.ctl.passedOverLocked()
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
func (t *turnBook) lifecycle(line []byte) (own bool) {
	var ev struct {
		UUID  string `json:"command_uuid"`
		State string `json:"state"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.UUID == "" {
		return false
	}
	t.mu.Lock()
	own = t.addedIDs[ev.UUID]
	switch ev.State {
	case "completed":
		if t.namesOpenLocked([]string{ev.UUID}) {
			t.finishLocked([]string{ev.UUID})
		}
		delete(t.addedIDs, ev.UUID)
	case "cancelled":
		t.cancelLocked(ev.UUID)
		delete(t.addedIDs, ev.UUID)
	}
	t.mu.Unlock()
	t.notify()
	return own
}

// trackTask follows background tasks: the session is not over while one
// runs, even after the turn's result.
func (t *turnBook) trackTask(subtype string, line []byte) {
	var ev struct {
		TaskID     string `json:"task_id"`
		Background bool   `json:"is_backgrounded"`
		Status     string `json:"status"`
		Patch      struct {
			Status string `json:"status"`
		} `json:"patch"`
		Tasks []struct {
			TaskID string `json:"task_id"`
		} `json:"tasks"`
	}
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	t.mu.Lock()
	switch subtype {
	case "task_started":
		if ev.Background {
			t.background[ev.TaskID] = true
		}
	case "task_notification":
		delete(t.background, ev.TaskID)
	case "task_updated":
		if terminalTaskStatus(ev.Patch.Status) {
			delete(t.background, ev.TaskID)
		}
	case "background_tasks_changed":
		t.background = map[string]bool{}
		for _, task := range ev.Tasks {
			t.background[task.TaskID] = true
		}
	}
	t.mu.Unlock()
	t.notify()
}

func terminalTaskStatus(st string) bool {
	switch st {
	case "completed", "failed", "killed", "cancelled", "stopped", "error":
		return true
	}
	return false
}
