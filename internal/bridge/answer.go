package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
)

// answered ends the request id's answer. The idle clock starts again
// now: the time the answer took (an approver's, a person's) is never the
// agent's silence, not even the part since idleFor last looked.
func (s *session) answered(id string) {
	s.mu.Lock()
	if cancel := s.pending[id]; cancel != nil {
		cancel()
	}
	delete(s.pending, id)
	delete(s.withdraw, id)
	s.owedSince = time.Now()
	s.mu.Unlock()
	s.notify()
}

// answer handles one control request from the agent and sends exactly one
// response, unless the agent withdrew the request first.
func (s *session) answer(ctx context.Context, id string, rawID json.RawMessage, request json.RawMessage) {
	defer s.answered(id)
	var head struct {
		Subtype string `json:"subtype"`
	}
	_ = json.Unmarshal(request, &head)
	switch head.Subtype {
	case protocol.SubCanUseTool:
		s.canUseTool(ctx, id, rawID, request)
		return
	}
	var resp []byte
	if h := s.opts.Handlers[head.Subtype]; h != nil {
		payload, err := h(ctx, id, request)
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), errWithdrawn) {
			return
		}
		if err != nil {
			resp = protocol.ErrorResponseRaw(rawID, err.Error())
		} else {
			resp = protocol.SuccessResponseRaw(rawID, payload)
		}
	} else {
		msg := protocol.UnsupportedMessage(head.Subtype)
		switch head.Subtype {
		case protocol.SubHookCallback:
			msg = "agentjq: no hook is registered for this callback"
		case protocol.SubMCPMessage:
			msg = "agentjq: no MCP server of that name is hosted by this session"
		default:
			s.warn(protocol.WarnUnanswered, fmt.Sprintf("answered unknown control request subtype %q with an error", head.Subtype))
		}
		resp = protocol.ErrorResponseRaw(rawID, msg)
	}
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), errWithdrawn) {
		return
	}
	if err := s.writeAgent(resp); err != nil {
		s.warn(protocol.WarnInternal, "could not answer control request "+id+": "+err.Error())
	}
}

// errWithdrawn is the cause of a handler's cancellation when the agent
// sent control_cancel_request: nothing may be sent for that request.
var errWithdrawn = errors.New("the agent withdrew the request")

// canUseTool runs the approval chain and answers a permission request.
func (s *session) canUseTool(ctx context.Context, id string, rawID, raw json.RawMessage) {
	start := time.Now()
	req := protocol.ToolRequest{RequestID: id, Cwd: s.opts.Dir}
	if err := json.Unmarshal(raw, &req.CanUseTool); err != nil {
		s.respondPermission(id, rawID, &req, protocol.DenyResult(&req.CanUseTool, "agentjq could not read this permission request: "+err.Error()), protocol.ByError, "", start)
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
		s.respondPermission(id, rawID, &req, protocol.DenyResult(&req.CanUseTool, msg), protocol.ByTimeout, "", start)
		return
	case err != nil:
		msg := "agentjq: the approval chain failed, so the call was denied: " + err.Error()
		fmt.Fprintf(s.opts.Stderr, "agentjq: approving %s: %v\n", req.ToolName, err)
		s.respondPermission(id, rawID, &req, protocol.DenyResult(&req.CanUseTool, msg), protocol.ByError, "", start)
		return
	}
	var res protocol.PermissionResult
	switch v.Behavior {
	case protocol.Allow:
		res = protocol.AllowResult(&req.CanUseTool, v.UpdatedInput)
		res.UpdatedPermissions = v.UpdatedPermissions
		if req.IsQuestion() && !hasAnswers(res.UpdatedInput) {
			// Never let a question through with no answer: the model
			// would invent one.
			res = protocol.DenyResult(&req.CanUseTool, protocol.NoOneToAnswer)
		}
	default:
		msg := v.Message
		if msg == "" {
			msg = protocol.NoApprover
		}
		res = protocol.DenyResult(&req.CanUseTool, msg)
		res.Interrupt = v.Interrupt
	}
	s.respondPermission(id, rawID, &req, res, v.Source, v.Rule, start)
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
func (s *session) respondPermission(id string, rawID json.RawMessage, req *protocol.ToolRequest, res protocol.PermissionResult, by, rule string, start time.Time) {
	if res.Behavior == protocol.Deny {
		key := req.ToolUseID
		if key == "" {
			key = "request-" + id
		}
		s.mu.Lock()
		s.denied[key] = true
		s.mu.Unlock()
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
	if err := s.writeAgent(protocol.SuccessResponseRaw(rawID, res)); err != nil {
		s.warn(protocol.WarnInternal, "could not answer permission request "+id+": "+err.Error())
	}
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
