// Package approve decides agentjq's answers to the agent's permission
// requests (can_use_tool): from rules files in Claude Code's permission
// syntax, jq policies, an approver command, the person at the terminal, and
// a fail-closed default. The bridge hands it a Request and sends back
// whatever Verdict it returns; approver commands run through internal/proc
// like every other process agentjq starts.
//
// Where it sits: above internal/bridge, which declares the Decider it asks;
// cmd wires a Chain in as the session's Approver and, through hooks.Guard,
// as its PreToolUse guard. A tool call has one decision (Chain.Explain).
//
// A call's walk through it (internal/bridge's map has the whole walk):
// chain.go (Explain: the sandbox and session denials, the call's memo,
// policies) → rules.go (RuleSet.decideAt: the input read strictly by
// strictjson.go, split into units by bash.go and bashwrap.go, the
// protected files, then deny, ask, allow) → rule.go (one rule's match) →
// back to chain.go (finish: the answer made safe, the shell's directory
// followed) → jq policies, the approver, the person, the default.
package approve

import (
	"context"

	"github.com/agentjq/agentjq/internal/protocol"
)

// Request is one can_use_tool request with the session facts policies see.
type Request = protocol.ToolRequest

// Verdict is a decider's answer. Behavior "" means no opinion: the next
// decider in the chain is asked.
type Verdict = protocol.Verdict

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
const NoApprover = protocol.NoApprover

// NoOneToAnswer is the message for an AskUserQuestion nobody can answer.
const NoOneToAnswer = protocol.NoOneToAnswer
