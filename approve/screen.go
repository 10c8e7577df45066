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
// answered can_use_tool would never see them. agentjq's PreToolUse hook
// asks Decide about every call before it runs (Request.Before); the same
// decision then answers the permission request that verdict sends back.

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

// Screen is Decide of a call before it runs, as the PreToolUse hook
// reports it (req.ShellCwd is the directory the agent's shell is in): see
// Request.Before.
func (c *Chain) Screen(ctx context.Context, req *Request) Verdict {
	r := *req
	r.Before = true
	v, _ := c.Decide(ctx, &r)
	return v
}

// before is what the hook is told: Deny (block the call), Allow (the
// policies allow it as it is: no objection), or Ask: the policies did not
// decide, or only allowed a changed input, so the call must come back as
// a permission request for the approver, the terminal or the default.
func before(v Verdict, input json.RawMessage) Verdict {
	final := v.Behavior == protocol.Allow || v.Behavior == protocol.Deny
	if v.Behavior == protocol.Deny || (final && sameInput(v.UpdatedInput, input)) {
		return v
	}
	passed := Verdict{Behavior: protocol.Ask, Message: v.Message, Rule: v.Rule, Source: v.Source, Again: v.Again}
	if final {
		// An allow of a rewritten input: only the permission answer can
		// carry the rewrite, so have the agent ask.
		passed.Message = "agentjq: the policy allows this call with a changed input."
	}
	return passed
}

// call is the one decision about a tool call, keyed by its tool_use_id. It
// is made by whichever of the call's two requests comes first (the
// PreToolUse hook, or can_use_tool) and read by the other: the policies'
// verdict, and the whole chain's answer once the approver or the person
// gave one, each for the input it judged. Most calls never ask: the
// table is bounded.
type call struct {
	turn     chan struct{} // held while deciding: the other request waits
	cwd      string        // the shell's directory, as the hook reported it
	input    json.RawMessage
	policies *Verdict // the policies' verdict on input
	answer   *Verdict // the chain's answer on input (a permission request)
}

const maxCalls = 1024

type calls struct {
	mu    sync.Mutex
	byID  map[string]*call
	order []string
}

// take finds (or makes) the call of req and holds it until done; nil when
// req names no tool_use_id, or ctx ended first.
func (t *calls) take(ctx context.Context, req *Request) (k *call, done func()) {
	if req.ToolUseID == "" {
		return nil, func() {}
	}
	t.mu.Lock()
	if t.byID == nil {
		t.byID = map[string]*call{}
	}
	k = t.byID[req.ToolUseID]
	if k == nil {
		k = &call{turn: make(chan struct{}, 1)}
		t.byID[req.ToolUseID] = k
		t.order = append(t.order, req.ToolUseID)
		for len(t.order) > maxCalls {
			delete(t.byID, t.order[0])
			t.order = t.order[1:]
		}
	}
	t.mu.Unlock()
	select {
	case k.turn <- struct{}{}:
		return k, func() { <-k.turn }
	case <-ctx.Done():
		return nil, func() {}
	}
}

// decided is what the call already holds for req's input: the answer, or
// else the policies' verdict (answer false).
func (k *call) decided(req *Request) (v *Verdict, answer bool) {
	if k == nil || !sameInput(k.input, req.Input) {
		return nil, false
	}
	if k.answer != nil {
		return k.answer, true
	}
	return k.policies, false
}

func (k *call) note(req *Request, policies, answer *Verdict) {
	if k == nil {
		return
	}
	if !sameInput(k.input, req.Input) {
		k.answer = nil
	}
	k.input, k.policies = req.Input, policies
	if answer != nil {
		k.answer = answer
	}
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
