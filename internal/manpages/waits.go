package manpages

import "github.com/agentjq/agentjq/internal/roff"

// A Wait is one place agentjq waits on a peer (an approver, a hook, a
// hosted tool or server, the agent, the client, the editor, a person): what
// it waits for, its bound, and what happens at the bound. agentjq-protocol(7)
// lists them under WAITS.
type Wait struct {
	// Peer and What name the wait: who is waited on, for what.
	Peer, What string
	// Commands are the commands that wait so ("spawn" covers every
	// command that runs a session through the bridge: spawn, record,
	// replay --check, acp and proxy too unless they have rows of their own).
	Commands string
	// Bound is the limit; AtBound what happens when it is reached.
	Bound, AtBound string
	// Code names where the wait is, as FILE:FUNCTION (FILE from the
	// module root), so that a test can check it still exists.
	Code string
}

// Waits is the table of every wait on a peer. It is the one list: a new
// wait gets a row here (the man page and its test follow). Rows are in
// the order a session meets them; add a front end's rows in its group.
var Waits = []Wait{
	// The approval chain.
	{"the approval chain", "the decision on one permission request (can_use_tool), every stage together", "spawn",
		"--approval-timeout (default 10m; 0: none)",
		"a deny saying no decision came within --approval-timeout (decided_by timeout) and an approval_timeout warning; the stage still deciding is told to stop (its context ends)",
		"internal/bridge/answer.go:canUseTool"},
	{"a permission request", "the request before it (requests are decided one at a time, in the order they came)", "spawn",
		"the earlier request's own bound",
		"the request is decided; one the agent withdraws while it waits leaves the queue at once",
		"internal/bridge/answer.go:startAnswer"},
	{"a jq policy", "its program's output", "spawn, approve",
		"the approval chain's bound; in agentjq's PreToolUse hook, 30s",
		"a deny (decided_by timeout)",
		"approve/jqpolicy.go:Decide"},
	{"the approver (--approver, control)", "its answer line, naming the request", "spawn, approve",
		"the approval chain's bound, or 1m when there is none; a line that is not an answer (not JSON, JSON of another shape, an answer without request_id) ends the wait at once",
		"a deny: at once, saying what was wrong with the line; at the 1m bound the approver is stopped and started again for the next request; at the chain's bound its late answer is dropped. A request the agent withdraws gets no answer; the approver's answer to it is dropped. Requests go to it one at a time: at most one waits",
		"approve/coprocess.go:Decide"},
	{"the approver (--approver, control)", "room in its stdin for the request", "spawn, approve",
		"as its answer",
		"a deny, and the approver is stopped (it was wedged mid-line) and started again for the next request",
		"approve/coprocess.go:Decide"},
	{"the approver (--approver, control)", "the end of its stdout once it is stopped (at the end of the session, or after a timeout or a crash)", "spawn, approve",
		"2s after its whole tree is killed",
		"agentjq stops reading it (a process outside its tree holds the pipe) and goes on",
		"approve/coprocess.go:stop"},
	{"the approver (--approver-format hook)", "the hook command's exit and output, once per request", "spawn, approve",
		"the approval chain's bound, or 1m when there is none",
		"the command and everything it started are killed; a deny (decided_by timeout)",
		"approve/approver.go:Decide"},
	{"the person at the terminal", "an answer to the prompt", "spawn",
		"the approval chain's bound (none with --approval-timeout 0)",
		"the prompt is closed and the call denied",
		"approve/prompt.go:Decide"},
	{"another agentjq's prompt", "the terminal's lock, before prompting on a terminal another agentjq shares", "spawn",
		"2s",
		"the prompt is shown without the lock",
		"approve/prompt.go:Decide"},
	{"the editor (acp)", "the answer to session/request_permission", "acp",
		"the approval chain's bound (acp's --approval-timeout); session/cancel ends it at once",
		"a deny; after session/cancel the request is answered cancelled",
		"acp/permission.go:Decide"},
	{"serve's clients", "an answer to a pending approval", "serve",
		"serve's --approval-timeout (default 10m)",
		"a deny, resolved with reason approval_timeout",
		"daemon/approvals.go:ask"},

	// Hosted hooks, tools and servers.
	{"a --hook command", "its exit and output", "spawn",
		"--hook-timeout (default 60s)",
		"the command and everything it started are killed; agentjq answers for it with no opinion",
		"hooks/hooks.go:Run"},
	{"agentjq's PreToolUse hook", "the policies' verdict on a call (after the --hook PreToolUse commands, each bounded by --hook-timeout)", "spawn",
		"30s for the policies",
		"the jq policies still running deny (decided_by timeout), and the stricter answer wins",
		"hooks/guard.go:Answer"},
	{"a --mcp-tool command", "its exit and output", "spawn",
		"--mcp-tool-timeout (default 2m)",
		"the command and everything it started are killed; the call returns an error",
		"mcphost/tools.go:toolResult"},
	{"a --mcp-server", "its response to a request the agent relays", "spawn",
		"the agent's own: agentjq adds none, as a server's tool may take what it takes; the agent withdrawing the request (its MCP timeout, an interrupt) ends the wait at once, and so do the server's exit and the end of the session",
		"withdrawn: the server gets notifications/cancelled and the agent no answer; the server gone: an error response, with the end of its stderr",
		"mcphost/relay.go:Handle"},
	{"a --mcp-server", "its exit at the end of the session", "spawn",
		"1s after its stdin closes, then 5s after it is killed",
		"it is killed with its whole tree; agentjq stops waiting",
		"mcphost/relay.go:Close"},

	// The agent.
	{"the agent", "its answer to agentjq's initialize (--init, hosting, the guard)", "spawn",
		"30s, or the end of a turn sent after it (the agent answers initialize before it runs a later turn)",
		"a warning (code unanswered) and the session goes on without it",
		"internal/bridge/answer.go:sendOwnRequest"},
	{"the agent", "its answer to agentjq's interrupt", "spawn",
		"30s; a shutdown's interrupt stage waits one grace (AGENTJQ_GRACE, default 5s)",
		"a warning (code unanswered); in a shutdown, the next stage: its stdin is closed",
		"internal/bridge/session.go:escalate"},
	{"the agent", "output while it owes some (a turn, a background task, an answer to agentjq); waiting for an approval, for stdin or for nothing is not idleness", "spawn",
		"--idle-timeout (default none)",
		"a staged shutdown; outcome stalled (exit 125)",
		"internal/bridge/session.go:idleFor"},
	{"the agent", "the end of the whole session", "spawn",
		"--timeout (default none)",
		"a staged shutdown; outcome timeout (exit 124)",
		"internal/bridge/session.go:loop"},
	{"the agent", "its exit once its stdin is closed at the end", "spawn",
		"one grace (AGENTJQ_GRACE, default 5s), renewed while it still writes",
		"SIGTERM, a grace, then SIGKILL to its whole tree; a session that had ended well keeps its outcome",
		"internal/bridge/session.go:loop"},
	{"the agent", "the end of its stdout and stderr after it exited (a grandchild may hold them)", "spawn",
		"one grace of silence, at most four graces while lines still come",
		"the pipes are closed and what is left unread is dropped",
		"internal/bridge/session.go:drained"},
	{"the agent", "room in its stdin for the client's turns", "spawn",
		"none while the session runs: it is the client's backpressure (answers and agentjq's own requests never wait for it)",
		"at the end of the session what is queued is dropped",
		"internal/bridge/session.go:sendTurn"},

	// The client.
	{"the client", "its next turn on stdin", "spawn",
		"none: a session lasts as long as its input, and waiting for it is not idleness",
		"",
		"internal/bridge/session.go:readInput"},
	{"the client", "reading spawn's stdout", "spawn",
		"none while the session runs (the agent's output is held back, never dropped); at the end, one grace",
		"what the client did not take is given up on, said on stderr; a client that closed stdout ends the session, outcome closed (exit 141)",
		"internal/bridge/session.go:endOutputBy"},
	{"the agent (proxy)", "the client's answer to a request the proxy passed on", "proxy",
		"agentjq does not wait: the agent does, on its client",
		"",
		"internal/bridge/forward.go:forwardDecide"},
	{"the agent (acp)", "its answer to set_permission_mode (session/set_mode)", "acp",
		"30s",
		"an error response to the editor",
		"acp/session.go:setMode"},
}

// waitsSection writes the WAITS section of agentjq-protocol(7).
func waitsSection(p *roff.Page) {
	p.Section("WAITS")
	p.Para("Every place agentjq waits on a peer, with its bound and what happens at the bound. A control request the agent sends gets exactly one answer, whichever bound ends the wait, unless the agent withdraws it (control_cancel_request): then nothing is sent for it, and a late answer from whoever was deciding is dropped. A grace is AGENTJQ_GRACE (default 5s).")
	for _, w := range Waits {
		p.ItemRoff(roff.Bold(w.Peer), roff.Escape(w.What)+" ("+roff.Escape(w.Commands)+")")
		// Raw, for the line breaks (ItemRoff protects a leading dot).
		p.Roff(".br\n" + roff.Italic("Bound:") + " " + roff.Escape(w.Bound))
		if w.AtBound != "" {
			p.Roff(".br\n" + roff.Italic("At the bound:") + " " + roff.Escape(w.AtBound))
		}
	}
}
