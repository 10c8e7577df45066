package approve

import "github.com/agentjq/agentjq/internal/protocol"

// SessionDenier is a person (ChainOptions.Person) whose answers can add
// deny rules for the rest of the session, as the ACP editor's "always
// reject" does. The agent runs many calls without asking (reads,
// read-only Bash, everything a mode such as acceptEdits allows), so a rule
// consulted only when the person is asked would let the same call run
// unasked later: the chain screens every call for these rules (Guards) and
// denies what one matches before any policy is asked.
type SessionDenier interface {
	Decider
	// SessionDenies returns the verdict of the person's session deny rule
	// that matches req, if one does.
	SessionDenies(req *Request) (Verdict, bool)
}

// sessionDenies is the verdict of the person's session deny rule matching
// req, finished as a deny.
func (c *Chain) sessionDenies(req *Request) (Verdict, bool) {
	sd, ok := c.opts.Person.(SessionDenier)
	if !ok {
		return Verdict{}, false
	}
	v, ok := sd.SessionDenies(req)
	if !ok {
		return Verdict{}, false
	}
	v.Behavior = protocol.Deny
	return c.finish(req, v), true
}

// PassesUndecided reports whether a call Screen leaves undecided is no
// objection (the agent's own permission flow goes on) rather than an ask.
// It is so when the chain screens calls only for the person's session deny
// rules: no policy, approver or terminal, so the person is asked exactly
// what the agent asks (not about every Read). With any of those, an
// undecided call comes back as a permission request.
func (c *Chain) PassesUndecided() bool {
	return !c.screensAll()
}
