package approve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/itchyny/gojq"

	"github.com/agentjq/agentjq/internal/protocol"
)

// JQPolicy is a jq program that decides permission requests. It reads the
// request (tool_name, input, tool_use_id, permission_suggestions, ...) with
// the session's cwd, session_id and permission_mode, and outputs "allow",
// "deny", "ask", or {behavior, message, updatedInput, updatedPermissions,
// interrupt}; {answers: {...}} answers AskUserQuestion. No output (or null)
// means no opinion.
type JQPolicy struct {
	Name string
	code *gojq.Code
	// Stderr receives runtime errors; they also deny the request.
	Stderr io.Writer
}

// ParseJQPolicy compiles a jq policy; errors carry file:line:column.
func ParseJQPolicy(name string, src []byte) (*JQPolicy, error) {
	q, err := gojq.Parse(string(src))
	if err != nil {
		var pe *gojq.ParseError
		if errors.As(err, &pe) {
			l, c := lineCol(src, pe.Offset)
			return nil, &PolicyError{name, l, c, "jq: " + pe.Error()}
		}
		return nil, &PolicyError{File: name, Msg: "jq: " + err.Error()}
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, &PolicyError{File: name, Msg: "jq: " + err.Error()}
	}
	return &JQPolicy{Name: name, code: code}, nil
}

// jqInput builds the value a jq policy reads.
func jqInput(req *Request) (map[string]any, error) {
	b, err := json.Marshal(&req.CanUseTool)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if _, ok := m["input"]; !ok || m["input"] == nil {
		m["input"] = map[string]any{}
	}
	m["request_id"] = req.RequestID
	m["cwd"] = req.Cwd
	m["session_id"] = req.SessionID
	m["permission_mode"] = req.PermissionMode
	return m, nil
}

// Decide runs the program on the request.
func (p *JQPolicy) Decide(ctx context.Context, req *Request) (Verdict, error) {
	in, err := jqInput(req)
	if err != nil {
		return p.fail(req, err), nil
	}
	iter := p.code.RunWithContext(ctx, in)
	v, ok := iter.Next()
	if !ok || v == nil {
		return Verdict{}, nil
	}
	if err, isErr := v.(error); isErr {
		if ctx.Err() != nil {
			return Verdict{}, ctx.Err()
		}
		return p.fail(req, err), nil
	}
	verdict, err := p.interpret(req, v)
	if err != nil {
		return p.fail(req, err), nil
	}
	return verdict, nil
}

func (p *JQPolicy) fail(req *Request, err error) Verdict {
	msg := fmt.Sprintf("agentjq: jq policy %s failed: %v", p.Name, err)
	if p.Stderr != nil {
		fmt.Fprintf(p.Stderr, "%s (request %s, %s)\n", msg, req.RequestID, req.ToolName)
	}
	return Verdict{Behavior: protocol.Deny, Message: msg + "; the call was denied.", Source: protocol.ByError, Rule: p.Name}
}

func (p *JQPolicy) interpret(req *Request, v any) (Verdict, error) {
	out := Verdict{Source: protocol.ByJQ, Rule: p.Name}
	switch v := v.(type) {
	case string:
		out.Behavior = v
	case map[string]any:
		for k, x := range v {
			switch k {
			case "behavior":
				s, ok := x.(string)
				if !ok {
					return out, errors.New("behavior must be a string")
				}
				out.Behavior = s
			case "message":
				s, ok := x.(string)
				if !ok {
					return out, errors.New("message must be a string")
				}
				out.Message = s
			case "interrupt":
				b, ok := x.(bool)
				if !ok {
					return out, errors.New("interrupt must be a boolean")
				}
				out.Interrupt = b
			case "updatedInput":
				if _, ok := x.(map[string]any); !ok {
					return out, errors.New("updatedInput must be an object")
				}
				b, err := json.Marshal(x)
				if err != nil {
					return out, err
				}
				out.UpdatedInput = b
			case "updatedPermissions":
				list, ok := x.([]any)
				if !ok {
					return out, errors.New("updatedPermissions must be an array")
				}
				for _, e := range list {
					b, err := json.Marshal(e)
					if err != nil {
						return out, err
					}
					out.UpdatedPermissions = append(out.UpdatedPermissions, b)
				}
			case "answers":
				m, ok := x.(map[string]any)
				if !ok {
					return out, errors.New("answers must be an object")
				}
				ans := map[string]string{}
				for q, a := range m {
					s, ok := a.(string)
					if !ok || strings.TrimSpace(s) == "" {
						return out, fmt.Errorf("the answer to %q must be a non-empty string", q)
					}
					ans[q] = s
				}
				b, err := withAnswers(req.Input, ans)
				if err != nil {
					return out, err
				}
				out.UpdatedInput = b
				if out.Behavior == "" {
					out.Behavior = protocol.Allow
				}
			}
		}
	default:
		return out, fmt.Errorf("output %s is not a decision (want \"allow\", \"deny\", \"ask\" or an object)", jsonText(v))
	}
	switch out.Behavior {
	case protocol.Allow:
		if out.UpdatedInput == nil {
			out.UpdatedInput = req.Input
		}
	case protocol.Deny:
		if out.Message == "" {
			out.Message = "agentjq: denied by jq policy " + p.Name + "."
		}
	case protocol.Ask:
	case "":
		return Verdict{}, nil
	default:
		return out, fmt.Errorf("behavior %q is not allow, deny or ask", out.Behavior)
	}
	return out, nil
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip(string(b), 80)
}
