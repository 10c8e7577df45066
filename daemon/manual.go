package daemon

import (
	"fmt"
	"strings"
)

// Manual is agentjq-daemon(7) in the markdown internal/roff reads, made
// from the method table.
func Manual() string {
	var b strings.Builder
	b.WriteString(`% agentjq-daemon(7) agentjq | Miscellaneous
# NAME

agentjq-daemon - the JSON-RPC protocol of agentjq serve

# SYNOPSIS

    agentjq serve [--listen 127.0.0.1:0] [--socket PATH] [--home DIR] [--stdio]
    {"jsonrpc":"2.0","id":1,"method":"system.hello","params":{"token":"...","clientVersion":"1.0.0","protocolVersion":"` + ProtocolVersion + `"}}

# DESCRIPTION

**agentjq serve** runs agent sessions (the session core of **agentjq spawn**, with
its approval chain and its recording) and offers every capability as a JSON-RPC 2.0
method, so a terminal UI, an editor, a desktop app or a script is just another
client. This page is generated from the method table in the daemon package, as
are **protocol.json** (JSON Schema; also served at GET /protocol.json) and
**sdk/protocol.ts**; a test fails when any of them differs from the code. Both
are in the binary (**agentjq serve --print-schema**, **--print-schema=ts**) and
**make install** puts them in *PREFIX*/share/agentjq/. In both, Event is a union
discriminated by kind (one *Kind*Event type per kind, with its payload type), and
the strings whose values are closed (a decision, its scope, an outcome) are enums.

Protocol version: **` + ProtocolVersion + `** (semver).

# TRANSPORT AND AUTHENTICATION

The same framing travels over a Unix socket (one JSON message per line, mode
0600, default $AGENTJQ_HOME/daemon.sock), a WebSocket (one message per frame, text or binary, answered in text
frames; ws://127.0.0.1:PORT/ws) and, with **--stdio**, stdin and stdout (one client,
no token; when stdin ends, every request written before the end is answered,
for at most six grace periods, before the daemon shuts down). At start the daemon writes $AGENTJQ_HOME/daemon.json (0600: pid, port,
url, socket, versions, tokenFile) and the token file (0600, 256 random bits). A
daemon.json naming a live process makes a second **serve** refuse; a stale one is
replaced. $AGENTJQ_HOME defaults to $XDG_RUNTIME_DIR/agentjq, else ~/.agentjq.

The first call on a connection must be **system.hello**; any other fails
**unauthorized**, as does a wrong token (compared in constant time). A client whose
protocolVersion has another major version (before 1.0: another minor) is refused
with **protocol_incompatible**. Over the socket the file mode is the first gate
and the token the second.

The WebSocket endpoint refuses a request with an **Origin** header unless
**--allow-origin** names its host (browsers send one; other clients do not), and
any request whose **Host** is not a loopback name or address (DNS rebinding). It
listens off loopback only when **--listen** names such an address, and even then
every connection needs the token. GET /health, /version and /protocol.json are
read-only.

# SESSIONS AND EVENTS

**session.create** answers once the agent has started; an agent binary that
cannot be run (**serve --bin**, $AGENTJQ_AGENT_BIN) fails it with **internal**,
naming the binary, and leaves no session. It starts the agent with the daemon's
and the session's policy
files first in its approval chain; what they leave undecided is asked of the
clients (**approval.request**), where **spawn** would ask the terminal. The
session is built by spawn's own session builder, so it gets what a **spawn**
session gets: with any policy, agentjq's PreToolUse hook in the initialize
request, which puts every tool call before the chain (also those claude runs
without asking, such as a Read inside the workdir), the setting sources
**user** only, and hosted commands without the agent's credentials. Each
session is recorded, always, to $AGENTJQ_HOME/sessions/ID.rec in the format of
agentjq-recording(5) (redacted as **record** redacts by default).

Every event has a **seq**, strictly increasing by one within its session, and is
appended to the recording (direction **daemon**) before it is sent: the recording
is the event log. **session.subscribe** with **afterSeq** and **session.resume**
send the logged events after that seq, then the live ones, with no gap and no
duplicate: the subscriber is registered under the session's append lock at seq N,
the log is read up to N, and what arrived meanwhile is held and sent after it. A
seq beyond the last, or a log missing events, fails **resume_gap**. A call that
fails (a gap, a filter that does not compile, an unknown session) leaves the
connection's subscriptions as they were: the log is read and checked before
the old subscription is replaced. An ended session
stays readable, also after a daemon restart. Each client has a queue bounded
by bytes (16 MiB); the session never waits for it. A client that keeps reading
is kept through a burst: past the bound its queue still grows while its writes
go on, up to four times the bound. A client that takes nothing for 10 s while
messages wait for it, or that falls that far behind, gets **system.disconnect**
(code **overloaded**, with the last seq written to it per session; given 2 s)
and is dropped.

# TITLES, STEER AND FORK

A session has a title: **session.create**'s, **session.setTitle**'s (a
**session.titled** event, so the recording keeps it), else its first prompt's
first line. **session.list** shows it and narrows by **workdir** and **live**.

**session.interrupt** is claude's interrupt control request: the turn ends
(**turn.done**, error_during_execution), the session goes on, also while a
backgrounded command runs.

**session.steer** is claude's send-now (its interrupt with **send_now** and the
message's uuid, advertised as interrupt_send_now_v1): the message reaches the
model now, not after the turn. How the turn makes way is claude's choice: it may
move what the turn waits on to the background and take the message into the
turn, or stop the turn and answer the message next; under a running foreground
Bash call claude 2.1.328 and 2.1.332 stop it. No request asks claude to fold a
message into the running turn without stopping it, so the daemon offers none.

**session.fork** is claude's **--resume** *id* **--fork-session** (with
**atMessage**, **--resume-session-at**): a new session, in the source's workdir
with its create params, from the source's conversation; claude reads it from
its own transcript in the agents' $HOME, so a source whose transcript is gone
cannot be forked: claude finds no conversation and the fork's agent exits
(its **session.ended** follows).

# SHUTDOWN

SIGINT, SIGTERM or SIGHUP, or **system.shutdown**, shut the daemon down: every
session ends as **agentjq spawn** ends on its first signal (an idle one has its
stdin closed; a busy one is interrupted, then stopped in stages, each waiting a
grace period, $AGENTJQ_GRACE, default 5s). A second signal escalates every
session (SIGTERM to its agent), a third kills them. The daemon waits at most
six grace periods and 2 s for its sessions, then exits.

# APPROVALS

An approval is sent as a server-to-client request **approval.request** to every
client subscribed to the session, and announced to every client with
**approval.pending**; a client that subscribes later gets the pending requests
again, with the same id. The first valid answer wins (a response to the request
or **approval.respond**); every client then gets **approval.resolved** {who,
decision}; a later **approval.respond** fails **approval_resolved**, a later
response is logged and ignored. Unanswered, an approval is denied after
**--approval-timeout** (resolved with reason **approval_timeout**). Scope
**session** passes claude's permission_suggestions back with destination
session; scope **always** also writes their allow rules into the **--allowlist**
file (a rules file, reviewable with **agentjq approve test**), never into the
agent's settings. Pending approvals survive a client's disconnect, not a daemon
restart (the agent's request dies with its pipe).

Which calls are asked: a session with no policy (no **serve --policy**, no
**--allowlist**, no session.create policy) has no guard, as claude has none: its
clients are asked exactly what claude asks, and the calls claude runs unasked (a
Read inside the workdir, an Edit under acceptEdits) run. With any policy,
agentjq's PreToolUse guard puts every call before the policies first (a deny rule
holds for a Read claude would run unasked), and what they leave undecided comes
to the clients. A deny is therefore always **once**: **approval.respond** with
decision deny and scope session or always fails **invalid_params**, since claude
takes no deny rule from a permission answer and a rule kept by agentjq would
miss the calls claude runs unasked in a session without the guard. A deny that
must hold goes into a policy file. An allow with scope session passes claude's
suggested allow rules back with destination session: claude keeps them, and
with a policy the guard still sees every call they cover.

An approval carries the session's root (**cwd**) and the call's **toolUseId**, so
a client that judges it by policy anchors relative rules where the session's
policies do. **agentjq attach SESSION --policy FILE** (or **--approver**,
**--prompt**) is such a client: spawn's chain after the session's own, answering
every approval it gets (its policies, approver, terminal, then the fail-closed
deny) as client "agentjq attach"; it reads the event log from the start, whatever
it prints, to follow the Bash tool's directory as spawn does.

# METHODS
`)
	for _, m := range Methods {
		kind := ""
		switch {
		case m.ServerToClient:
			kind = " (server to client)"
		case m.Notification:
			kind = " (notification)"
		}
		fmt.Fprintf(&b, "\n**%s**%s\n:   %s", m.Name, kind, m.Doc)
		if m.Params != nil {
			fmt.Fprintf(&b, " Params: %s.", typeOf(m.Params).Name())
		}
		if m.Result != nil {
			fmt.Fprintf(&b, " Result: %s.", typeOf(m.Result).Name())
		}
		b.WriteString("\n")
	}
	b.WriteString("\n# EVENTS\n\nsession.event {sessionId, seq, kind, payload, ts}, kinds:\n")
	for _, k := range EventKinds {
		fmt.Fprintf(&b, "\n**%s**\n:   %s (payload %s).\n", k.Kind, k.Doc, typeOf(k.Payload).Name())
	}
	b.WriteString("\n# ERRORS\n\nJSON-RPC errors carry a text code in **error.data.code**:\n")
	for _, c := range ErrorCodes {
		fmt.Fprintf(&b, "\n**%s**\n:   %s.\n", c.Code, c.Meaning)
	}
	b.WriteString(`
# NOT OFFERED

The seed protocol's methods that belong to a whole agent product rather than to
a wrapper of an agent CLI answer **not_implemented** and are absent from
capabilities: ` + strings.Join(NotOffered(), ", ") + `. Claude Code has no
provider, gateway, memory or job model agentjq could drive headless. What has a
meaning on claude is mapped: **backend.set** sets the model (set_model);
**session.compact** sends /compact as a turn, which claude runs headless.

# VERSIONING AND THE FREEZE GATE

**protocolVersion** is semver. The protocol is frozen at 1.0.0 once
protocol.json and sdk/protocol.ts stay unchanged across three consecutive release
tags, with the contract tests passing on each. After that, additive changes need
a minor bump and a capability; a major change means releasing every client at
once. A test checks that the schema only grew since the last tag (against a
checked-in baseline while there is none): no method, type, property or event
removed, no property's type changed, no property newly required.

# SEE ALSO

agentjq(1), agentjq-spawn(1), agentjq-recording(5), agentjq-policy(5), agentjq-protocol(7)
`)
	return b.String()
}
