package approve

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"

	"github.com/agentjq/agentjq/internal/protocol"
)

// The agent runs many calls without asking (Read inside the project,
// read-only Bash, whatever its settings allow), so a chain that only
// answered can_use_tool would never see them. Screen is the chain's verdict
// on every call before it runs, asked by agentjq's PreToolUse hook; Decide
// then answers the permission requests that verdict sends back.

// Guards reports whether the chain decides anything beyond the fail-closed
// default: a policy, an approver or a terminal that opens, or a person who
// can add session deny rules (SessionDenier). Only then does agentjq
// screen every call; the default alone denies what the agent asks and has
// no opinion on the rest. It opens the terminal when there is one. Any
// other ChainOptions.Person (the daemon's clients) does not count, on
// purpose: it is asked what the agent asks, as claude's own user is.
func (c *Chain) Guards() bool {
	_, denier := c.opts.Person.(SessionDenier)
	return c.screensAll() || denier
}

func (c *Chain) screensAll() bool {
	return c.rules != nil || len(c.jq) > 0 || c.approver != nil || c.terminal() != nil
}

// Screen asks the policies (rules files, jq policies) about a call before
// it runs, as the PreToolUse hook reports it (req.ShellCwd is the directory
// the agent's shell is in), and the person's session deny rules
// (SessionDenier) before them. The verdict is Deny (block the call), Allow (the
// policies allow it as it is: no objection), or Ask: the policies did not
// decide, or only allowed a changed input, so the call must come back as a
// permission request for the approver, the terminal or the default. The
// approver and the terminal are never asked here: they answer that request.
func (c *Chain) Screen(ctx context.Context, req *Request) Verdict {
	r := *req
	if r.Cwd == "" {
		r.Cwd = c.opts.Cwd
	}
	if v, ok := c.denyUnsandboxed(&r); ok {
		return v
	}
	if v, ok := c.sessionDenies(&r); ok {
		return v
	}
	v, final := c.policies(ctx, &r, func(string) {})
	if final && v.Behavior == protocol.Deny {
		return v
	}
	c.noteScreened(&r, v)
	if final && sameInput(v.UpdatedInput, r.Input) {
		return v
	}
	passed := Verdict{Behavior: protocol.Ask, Message: v.Message, Rule: v.Rule, Source: v.Source}
	if final {
		// An allow of a rewritten input: only the permission answer can
		// carry the rewrite, so have the agent ask.
		passed.Message = "agentjq: the policy allows this call with a changed input."
	}
	return passed
}

// screened remembers what Screen said about a call, by tool_use_id, until
// its permission request comes (most calls never ask: the memory is
// bounded).
type screened struct {
	cwd     string
	input   json.RawMessage
	verdict Verdict
	same    bool // filled in by takeScreened: the request's input is the screened one
}

const maxScreened = 1024

type screenMemo struct {
	mu    sync.Mutex
	notes map[string]screened
	order []string
}

func (c *Chain) noteScreened(req *Request, v Verdict) {
	if req.ToolUseID == "" {
		return
	}
	m := &c.screen
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.notes == nil {
		m.notes = map[string]screened{}
	}
	if _, ok := m.notes[req.ToolUseID]; !ok {
		m.order = append(m.order, req.ToolUseID)
	}
	m.notes[req.ToolUseID] = screened{cwd: req.ShellCwd, input: req.Input, verdict: v}
	for len(m.order) > maxScreened {
		delete(m.notes, m.order[0])
		m.order = m.order[1:]
	}
}

// takeScreened returns (and forgets) what Screen said about the call of a
// permission request.
func (c *Chain) takeScreened(req *Request) (screened, bool) {
	if req.ToolUseID == "" {
		return screened{}, false
	}
	m := &c.screen
	m.mu.Lock()
	n, ok := m.notes[req.ToolUseID]
	delete(m.notes, req.ToolUseID)
	m.mu.Unlock()
	if ok {
		n.same = sameInput(n.input, req.Input)
	}
	return n, ok
}

// sameInput compares two tool inputs as JSON values; an empty one is the
// same as the other (an allow that did not change the input).
func sameInput(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
