package protocol

import "encoding/json"

// ToolRequest is one tool call to decide, with the session facts a policy
// sees. The bridge hands it to whatever decides (approve's
// chain, wired in by cmd) and sends back the Verdict.
type ToolRequest struct {
	RequestID string
	CanUseTool
	// Cwd is the session's root: relative path rules are anchored there.
	Cwd string
	// ShellCwd is the directory the agent's shell is really in, when it is
	// known (the PreToolUse hook reports it: claude's Bash keeps its cwd
	// between calls). Relative paths in the call resolve against it.
	ShellCwd       string
	SessionID      string
	PermissionMode string
	// Before is set when the call is asked about before it runs (the
	// PreToolUse hook): only the policies answer, and what they leave
	// undecided is an Ask, to come back as a permission request.
	Before bool
}

// Verdict is a decider's answer. Behavior "" means no opinion: the next
// decider in the chain is asked.
type Verdict struct {
	Behavior           string // Allow, Deny, Ask or ""
	Message            string
	UpdatedInput       json.RawMessage
	UpdatedPermissions []json.RawMessage
	// Interrupt asks the agent to stop the turn along with a deny.
	Interrupt bool
	// Source is who decided (ByRules, ByJQ, ...); Rule is the rule or
	// file:line that did.
	Source string
	Rule   string
	// Again is set when the call was decided already, by the other request
	// of the same tool call (the hook or the permission request): the
	// answer repeats that decision, whose event is already out.
	Again bool
}

// NoApprover is the message of the fail-closed default.
const NoApprover = "agentjq: no approver was configured for this session (use --policy, --approver, or run spawn from a terminal), so the call was denied."

// NoOneToAnswer is the message for an AskUserQuestion nobody can answer.
const NoOneToAnswer = "agentjq: no person is available to answer questions in this session and no scripted answer matched. Do not assume an answer; proceed without one or stop and explain what you need."

// HookBlock is a hook's answer that blocks the call, for the hook event
// that was asked.
func HookBlock(event, reason string) json.RawMessage {
	switch event {
	case "PreToolUse":
		return Marshal(map[string]any{"hookSpecificOutput": map[string]string{
			"hookEventName": event, "permissionDecision": "deny", "permissionDecisionReason": reason,
		}})
	case "PermissionRequest":
		return Marshal(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": event, "decision": map[string]string{"behavior": "deny", "message": reason},
		}})
	}
	return Marshal(map[string]string{"decision": "block", "reason": reason})
}
