// Package approve decides agentjq's answers to the agent's permission
// requests (can_use_tool): from rules files in Claude Code's permission
// syntax, jq policies, an approver command, the person at the terminal, and
// a fail-closed default. The bridge hands it a Request and sends back
// whatever Verdict it returns; approver commands run through internal/proc
// like every other process agentjq starts.
package approve

import (
	"context"
	"encoding/json"

	"github.com/agentjq/agentjq/internal/protocol"
)

// Request is one can_use_tool request with the session facts policies see.
type Request struct {
	RequestID string
	protocol.CanUseTool
	// Cwd is the session's root: relative path rules are anchored there.
	Cwd string
	// ShellCwd is the directory the agent's shell is really in, when it is
	// known (the PreToolUse hook reports it: claude's Bash keeps its cwd
	// between calls). Relative paths in the call resolve against it.
	ShellCwd       string
	SessionID      string
	PermissionMode string
}

// Verdict is a decider's answer. Behavior "" means no opinion: the next
// decider in the chain is asked.
type Verdict struct {
	Behavior           string // protocol.Allow, Deny, Ask or ""
	Message            string
	UpdatedInput       json.RawMessage
	UpdatedPermissions []json.RawMessage
	// Interrupt asks the agent to stop the turn along with a deny.
	Interrupt bool
	// Source is who decided (protocol.ByRules, ByJQ, ...); Rule is the rule
	// or file:line that did.
	Source string
	Rule   string
}

// Decider answers permission requests. It must return promptly when ctx
// is done (a cancelled request or an approval timeout).
type Decider interface {
	Decide(ctx context.Context, req *Request) (Verdict, error)
}

// DeciderFunc adapts a function to Decider.
type DeciderFunc func(ctx context.Context, req *Request) (Verdict, error)

// Decide calls f.
func (f DeciderFunc) Decide(ctx context.Context, req *Request) (Verdict, error) { return f(ctx, req) }

// NoApprover is the message of the fail-closed default.
const NoApprover = "agentjq: no approver was configured for this session (use --policy, --approver, or run spawn from a terminal), so the call was denied."

// NoOneToAnswer is the message for an AskUserQuestion nobody can answer.
const NoOneToAnswer = "agentjq: no person is available to answer questions in this session and no scripted answer matched. Do not assume an answer; proceed without one or stop and explain what you need."

// Default denies everything, telling the agent why.
var Default = DeciderFunc(func(_ context.Context, req *Request) (Verdict, error) {
	msg := NoApprover
	if req.IsQuestion() {
		msg = NoOneToAnswer
	}
	return Verdict{Behavior: protocol.Deny, Message: msg, Source: protocol.ByDefault}, nil
})
