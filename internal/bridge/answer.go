package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
)

// controls is the bookkeeping of control requests either way: the
// agent's, each answered exactly once (or withdrawn), and agentjq's own,
// awaiting the agent's reply. Its fields are guarded by the session's mu.
type controls struct {
	s        *session
	pending  map[string]context.CancelFunc // agent requests being answered
	withdraw map[string]context.CancelFunc // cancels a request the agent withdrew
	asked    map[string]bool               // every request id the agent sent us
	ours     map[string]*time.Timer        // our own control requests awaiting replies
	initAt   map[string]int                // our own initialize requests: turns sent before each
	reqSeq   int
	permTail <-chan struct{} // closed when the last permission request is answered
}

// control routes the control messages of the agent.
func (c *controls) control(ctx context.Context, typ string, line []byte) {
	s := c.s
	switch typ {
	case protocol.TypeControlRequest:
		cr, ok := protocol.ReadControlRequest(line)
		if !ok {
			s.warn(protocol.WarnUnanswered, "agent stdout: a control_request without a string or number request_id cannot be answered")
			return
		}
		c.startAnswer(ctx, cr)
	case protocol.TypeControlCancel:
		key, _, _ := protocol.RequestKey(protocol.Fields(line, "request_id")[0])
		s.mu.Lock()
		withdraw := c.withdraw[key]
		s.mu.Unlock()
		if withdraw != nil {
			withdraw()
		}
	case protocol.TypeControlResp:
		key, _, _ := protocol.RequestKey(protocol.Fields(protocol.Fields(line, "response")[0], "request_id")[0])
		s.mu.Lock()
		if t := c.ours[key]; t != nil {
			t.Stop()
		}
		delete(c.ours, key)
		s.mu.Unlock()
		s.notify()
	}
}

// startAnswer answers one agent request on a goroutine of its own; a
// control_cancel_request for key cancels it.
func (c *controls) startAnswer(ctx context.Context, cr protocol.Request) {
	s := c.s
	key := cr.Key
	hctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	c.asked[key] = true
	c.pending[key] = func() { cancel(context.Canceled) }
	c.withdraw[key] = func() { cancel(errWithdrawn) }
	var turn permissionTurn
	if cr.Subtype == protocol.SubCanUseTool {
		// Permission requests are decided one at a time, in the order they
		// came: an approver or a person sees them in that order.
		turn = permissionTurn{prev: c.permTail, done: make(chan struct{})}
		c.permTail = turn.done
	}
	s.mu.Unlock()
	go func() {
		if turn.done != nil {
			defer close(turn.done)
			if turn.prev != nil {
				select {
				case <-turn.prev:
				case <-hctx.Done():
				}
			}
		}
		c.answer(hctx, cr)
	}()
}

// permissionTurn orders one permission request after the one before it.
type permissionTurn struct {
	prev <-chan struct{} // closed when the request before is answered
	done chan struct{}
}

// answered ends the request id's answer. The idle clock starts again
// now: the time the answer took (an approver's, a person's) is never the
// agent's silence, not even the part since idleFor last looked.
func (c *controls) answered(id string) {
	s := c.s
	s.mu.Lock()
	if cancel := c.pending[id]; cancel != nil {
		cancel()
	}
	delete(c.pending, id)
	delete(c.withdraw, id)
	s.owedSince = time.Now()
	s.mu.Unlock()
	s.notify()
}

// answer handles one control request from the agent and sends exactly one
// response, unless the agent withdrew the request first.
func (c *controls) answer(ctx context.Context, cr protocol.Request) {
	s := c.s
	id, rawID, request := cr.Key, cr.ID, cr.Request
	defer c.answered(id)
	if cr.Subtype == protocol.SubCanUseTool {
		c.canUseTool(ctx, id, rawID, request)
		return
	}
	var resp []byte
	if h := s.opts.Handlers[cr.Subtype]; h != nil {
		payload, err := h(ctx, id, request)
		if err != nil {
			resp = protocol.ErrorResponseRaw(rawID, err.Error())
		} else {
			resp = protocol.SuccessResponseRaw(rawID, payload)
		}
	} else {
		msg := protocol.UnsupportedMessage(cr.Subtype)
		switch cr.Subtype {
		case protocol.SubHookCallback:
			msg = "agentjq: no hook is registered for this callback"
		case protocol.SubMCPMessage:
			msg = "agentjq: no MCP server of that name is hosted by this session"
		default:
			s.warn(protocol.WarnUnanswered, fmt.Sprintf("answered unknown control request subtype %q with an error", cr.Subtype))
		}
		resp = protocol.ErrorResponseRaw(rawID, msg)
	}
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), errWithdrawn) {
		return
	}
	if err := s.stdin.write(resp); err != nil {
		s.warn(protocol.WarnInternal, "could not answer control request "+id+": "+err.Error())
	}
}

// errWithdrawn is the cause of a handler's cancellation when the agent
// sent control_cancel_request: nothing may be sent for that request.
var errWithdrawn = errors.New("the agent withdrew the request")

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
		c.denied(d.ToolUseID, id)
	}
	d.Type, d.Subtype, d.RequestID, d.Via = protocol.TypeAgentjq, protocol.EventDecision, id, protocol.ViaHook
	d.LatencyUS = time.Since(start).Microseconds()
	s.event(d)
}

// canUseTool runs the approval chain and answers a permission request.
func (c *controls) canUseTool(ctx context.Context, id string, rawID, raw json.RawMessage) {
	s := c.s
	start := time.Now()
	req := protocol.ToolRequest{RequestID: id, Cwd: s.opts.Dir}
	if err := json.Unmarshal(raw, &req.CanUseTool); err != nil {
		c.respondPermission(id, rawID, &req, protocol.DenyResult(&req.CanUseTool, "agentjq could not read this permission request: "+err.Error()), protocol.ByError, "", start)
		return
	}
	s.mu.Lock()
	req.SessionID = s.sessionID
	s.mu.Unlock()

	dctx := ctx
	if s.opts.ApprovalTimeout > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeoutCause(ctx, s.opts.ApprovalTimeout, errApprovalTimeout)
		defer cancel()
	}
	v, err := decide(dctx, s.opts.Approver, &req)
	switch {
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), errWithdrawn):
		s.event(protocol.Decision{
			Type: protocol.TypeAgentjq, Subtype: protocol.EventDecision, RequestID: id,
			Tool: req.ToolName, ToolUseID: req.ToolUseID, Behavior: "cancelled",
			DecidedBy: protocol.ByCancel, Via: protocol.ViaPermission, Message: "the agent withdrew the request",
			LatencyUS: time.Since(start).Microseconds(),
		})
		return
	case errors.Is(context.Cause(dctx), errApprovalTimeout):
		msg := fmt.Sprintf("agentjq: no decision within %s (--approval-timeout), so the call was denied.", s.opts.ApprovalTimeout)
		s.warn(protocol.WarnApprovalTimeout, fmt.Sprintf("permission request %s for %s timed out", id, req.ToolName))
		c.respondPermission(id, rawID, &req, protocol.DenyResult(&req.CanUseTool, msg), protocol.ByTimeout, "", start)
		return
	case err != nil:
		msg := "agentjq: the approval chain failed, so the call was denied: " + err.Error()
		fmt.Fprintf(s.opts.Stderr, "agentjq: approving %s: %v\n", req.ToolName, err)
		c.respondPermission(id, rawID, &req, protocol.DenyResult(&req.CanUseTool, msg), protocol.ByError, "", start)
		return
	}
	if v.Behavior != protocol.Allow && v.Message == "" {
		v.Message = protocol.NoApprover
	}
	res := v.Result(&req.CanUseTool)
	if res.Behavior == protocol.Allow && req.IsQuestion() && !hasAnswers(res.UpdatedInput) {
		// Never let a question through with no answer: the model would
		// invent one.
		res = protocol.DenyResult(&req.CanUseTool, protocol.NoOneToAnswer)
	}
	c.respondPermission(id, rawID, &req, res, v.Source, v.Rule, start)
}

var errApprovalTimeout = errors.New("approval timeout")

// decide asks the approver, falling back to the default when it has no
// opinion or only says "ask" with nobody left to ask.
func decide(ctx context.Context, d Decider, req *protocol.ToolRequest) (protocol.Verdict, error) {
	var v protocol.Verdict
	if d != nil {
		var err error
		if v, err = d.Decide(ctx, req); err != nil {
			return v, err
		}
		if ctx.Err() != nil {
			return v, ctx.Err()
		}
	}
	if v.Behavior != protocol.Allow && v.Behavior != protocol.Deny {
		msg := v.Message
		switch {
		case msg != "":
		case req.IsQuestion():
			msg = protocol.NoOneToAnswer
		default:
			msg = protocol.NoApprover
		}
		return protocol.Verdict{Behavior: protocol.Deny, Message: msg, Source: protocol.ByDefault}, nil
	}
	return v, nil
}

// respondPermission records the decision, then sends it. The event goes
// first so that a recording (and a reader of stdout) sees who decided
// before the agent acts on the answer.
func (c *controls) respondPermission(id string, rawID json.RawMessage, req *protocol.ToolRequest, res protocol.PermissionResult, by, rule string, start time.Time) {
	s := c.s
	if res.Behavior == protocol.Deny {
		c.denied(req.ToolUseID, id)
	}
	if by == "" {
		by = protocol.ByDefault
	}
	s.event(protocol.Decision{
		Type: protocol.TypeAgentjq, Subtype: protocol.EventDecision,
		RequestID: id, Tool: req.ToolName, ToolUseID: req.ToolUseID,
		Behavior: res.Behavior, DecidedBy: by, Via: protocol.ViaPermission, Rule: rule, Message: res.Message,
		LatencyUS: time.Since(start).Microseconds(),
	})
	if err := s.stdin.write(protocol.SuccessResponseRaw(rawID, res)); err != nil {
		s.warn(protocol.WarnInternal, "could not answer permission request "+id+": "+err.Error())
	}
}

// denied counts a denied call, whoever denied it, by its tool_use_id
// (the agent lists it in permission_denials under the same id), or else
// by the request's id.
func (c *controls) denied(toolUseID, requestID string) {
	if toolUseID == "" {
		toolUseID = "request-" + requestID
	}
	c.s.mu.Lock()
	c.s.denied[toolUseID] = true
	c.s.mu.Unlock()
}

// hasAnswers reports whether an AskUserQuestion input carries at least one
// non-empty answer.
func hasAnswers(input json.RawMessage) bool {
	var in struct {
		Answers map[string]string `json:"answers"`
	}
	if json.Unmarshal(input, &in) != nil {
		return false
	}
	for _, a := range in.Answers {
		if a != "" {
			return true
		}
	}
	return false
}

// sendOwnRequest sends a control request of agentjq's own; its reply is
// passed through like any other line. An agent that never answers does not
// hold the session: after ControlTimeout a warning, and it goes on. An
// initialize is given up on sooner, once the agent has finished a turn
// sent after it (passedOverLocked).
func (c *controls) sendOwnRequest(kind string, body any) {
	s := c.s
	s.mu.Lock()
	c.reqSeq++
	id := "agentjq-" + kind + "-" + strconv.Itoa(c.reqSeq)
	if kind == "init" {
		c.initAt[id] = s.turns.n
	}
	c.ours[id] = time.AfterFunc(s.opts.ControlTimeout, func() {
		s.mu.Lock()
		_, waiting := c.ours[id]
		delete(c.ours, id)
		s.mu.Unlock()
		if waiting {
			s.warn(protocol.WarnUnanswered, fmt.Sprintf("the agent did not answer agentjq's %s request (%s) within %s; going on without it", kind, id, s.opts.ControlTimeout))
			s.notify()
		}
	})
	s.mu.Unlock()
	if err := s.stdin.write(protocol.ControlRequest(id, body)); err != nil {
		s.mu.Lock()
		if t := c.ours[id]; t != nil {
			t.Stop()
		}
		delete(c.ours, id)
		s.mu.Unlock()
	}
}

// passedOverLocked gives up on our own initialize requests that the
// agent went past: it reads its stdin in order and answers an initialize
// before it runs a turn written after it (the CLI does so at once), so a
// finished turn sent after the request means no answer is coming. It
// returns the ids given up on, to be warned of once s.mu is released.
// s.mu is held.
func (c *controls) passedOverLocked() []string {
	s := c.s
	done := s.turns.n - len(s.turns.open)
	var ids []string
	for id, before := range c.initAt {
		t, waiting := c.ours[id]
		switch {
		case !waiting:
			delete(c.initAt, id)
		case done > before:
			t.Stop()
			delete(c.ours, id)
			delete(c.initAt, id)
			ids = append(ids, id)
		}
	}
	return ids
}

func (c *controls) cancelPending() {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range c.pending {
		c()
	}
	// No reply is awaited any more: no late "did not answer" warning.
	for id, t := range c.ours {
		t.Stop()
		delete(c.ours, id)
	}
}
