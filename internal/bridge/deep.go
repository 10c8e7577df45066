package bridge

import (
	"context"
	"fmt"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
)

// tooDeep handles a line that is JSON nested deeper than protocol.MaxDepth.
// It is not passed on: a reader's JSON parser (filter, jq, encoding/json)
// stops at that depth, so passing it would end the reader rather than
// inform it. It is tapped as the agent's stderr, as a line that is not
// JSON is, so a recording keeps it and stays readable. What the session
// itself needs of it is read with protocol.Fields, which reads such lines:
// a request is answered (the agent would wait for the answer forever),
// a result ends its turn, and control answers and cancels are followed.
func (s *session) tooDeep(ctx context.Context, n int, head protocol.Head, line []byte) {
	typ, _, _ := head.Strings()
	msg := fmt.Sprintf("agent stdout:%d: a line of JSON nesting deeper than %d, not passed on", n, protocol.MaxDepth)
	if typ != "" {
		msg += " (type " + typ + ")"
	}
	fmt.Fprintf(s.opts.Stderr, "agentjq: %s\n", msg)
	s.tap(protocol.DirErr, line, 0)
	s.warnLine(protocol.WarnNonJSON, msg, n)
	switch typ {
	case protocol.TypeControlRequest:
		s.ctl.answerTooDeep(line)
	case protocol.TypeControlCancel, protocol.TypeControlResp:
		s.ctl.control(ctx, typ, line)
	case protocol.TypeResult:
		// Too deep to be classified whole: its fields are read now.
		var f [len(protocol.ResultKeys)][]byte
		copy(f[:], protocol.Fields(line, protocol.ResultKeys[:]...))
		s.warnPassedOver(s.result(line, f))
	}
}

// answerTooDeep answers a control request nested too deep to be decoded:
// a can_use_tool, or a hook asked before a call runs, with a deny (agentjq
// cannot judge what it cannot read); any other request with an error.
func (c *controls) answerTooDeep(line []byte) {
	s := c.s
	f := protocol.Fields(line, "request_id", "request")
	key, rawID, ok := protocol.RequestKey(f[0])
	if !ok {
		s.warn(protocol.WarnUnanswered, "agent stdout: a control_request without a string or number request_id cannot be answered")
		return
	}
	s.mu.Lock()
	c.asked[key] = true
	s.mu.Unlock()
	msg := fmt.Sprintf("agentjq: the request is JSON nesting deeper than %d, which agentjq does not read, so it was refused.", protocol.MaxDepth)
	rf := protocol.Fields(f[1], "subtype", "tool_name", "tool_use_id", "input")
	subtype, _ := protocol.String(rf[0])
	if subtype == protocol.SubHookCallback {
		// A hook asked before a call runs (agentjq's guard among them)
		// blocks it: an error would let the call go on unjudged.
		hf := protocol.Fields(rf[3], "hook_event_name", "tool_name", "tool_use_id")
		event, _ := protocol.String(hf[0])
		if event == "PreToolUse" || event == "PermissionRequest" {
			d := protocol.Decision{Behavior: protocol.Deny, DecidedBy: protocol.ByError, Message: msg}
			d.Tool, _ = protocol.String(hf[1])
			d.ToolUseID, _ = protocol.String(hf[2])
			c.hookDecided(key, d, time.Now())
			if err := s.stdin.write(protocol.SuccessResponseRaw(rawID, protocol.HookBlock(event, msg))); err != nil {
				s.warn(protocol.WarnInternal, "could not answer control request "+key+": "+err.Error())
			}
			return
		}
	}
	if subtype != protocol.SubCanUseTool {
		if err := s.stdin.write(protocol.ErrorResponseRaw(rawID, msg)); err != nil {
			s.warn(protocol.WarnInternal, "could not answer control request "+key+": "+err.Error())
		}
		return
	}
	req := protocol.ToolRequest{RequestID: key, Cwd: s.opts.Dir}
	req.Subtype = protocol.SubCanUseTool
	req.ToolName, _ = protocol.String(rf[1])
	req.ToolUseID, _ = protocol.String(rf[2])
	c.respondPermission(key, rawID, &req, protocol.DenyResult(&req.CanUseTool, msg), protocol.ByError, "", time.Now())
}
