package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
)

// stdinSettle is how long the agent must have been quiet before its stdin
// is closed at the end of a session that hosts hooks or MCP servers: the
// agent sends control requests right after a result or an initialize
// response (notifications/initialized, tools/list, Stop hooks), and one
// sent to a closed stdin is lost ("Stream closed").
const stdinSettle = 500 * time.Millisecond

// settledLocked reports whether stdin may close as far as KeepStdinOpen is
// concerned; when not yet, it arranges to be asked again. s.mu is held.
func (s *session) settledLocked() bool {
	if !s.opts.KeepStdinOpen {
		return true
	}
	wait := min(stdinSettle, s.opts.Grace) - time.Since(s.lastOutput)
	if wait <= 0 {
		return true
	}
	time.AfterFunc(wait+time.Millisecond, s.notify)
	return false
}

// runAtEnd runs Options.AtEnd once: hosted servers and their processes go
// before the exit event is written.
func (s *session) runAtEnd() {
	s.atEndOnce.Do(func() {
		for _, f := range s.opts.AtEnd {
			f()
		}
	})
}

// GuardFunc answers agentjq's own PreToolUse hook, asked before every tool
// call runs (hooks.Guard.Answer). ok is false when the hook_callback is
// not the guard's: the user's hook handler answers it. d is what was
// decided: deny or allow are final and make a decision event; "ask" hands
// the call to the permission request that follows, whose decision is the
// one recorded, so an asked call is counted once; empty is no decision (a
// proxy's client decides).
type GuardFunc func(ctx context.Context, requestID string, request json.RawMessage) (answer json.RawMessage, d protocol.Decision, ok bool)

// installGuard routes hook_callback requests to the guard first.
func (c *controls) installGuard() {
	s := c.s
	guard := s.opts.Guard
	if guard == nil {
		return
	}
	handlers := maps.Clone(s.opts.Handlers)
	if handlers == nil {
		handlers = map[string]ControlHandler{}
	}
	user := handlers[protocol.SubHookCallback]
	handlers[protocol.SubHookCallback] = func(ctx context.Context, id string, request json.RawMessage) (any, error) {
		start := time.Now()
		answer, d, ok := guard(ctx, id, request)
		if !ok {
			if user == nil {
				return nil, errors.New("agentjq: no hook is registered for this callback")
			}
			return user(ctx, id, request)
		}
		if ctx.Err() == nil && (d.Behavior == protocol.Allow || d.Behavior == protocol.Deny) {
			c.hookDecided(id, d, start)
		}
		return answer, nil
	}
	s.opts.Handlers = handlers
}

// hookDecided records a decision of the guard before it is sent, as
// respondPermission does for permission answers.
func (c *controls) hookDecided(id string, d protocol.Decision, start time.Time) {
	s := c.s
	if d.Behavior == protocol.Deny && d.ToolUseID != "" {
		// The agent lists the call in permission_denials under the same id.
		s.mu.Lock()
		s.denied[d.ToolUseID] = true
		s.mu.Unlock()
	}
	d.Type, d.Subtype, d.RequestID, d.Via = protocol.TypeAgentjq, protocol.EventDecision, id, protocol.ViaHook
	d.LatencyUS = time.Since(start).Microseconds()
	s.event(d)
}
