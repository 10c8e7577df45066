package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/protocol"
)

// GuardID is the callback id of agentjq's own PreToolUse hook.
const GuardID = "agentjq_guard"

// Guard answers agentjq's own PreToolUse hook, registered for every tool,
// so that the approval chain sees each call before it runs, including the
// calls the agent would run without asking.
//
// Order: the user's PreToolUse hooks (Runner, those whose matcher matches
// the tool) run first, one after the other in the order given, each seeing
// the input as the previous one left it; then the chain screens the input
// they leave (and the original one, when a hook changed it). The answers
// combine as the stricter wins: any deny denies (the reasons joined); else
// any "ask" or an undecided chain asks, so the call comes back as a
// permission request; else (the chain allows) a user hook's allow is
// passed on, and without one agentjq has no objection and the agent's own
// permission flow goes on.
type Guard struct {
	// Screen is the chain's verdict before a call runs (approve.Chain.Screen:
	// its one decision of the call, which the permission request reads).
	Screen func(ctx context.Context, req *approve.Request) approve.Verdict
	// Runner holds the user's hooks; its PreToolUse hooks run here rather
	// than being registered with the agent on their own. May be nil.
	Runner *Runner
	// Budget bounds the chain's part of one answer (default 30s): past it
	// the call is denied, never let through.
	Budget time.Duration
	// ClientDecides is set in agentjq proxy, where what the chain does not
	// deny is the client's to decide: an undecided chain is no objection
	// (the agent's own permission flow goes on, and asks the client when
	// it asks at all) rather than an "ask", and it is no decision of
	// agentjq's (d.Behavior is empty).
	ClientDecides bool
}

// Registration is the guard's entry in the initialize request's hooks: a
// matcher for every tool, with a timeout the agent waits longer than the
// guard can take, since a hook the agent gives up on lets the call run.
func (g *Guard) Registration() Matcher {
	return Matcher{HookCallbackIDs: []string{GuardID}, Timeout: int(g.timeout().Seconds())}
}

func (g *Guard) budget() time.Duration {
	if g.Budget > 0 {
		return g.Budget
	}
	return 30 * time.Second
}

// timeout is the longest an answer can take: every user hook in a row,
// the chain, and a margin.
func (g *Guard) timeout() time.Duration {
	d := g.budget() + 5*time.Second
	if g.Runner != nil {
		for _, h := range g.Runner.Hooks {
			if h.Event == "PreToolUse" {
				d += g.Runner.timeout()
			}
		}
	}
	return d.Round(time.Second)
}

// hookInput is what the agent sends a PreToolUse hook.
type hookInput struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	Event          string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
}

// Answer answers one hook_callback control request for the guard; ok is
// false when the callback is not the guard's. d says what was decided for
// the decision event: Behavior deny, allow, or ask (passed on to the
// permission path, whose decision is the one that counts).
func (g *Guard) Answer(ctx context.Context, requestID string, request json.RawMessage) (answer json.RawMessage, d protocol.Decision, ok bool) {
	var cb protocol.HookCallback
	if err := json.Unmarshal(request, &cb); err != nil {
		// A call of the guard that does not decode must still be blocked:
		// an error answer would let the tool run unjudged.
		if id, _ := protocol.String(protocol.Fields(request, "callback_id")[0]); id == GuardID {
			msg := "agentjq could not read this hook call (" + err.Error() + "), so the call was denied."
			d = protocol.Decision{Behavior: protocol.Deny, DecidedBy: protocol.ByError, Message: msg}
			return Block("PreToolUse", msg), d, true
		}
		return nil, d, false
	}
	if cb.CallbackID != GuardID {
		return nil, d, false
	}
	var in hookInput
	if err := json.Unmarshal(cb.Input, &in); err != nil || in.ToolName == "" {
		msg := "agentjq could not read this hook call, so the call was denied."
		d = protocol.Decision{Tool: in.ToolName, ToolUseID: in.ToolUseID, Behavior: protocol.Deny, DecidedBy: protocol.ByError, Message: msg}
		return Block("PreToolUse", msg), d, true
	}
	if in.ToolUseID == "" {
		in.ToolUseID = cb.ToolUseID
	}
	d = protocol.Decision{Tool: in.ToolName, ToolUseID: in.ToolUseID}

	// The user's hooks first: they may change the input the chain judges.
	var users []userAnswer
	input := in.ToolInput
	if g.Runner != nil {
		for _, h := range g.Runner.Hooks {
			if h.Event != "PreToolUse" || !MatchTool(h.Matcher, in.ToolName) {
				continue
			}
			out := g.Runner.Run(ctx, h, withToolInput(cb.Input, input))
			a := readUserAnswer(out)
			if a.updatedInput != nil {
				input = a.updatedInput
			}
			users = append(users, a)
		}
	}

	sctx, cancel := context.WithTimeout(ctx, g.budget())
	defer cancel()
	req := approve.Request{
		RequestID: requestID,
		CanUseTool: protocol.CanUseTool{
			Subtype: protocol.SubCanUseTool, ToolName: in.ToolName, Input: input, ToolUseID: in.ToolUseID,
		},
		ShellCwd: in.Cwd, SessionID: in.SessionID, PermissionMode: in.PermissionMode, Before: true,
	}
	v := g.Screen(sctx, &req)
	changed := !bytes.Equal(input, in.ToolInput)
	if changed && v.Behavior != protocol.Deny {
		// Whichever input the agent runs, the chain must allow it.
		orig := req
		orig.Input = in.ToolInput
		if ov := g.Screen(sctx, &orig); ov.Behavior == protocol.Deny || (ov.Behavior == protocol.Ask && v.Behavior == protocol.Allow) {
			v = ov
		}
	}
	if g.ClientDecides && v.Behavior != protocol.Deny && v.Behavior != protocol.Allow {
		v = approve.Verdict{Behavior: protocol.Allow, Source: v.Source}
		ans, d, ok := combine(v, users, changed, input, d)
		if d.Behavior == protocol.Allow {
			if slices.ContainsFunc(users, func(a userAnswer) bool { return a.decision == protocol.Allow }) {
				d.DecidedBy, d.Rule = protocol.ByHook, ""
			} else {
				d.Behavior = "" // nobody decided: the client will
			}
		}
		return ans, d, ok
	}
	ans, d, ok := combine(v, users, changed, input, d)
	if v.Again && d.DecidedBy == v.Source {
		d.Behavior = "" // the permission request decided it, and its event is out
	}
	return ans, d, ok
}

// combine makes the one answer: the stricter wins. The chain's allow is no
// objection (rank 0), so that only a user hook's own allow is passed on.
func combine(v approve.Verdict, users []userAnswer, changed bool, input json.RawMessage, d protocol.Decision) (json.RawMessage, protocol.Decision, bool) {
	chain := v.Behavior
	switch chain {
	case protocol.Deny:
	case protocol.Allow:
		chain = ""
	default:
		chain = protocol.Ask
	}
	decision := chain
	out := map[string]any{}
	var contexts []string
	for _, a := range users {
		for k, val := range a.top {
			if prev, ok := out["continue"].(json.RawMessage); ok && k == "continue" && string(prev) == "false" {
				continue // a stop asked for by one hook stays
			}
			out[k] = val
		}
		if a.context != "" {
			contexts = append(contexts, a.context)
		}
		if rankOf(a.decision) > rankOf(decision) {
			decision = a.decision
		}
	}
	// The reasons of everyone who said the winning word.
	var reasons []string
	if chain == decision && chain != "" && v.Message != "" {
		reasons = append(reasons, v.Message)
	}
	for _, a := range users {
		if a.decision == decision && a.reason != "" {
			reasons = append(reasons, a.reason)
		}
	}
	if decision == protocol.Deny && len(reasons) == 0 {
		reasons = append(reasons, "agentjq: denied.")
	}
	spec := map[string]any{"hookEventName": "PreToolUse"}
	if decision != "" {
		spec["permissionDecision"] = decision
		if len(reasons) > 0 {
			spec["permissionDecisionReason"] = strings.Join(reasons, " ")
		}
	}
	if changed {
		spec["updatedInput"] = input
	}
	if len(contexts) > 0 {
		spec["additionalContext"] = strings.Join(contexts, "\n")
	}
	if len(spec) > 1 {
		out["hookSpecificOutput"] = spec
	}

	d.Behavior = decision
	if decision == "" {
		d.Behavior = protocol.Allow
	}
	d.DecidedBy, d.Rule = v.Source, v.Rule
	if decision != chain && decision != protocol.Allow {
		d.DecidedBy, d.Rule = protocol.ByHook, ""
	}
	if d.DecidedBy == "" {
		d.DecidedBy = protocol.ByDefault
	}
	if decision == protocol.Deny {
		d.Message = strings.Join(reasons, " ")
	}
	return protocol.Marshal(out), d, true
}

// userAnswer is what one user hook said, read with exact (case-sensitive)
// keys as the agent reads them.
type userAnswer struct {
	decision     string // deny, ask, allow or ""
	reason       string
	updatedInput json.RawMessage
	context      string
	top          map[string]json.RawMessage // continue, stopReason, systemMessage, suppressOutput
}

func readUserAnswer(out json.RawMessage) userAnswer {
	var a userAnswer
	var top map[string]json.RawMessage
	if json.Unmarshal(out, &top) != nil {
		return a
	}
	a.top = map[string]json.RawMessage{}
	for _, k := range []string{"continue", "stopReason", "systemMessage", "suppressOutput"} {
		if v, ok := top[k]; ok {
			a.top[k] = v
		}
	}
	str := func(m map[string]json.RawMessage, k string) string {
		var s string
		_ = json.Unmarshal(m[k], &s)
		return s
	}
	// The older spelling: "decision": "block" or "approve".
	switch str(top, "decision") {
	case "block":
		a.decision, a.reason = protocol.Deny, str(top, "reason")
	case "approve":
		a.decision, a.reason = protocol.Allow, str(top, "reason")
	}
	var spec map[string]json.RawMessage
	if json.Unmarshal(top["hookSpecificOutput"], &spec) == nil && spec != nil {
		switch pd := str(spec, "permissionDecision"); pd {
		case protocol.Deny, protocol.Ask, protocol.Allow:
			if rankOf(pd) > rankOf(a.decision) {
				a.decision, a.reason = pd, str(spec, "permissionDecisionReason")
			}
		}
		if u := bytes.TrimSpace(spec["updatedInput"]); len(u) > 0 && u[0] == '{' {
			a.updatedInput = json.RawMessage(u)
		}
		a.context = str(spec, "additionalContext")
	}
	return a
}

func rankOf(decision string) int {
	switch decision {
	case protocol.Allow:
		return 1
	case protocol.Ask:
		return 2
	case protocol.Deny:
		return 3
	}
	return 0
}

// withToolInput is the hook input with tool_input replaced.
func withToolInput(input, toolInput json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(input, &m) != nil {
		return input
	}
	m["tool_input"] = toolInput
	return protocol.Marshal(m)
}

var plainMatcher = regexp.MustCompile(`^[A-Za-z0-9_|]+$`)

// MatchTool reports whether a hook matcher matches a tool name as the
// agent matches it: empty or "*" matches every tool, names joined by "|"
// match exactly, anything else is a regular expression. A matcher that
// does not compile matches nothing.
func MatchTool(matcher, tool string) bool {
	switch {
	case matcher == "" || matcher == "*":
		return true
	case plainMatcher.MatchString(matcher):
		for _, name := range strings.Split(matcher, "|") {
			if name == tool {
				return true
			}
		}
		return false
	}
	re, err := regexp.Compile(matcher)
	return err == nil && re.MatchString(tool)
}

// Hooks is the initialize request's "hooks" with the guard: its one
// matcher for PreToolUse, and the user's hooks of the other events as
// Runner registers them. The user's PreToolUse hooks are not registered on
// their own: they run inside the guard, before the chain.
func (g *Guard) Hooks() map[string][]Matcher {
	reg := map[string][]Matcher{}
	if g.Runner != nil {
		for event, ms := range g.Runner.Registration() {
			if event != "PreToolUse" {
				reg[event] = ms
			}
		}
	}
	reg["PreToolUse"] = []Matcher{g.Registration()}
	return reg
}
