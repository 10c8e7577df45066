package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/protocol"
)

// Decide is the editor's stage of the approval chain: asked only what the
// policies and the approver left undecided. It sends session/
// request_permission and turns the chosen option into a verdict; an
// "always" choice becomes a session rule held here (never written into
// claude's settings) that answers the same call again without asking.
func (s *session) Decide(ctx context.Context, req *approve.Request) (approve.Verdict, error) {
	if req.IsQuestion() {
		// request_permission cannot carry answers: no opinion, so the
		// chain's default tells the agent no one can answer.
		return approve.Verdict{}, nil
	}
	key := ruleKey(req)
	s.mu.Lock()
	held, ok := s.rules[key]
	s.mu.Unlock()
	if ok {
		return editorVerdict(held, "session rule ("+held+" always)", false), nil
	}
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return editorVerdict(protocol.Deny, "session ended", false), nil
	}
	s.permSeq++
	n := s.permSeq
	s.perms[n] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.perms, n)
		s.mu.Unlock()
	}()

	tc := ToolCall(req.ToolUseID, req.ToolName, req.Input)
	tc.Status = "pending"
	if tc.ToolCallID == "" {
		tc.ToolCallID = req.RequestID
	}
	params := requestPermissionRequest{SessionID: s.id, ToolCall: tc, Options: []permissionOption{
		{OptionID: AllowOnce, Name: "Allow", Kind: AllowOnce},
		{OptionID: AllowAlways, Name: "Always allow " + alwaysWhat(req), Kind: AllowAlways},
		{OptionID: RejectOnce, Name: "Reject", Kind: RejectOnce},
		{OptionID: RejectAlways, Name: "Always reject " + alwaysWhat(req), Kind: RejectAlways},
	}}
	var resp requestPermissionResponse
	err := s.a.ask(pctx, "session/request_permission", params, &resp)
	if errors.Is(context.Cause(pctx), errCancelled) {
		return editorVerdict(protocol.Deny, "cancelled", true), nil
	}
	if ctx.Err() != nil {
		return approve.Verdict{}, ctx.Err()
	}
	if err != nil {
		v := editorVerdict(protocol.Deny, "request_permission failed", false)
		v.Message = "agentjq: the editor could not be asked (" + err.Error() + "), so the call was denied."
		return v, nil
	}
	if resp.Outcome.Outcome == "cancelled" {
		return editorVerdict(protocol.Deny, "cancelled", true), nil
	}
	switch resp.Outcome.OptionID {
	case AllowOnce:
		return editorVerdict(protocol.Allow, AllowOnce, false), nil
	case RejectOnce:
		return editorVerdict(protocol.Deny, RejectOnce, false), nil
	case AllowAlways, RejectAlways:
		b := protocol.Allow
		if resp.Outcome.OptionID == RejectAlways {
			b = protocol.Deny
		}
		s.mu.Lock()
		s.rules[key] = b
		if b == protocol.Deny {
			s.denied[denyKey(req)] = true
		}
		s.mu.Unlock()
		return editorVerdict(b, resp.Outcome.OptionID, false), nil
	}
	v := editorVerdict(protocol.Deny, "unknown option", false)
	v.Message = fmt.Sprintf("agentjq: the editor chose an option agentjq did not offer (%q), so the call was denied.", resp.Outcome.OptionID)
	return v, nil
}

var _ approve.SessionDenier = (*session)(nil)

// SessionDenies is the editor's "always reject" rule matching req, if
// any. The approval chain asks it about every call before it runs (claude
// runs many calls without asking, all of them after a mode change such as
// acceptEdits), so a call rejected always never runs in this session.
func (s *session) SessionDenies(req *approve.Request) (approve.Verdict, bool) {
	key := denyKey(req)
	s.mu.Lock()
	denied := s.denied[key]
	s.mu.Unlock()
	if !denied {
		return approve.Verdict{}, false
	}
	return editorVerdict(protocol.Deny, "session rule (deny always)", false), true
}

func editorVerdict(behavior, rule string, interrupt bool) approve.Verdict {
	v := approve.Verdict{Behavior: behavior, Source: protocol.ByTTY, Rule: "acp editor: " + rule, Interrupt: interrupt}
	if behavior == protocol.Deny {
		v.Message = "The user rejected this tool call in the editor."
		if rule == "cancelled" {
			v.Message = "The user cancelled the turn."
		}
	}
	return v
}

// ruleKey is what an "always" answer covers, kept narrow on purpose (a
// wrong allow is the worst bug): a file tool on the same file, a Bash
// call with the very same command, any other tool with the very same
// input. Never a whole tool.
func ruleKey(req *approve.Request) string {
	return keyOf(req, false)
}

// denyKey is what an "always reject" covers: ruleKey's call with the file
// path cleaned, so that "/p/./a" and "/p//a" are rejected with "/p/a", and
// any other input compared as a JSON value. Only a deny may be this broad:
// "/p/link/../a" is not always "/p/a".
func denyKey(req *approve.Request) string {
	return keyOf(req, true)
}

func keyOf(req *approve.Request, forDeny bool) string {
	var in toolInput
	json.Unmarshal(req.Input, &in)
	switch req.ToolName {
	case "Write", "Edit", "MultiEdit", "Read", "NotebookEdit":
		if in.FilePath != "" {
			if forDeny {
				return req.ToolName + "\x00file\x00" + filepath.Clean(in.FilePath)
			}
			return req.ToolName + "\x00file\x00" + in.FilePath
		}
	case "Bash":
		return "Bash\x00cmd\x00" + in.Command
	}
	var v any
	if forDeny && json.Unmarshal(req.Input, &v) == nil {
		// The same input whatever its key order or spacing.
		b, _ := json.Marshal(v)
		return req.ToolName + "\x00input\x00" + string(b)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, req.Input) != nil {
		buf.Reset()
		buf.Write(req.Input)
	}
	return req.ToolName + "\x00input\x00" + buf.String()
}

// alwaysWhat names what an "always" option covers, for its label.
func alwaysWhat(req *approve.Request) string {
	var in toolInput
	json.Unmarshal(req.Input, &in)
	switch {
	case in.FilePath != "" && req.ToolName != "Bash":
		return req.ToolName + " on " + in.FilePath + " in this session"
	case req.ToolName == "Bash":
		return "this exact command in this session"
	}
	return "this exact " + req.ToolName + " call in this session"
}
