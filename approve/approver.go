package approve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentjq/agentjq/internal/proc"
	"github.com/agentjq/agentjq/internal/protocol"
)

// ApproverOptions describe an approver command.
type ApproverOptions struct {
	Command string // run with sh -c
	Dir     string
	Env     []string
	Stderr  io.Writer
	// Timeout bounds one answer when the request's context has no deadline.
	Timeout time.Duration
}

func (o ApproverOptions) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return time.Minute
}

func approverDeny(format string, a ...any) Verdict {
	return Verdict{Behavior: protocol.Deny, Message: "agentjq: " + fmt.Sprintf(format, a...) + ", so the call was denied.",
		Source: protocol.ByError, Rule: "approver"}
}

// approverLine is either a control_response or a bare decision carrying
// the request_id it answers.
type approverLine struct {
	Type string `json:"type"`
	// RequestID names the request a bare decision answers.
	RequestID string `json:"request_id"`
	Response  *struct {
		Subtype   string          `json:"subtype"`
		RequestID string          `json:"request_id"`
		Response  json.RawMessage `json:"response"`
		Error     string          `json:"error"`
	} `json:"response"`
	protocol.PermissionResult
}

// decodeAnswer reads one line of a co-process approver: the request it
// answers (id, "" when the line names none) and its verdict.
func decodeAnswer(l []byte) (id string, v Verdict, err error) {
	var a approverLine
	if err := decodeStrict(l, &a); err != nil {
		shown := clip(strings.TrimSpace(string(l)), 120)
		if !json.Valid(l) {
			return "", Verdict{}, fmt.Errorf("not JSON: %s", shown)
		}
		// JSON, but not an answer's shape: still, the request it names
		// (if any) is the one it is about.
		return namedRequest(l), Verdict{}, fmt.Errorf("not an answer (%v): %s", err, shown)
	}
	var pr protocol.PermissionResult
	if a.Type == protocol.TypeControlResp {
		if a.Response == nil {
			return "", Verdict{}, errors.New("a control_response without response")
		}
		id = a.Response.RequestID
		if a.Response.Subtype == "error" {
			return id, Verdict{Behavior: protocol.Deny, Source: protocol.ByApprover, Rule: "approver",
				Message: "agentjq: the approver refused: " + a.Response.Error}, nil
		}
		if err := decodeStrict(a.Response.Response, &pr); err != nil {
			return id, Verdict{}, fmt.Errorf("response: %v", err)
		}
	} else {
		id = a.RequestID
		pr = a.PermissionResult
	}
	v = Verdict{Behavior: pr.Behavior, Message: pr.Message, UpdatedInput: pr.UpdatedInput,
		UpdatedPermissions: pr.UpdatedPermissions, Interrupt: pr.Interrupt, Source: protocol.ByApprover, Rule: "approver"}
	switch pr.Behavior {
	case protocol.Allow, protocol.Ask:
	case protocol.Deny:
		if v.Message == "" {
			v.Message = "agentjq: denied by the approver."
		}
	default:
		return id, Verdict{}, fmt.Errorf("behavior %q is not allow, deny or ask", pr.Behavior)
	}
	return id, v, nil
}

// namedRequest is the request_id a JSON line names, read loosely: a bare
// decision's, else a control_response's; "" when it names none.
func namedRequest(l []byte) string {
	var a struct {
		RequestID any `json:"request_id"`
		Response  struct {
			RequestID any `json:"request_id"`
		} `json:"response"`
	}
	if json.Unmarshal(l, &a) != nil {
		// Not an object, or a member of another type: look at each
		// place on its own.
		var m map[string]json.RawMessage
		if json.Unmarshal(l, &m) != nil {
			return ""
		}
		_ = json.Unmarshal(m["request_id"], &a.RequestID)
		_ = json.Unmarshal(m["response"], &a.Response)
	}
	for _, v := range []any{a.RequestID, a.Response.RequestID} {
		if id, ok := v.(string); ok && id != "" {
			return id
		}
	}
	return ""
}

// Hook runs a Claude Code PreToolUse hook command per request: hook input
// JSON on stdin; hookSpecificOutput.permissionDecision (allow, deny, ask),
// permissionDecisionReason and updatedInput on stdout; exit 2 denies with
// stderr as the message. Empty output is no opinion; anything else that
// is not a decision denies.
type Hook struct{ opts ApproverOptions }

// MaxHookOutput caps what a hook approver may write on stdout: more is a
// deny with a clear error, never memory agentjq keeps.
const MaxHookOutput = 16 << 20

// NewHook prepares a hook approver.
func NewHook(opts ApproverOptions) *Hook { return &Hook{opts: opts} }

// Decide runs the hook once.
func (h *Hook) Decide(ctx context.Context, req *Request) (Verdict, error) {
	in, _ := json.Marshal(map[string]any{
		"session_id": req.SessionID, "transcript_path": "", "cwd": req.Cwd, "permission_mode": req.PermissionMode,
		"hook_event_name": "PreToolUse", "tool_name": req.ToolName, "tool_input": json.RawMessage(orEmpty(req.Input)),
		"tool_use_id": req.ToolUseID,
	})
	spec := proc.Spec{Command: h.opts.Command, Dir: h.opts.Dir, Env: h.opts.Env, Stdin: in, MaxOutput: MaxHookOutput}
	if _, ok := ctx.Deadline(); !ok {
		spec.Timeout = h.opts.timeout()
	}
	res := proc.Run(ctx, spec)
	if res.TimedOut || ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return Verdict{Behavior: protocol.Deny, Source: protocol.ByTimeout, Rule: "hook",
			Message: "agentjq: the hook did not answer in time, so the call was denied."}, nil
	}
	if ctx.Err() != nil {
		return Verdict{}, ctx.Err()
	}
	stderr := strings.TrimSpace(clip(string(res.Stderr), 64<<10))
	if res.ExitCode == 2 {
		if stderr == "" {
			stderr = "agentjq: the hook blocked this call."
		}
		return Verdict{Behavior: protocol.Deny, Message: stderr, Source: protocol.ByApprover, Rule: "hook exit 2"}, nil
	}
	if stderr != "" && h.opts.Stderr != nil {
		fmt.Fprintf(h.opts.Stderr, "%s\n", stderr)
	}
	switch {
	case res.Err != nil:
		v := approverDeny("the hook %q did not start (%v)", h.opts.Command, res.Err)
		v.Rule = "hook"
		return v, nil
	case res.ExitCode != 0:
		v := approverDeny("the hook %q failed (exit status %d)", h.opts.Command, res.ExitCode)
		v.Rule = "hook"
		return v, nil
	case len(res.Stdout) >= MaxHookOutput && res.Truncated:
		v := approverDeny("the hook wrote more than %d MiB", MaxHookOutput>>20)
		v.Rule = "hook"
		return v, nil
	}
	v, perr := parseHookOutput(req, res.Stdout)
	if perr != nil {
		fmt.Fprintf(h.opts.Stderr, "agentjq: hook: %v\n", perr)
		v := approverDeny("the hook answered with something agentjq cannot read (%v)", perr)
		v.Rule = "hook"
		return v, nil
	}
	return v, nil
}

func parseHookOutput(req *Request, out []byte) (Verdict, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return Verdict{}, nil
	}
	var h struct {
		Continue   *bool  `json:"continue"`
		StopReason string `json:"stopReason"`
		Decision   string `json:"decision"`
		Reason     string `json:"reason"`
		Specific   *struct {
			HookEventName string          `json:"hookEventName"`
			Decision      string          `json:"permissionDecision"`
			Reason        string          `json:"permissionDecisionReason"`
			UpdatedInput  json.RawMessage `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := decodeStrict(out, &h); err != nil {
		return Verdict{}, fmt.Errorf("output is not hook JSON: %s", clip(string(out), 120))
	}
	v := Verdict{Source: protocol.ByApprover, Rule: "hook"}
	if h.Continue != nil && !*h.Continue {
		msg := h.StopReason
		if msg == "" {
			msg = "agentjq: the hook stopped the session."
		}
		return Verdict{Behavior: protocol.Deny, Interrupt: true, Message: msg, Source: protocol.ByApprover, Rule: "hook continue:false"}, nil
	}
	if s := h.Specific; s != nil && (s.HookEventName == "" || s.HookEventName == "PreToolUse") && s.Decision != "" {
		switch s.Decision {
		case protocol.Allow:
			v.Behavior, v.UpdatedInput = protocol.Allow, s.UpdatedInput
			if len(v.UpdatedInput) == 0 || string(v.UpdatedInput) == "{}" {
				v.UpdatedInput = req.Input
			}
		case protocol.Deny:
			v.Behavior, v.Message = protocol.Deny, s.Reason
		case protocol.Ask:
			v.Behavior, v.Message = protocol.Ask, s.Reason
		case "defer":
			return Verdict{}, nil
		default:
			return Verdict{}, fmt.Errorf("permissionDecision %q is not allow, deny or ask", s.Decision)
		}
	} else {
		switch h.Decision {
		case "approve":
			v.Behavior, v.UpdatedInput = protocol.Allow, req.Input
		case "block":
			v.Behavior, v.Message = protocol.Deny, h.Reason
		case "":
			return Verdict{}, nil
		default:
			return Verdict{}, fmt.Errorf("decision %q is not approve or block", h.Decision)
		}
	}
	if v.Behavior == protocol.Deny && v.Message == "" {
		v.Message = "agentjq: denied by the hook."
	}
	return v, nil
}
