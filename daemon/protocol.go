// Package daemon is agentjq serve: sessions of the one session core
// (bridge.Run) reached over JSON-RPC 2.0 (package jsonrpc) by any number
// of clients, with events persisted in each session's recording, exact
// resume by seq, and approvals asked of the clients as the last stage of
// the approval chain.
//
// Where it sits: a front end beside spawn and acp. Each session is a
// bridge.Run whose Approver is approve's chain with the clients as its last
// stage (approvals.go) and whose tap is the session's recording.
//
// This file is the protocol's one source of truth: the method table, the
// params and result types, the event payloads and ProtocolVersion. The
// schema (protocol.json), agentjq-daemon(7) and sdk/protocol.ts are
// generated from it (gen.go).
package daemon

import (
	"encoding/json"
	"reflect"
)

// ProtocolVersion is the protocol's semver. A client whose major version
// differs is refused (protocol_incompatible). Before 1.0.0 the minor is
// the breaking part: the freeze gate (agentjq-daemon(7)) is the way to 1.0.
const ProtocolVersion = "0.1.0"

// Error codes, in error.data.code.
const (
	CodeUnauthorized         = "unauthorized"
	CodeProtocolIncompatible = "protocol_incompatible"
	CodeNotFound             = "not_found"
	CodeInvalidParams        = "invalid_params"
	CodeModeDenied           = "mode_denied"
	CodeApprovalDenied       = "approval_denied"
	CodeApprovalTimeout      = "approval_timeout"
	CodeNotImplemented       = "not_implemented"
	CodeInternal             = "internal"
	CodeSessionEnded         = "session_ended"
	CodeResumeGap            = "resume_gap"
	CodeOverloaded           = "overloaded"
	CodeApprovalResolved     = "approval_resolved"
)

// ErrorCodes lists every code with its meaning, for the schema and man page.
var ErrorCodes = []struct{ Code, Meaning string }{
	{CodeUnauthorized, "system.hello was not called first, or its token is wrong"},
	{CodeProtocolIncompatible, "the client's protocolVersion has another major version"},
	{CodeNotFound, "no such session, approval or method"},
	{CodeInvalidParams, "the params do not match the method's schema"},
	{CodeModeDenied, "the agent refused the permission mode"},
	{CodeApprovalDenied, "an approval was answered deny: the reason in approval.resolved (a decision, not a failed call)"},
	{CodeApprovalTimeout, "the approval was not answered within --approval-timeout and was denied"},
	{CodeNotImplemented, "a method of the seed protocol this daemon does not offer"},
	{CodeInternal, "a failure inside the daemon"},
	{CodeSessionEnded, "the session has ended: it can be read, not driven"},
	{CodeResumeGap, "the requested seq is not in the session's event log"},
	{CodeOverloaded, "too many sessions, or the client fell behind its event queue"},
	{CodeApprovalResolved, "the approval was already answered (first answer wins)"},
}

// The JSON-RPC error numbers the codes travel with.
const (
	rpcAppError = -32000
)

// Method is one row of the method table.
type Method struct {
	Name   string
	Doc    string
	Params any // a zero value of the params type (nil: none)
	Result any // a zero value of the result type
	// ServerToClient marks a request the daemon sends to clients.
	ServerToClient bool
	// Notification marks a notification (no result); Params is its payload.
	Notification bool
	// NotImplemented marks a seed method that answers not_implemented.
	NotImplemented bool
}

// HelloParams are system.hello's params.
type HelloParams struct {
	Token           string `json:"token"`
	ClientVersion   string `json:"clientVersion"`
	ProtocolVersion string `json:"protocolVersion"`
	ClientName      string `json:"clientName,omitempty"`
}

// AgentProfile is an agent CLI the daemon can run.
type AgentProfile struct {
	Name     string   `json:"name"`
	Binary   string   `json:"binary"`
	Versions []string `json:"versions"`
}

// HelloResult is system.hello's result.
type HelloResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	ServerVersion   string         `json:"serverVersion"`
	Capabilities    []string       `json:"capabilities"`
	Agents          []AgentProfile `json:"agents"`
	ClientID        string         `json:"clientId"`
}

// InfoResult is system.info's result.
type InfoResult struct {
	ProtocolVersion string `json:"protocolVersion"`
	ServerVersion   string `json:"serverVersion"`
	Pid             int    `json:"pid"`
	Home            string `json:"home"`
	Socket          string `json:"socket,omitempty"`
	Port            int    `json:"port,omitempty"`
	Sessions        int    `json:"sessions"`
	Clients         int    `json:"clients"`
	Policy          string `json:"policy,omitempty"`
}

// HealthResult is system.health's result (and GET /health's body).
type HealthResult struct {
	OK       bool `json:"ok"`
	Sessions int  `json:"sessions"`
}

// Empty is the params or result of a method that has none.
type Empty struct{}

// CreateParams are session.create's params.
type CreateParams struct {
	Workdir string   `json:"workdir"`
	Agent   string   `json:"agent,omitempty"`
	Model   string   `json:"model,omitempty"`
	Mode    string   `json:"mode,omitempty"`
	Policy  []string `json:"policy,omitempty"`
	Args    []string `json:"args,omitempty"`
	Partial bool     `json:"partial,omitempty"`
	// Title names the session in session.list (session.setTitle changes it).
	Title string `json:"title,omitempty"`
}

// ListParams are session.list's params: every field narrows the list.
type ListParams struct {
	// Workdir lists the sessions of that working directory only.
	Workdir string `json:"workdir,omitempty"`
	// Live lists the sessions still running only (ended: false).
	Live bool `json:"live,omitempty"`
}

// SteerParams are session.steer's params.
type SteerParams struct {
	SessionID string `json:"sessionId"`
	Text      string `json:"text"`
}

// SteerResult is session.steer's result: the seq of its turn.steered
// event, and what claude said it did (its interrupt answer's send_now:
// stopped, delivering or nothing_waiting; absent from a CLI without
// interrupt_send_now_v1, which took the request as a plain interrupt).
type SteerResult struct {
	FirstSeq int64  `json:"firstSeq"`
	SendNow  string `json:"sendNow,omitempty" enum:"stopped,delivering,nothing_waiting"`
}

// ForkParams are session.fork's params.
type ForkParams struct {
	SessionID string `json:"sessionId"`
	// Title names the fork (default: the source's title and "(fork)").
	Title string `json:"title,omitempty"`
	// AtMessage forks from the conversation up to and including the
	// message with this uuid (a uuid of the source's agent lines: claude
	// --resume-session-at); none: all of it.
	AtMessage string `json:"atMessage,omitempty"`
}

// SetTitleParams are session.setTitle's params.
type SetTitleParams struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
}

// CreateResult is session.create's result.
type CreateResult struct {
	SessionID string `json:"sessionId"`
	Recording string `json:"recording"`
}

// SessionInfo describes one session.
type SessionInfo struct {
	SessionID string `json:"sessionId"`
	Workdir   string `json:"workdir"`
	Agent     string `json:"agent"`
	Model     string `json:"model,omitempty"`
	Mode      string `json:"mode,omitempty"`
	Created   string `json:"created"`
	Ended     bool   `json:"ended"`
	Outcome   string `json:"outcome,omitempty" enum:"success,error,denied,interrupted,timeout,stalled,closed,crashed"`
	// Title is the session's title (session.create, session.setTitle),
	// else the first line of its first prompt, cut at 80 characters.
	Title     string `json:"title,omitempty"`
	LastSeq   int64  `json:"lastSeq"`
	Recording string `json:"recording"`
	Pending   int    `json:"pendingApprovals"`
	// AgentSessionID is claude's own session id, once its init was seen.
	AgentSessionID string `json:"agentSessionId,omitempty"`
}

// ListResult is session.list's result.
type ListResult struct {
	Sessions []SessionInfo `json:"sessions"`
}

// SessionRef names a session.
type SessionRef struct {
	SessionID string `json:"sessionId"`
}

// PromptParams are session.prompt's params: text, or a whole user
// message (the agent's stream-json "message" object).
type PromptParams struct {
	SessionID string          `json:"sessionId"`
	Text      string          `json:"text,omitempty"`
	Message   json.RawMessage `json:"message,omitempty"`
}

// PromptResult is session.prompt's result: the seq of the turn's first
// event (the turn.started event); turn.done ends it.
type PromptResult struct {
	FirstSeq int64 `json:"firstSeq"`
}

// SetModeParams are session.setMode's params.
type SetModeParams struct {
	SessionID string `json:"sessionId"`
	Mode      string `json:"mode"`
}

// SubscribeParams are session.subscribe's params.
type SubscribeParams struct {
	SessionID string   `json:"sessionId"`
	AfterSeq  *int64   `json:"afterSeq,omitempty"`
	Kinds     []string `json:"kinds,omitempty"`
	Filter    string   `json:"filter,omitempty"`
}

// ResumeParams are session.resume's params.
type ResumeParams struct {
	SessionID string `json:"sessionId"`
	AfterSeq  int64  `json:"afterSeq"`
}

// SubscribeResult is session.subscribe's and session.resume's result: the
// events after afterSeq up to LastSeq are sent from the log, then live.
type SubscribeResult struct {
	SessionID string         `json:"sessionId"`
	LastSeq   int64          `json:"lastSeq"`
	Ended     bool           `json:"ended"`
	Pending   []ApprovalInfo `json:"pendingApprovals"`
}

// CommandInfo is a slash command of the agent.
type CommandInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// CommandListResult is command.list's result.
type CommandListResult struct {
	Commands []CommandInfo `json:"commands"`
}

// ToolListResult is tool.list's result.
type ToolListResult struct {
	Tools []string `json:"tools"`
}

// CommandRunParams are command.run's params.
type CommandRunParams struct {
	SessionID string `json:"sessionId"`
	Command   string `json:"command"`
	Args      string `json:"args,omitempty"`
}

// BackendSetParams are backend.set's params: on claude the backend is the model.
type BackendSetParams struct {
	SessionID string `json:"sessionId"`
	Model     string `json:"model"`
}

// ApprovalInfo is one approval asked of the clients.
type ApprovalInfo struct {
	ID        string          `json:"id"`
	SessionID string          `json:"sessionId"`
	RequestID string          `json:"requestId"`
	Tool      string          `json:"tool"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"toolUseId,omitempty"`
	// Cwd is the session's root, where the policies anchor relative rules.
	Cwd         string            `json:"cwd,omitempty"`
	KeyInput    string            `json:"keyInput,omitempty"`
	Suggestions []json.RawMessage `json:"permissionSuggestions,omitempty"`
	Trace       []string          `json:"trace"`
	Created     string            `json:"created"`
}

// ApprovalListParams are approval.list's params.
type ApprovalListParams struct {
	SessionID string `json:"sessionId,omitempty"`
}

// ApprovalListResult is approval.list's result.
type ApprovalListResult struct {
	Approvals []ApprovalInfo `json:"approvals"`
}

// Decision is a client's answer to an approval (the approval.request
// result, and approval.respond's params without the id).
type Decision struct {
	Decision     string          `json:"decision" enum:"allow,deny"`
	Scope        string          `json:"scope,omitempty" enum:"once,session,always"` // always, session: an allow only
	Message      string          `json:"message,omitempty"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
}

// RespondParams are approval.respond's params.
type RespondParams struct {
	ID           string          `json:"id"`
	Decision     string          `json:"decision" enum:"allow,deny"`
	Scope        string          `json:"scope,omitempty" enum:"once,session,always"`
	Message      string          `json:"message,omitempty"`
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
}

// ResolvedParams is the approval.resolved notification.
type ResolvedParams struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionId"`
	Who       string `json:"who"`
	Decision  string `json:"decision" enum:"allow,deny"`
	Scope     string `json:"scope,omitempty" enum:"once,session,always"`
	Reason    string `json:"reason,omitempty"`
}

// AllowlistParams are permission.allowlist.add/remove's params.
type AllowlistParams struct {
	Rule string `json:"rule"`
}

// AllowlistResult is the policy file's allow rules after the call.
type AllowlistResult struct {
	Policy string   `json:"policy"`
	Allow  []string `json:"allow"`
}

// Event is the session.event notification.
type Event struct {
	SessionID string          `json:"sessionId"`
	Seq       int64           `json:"seq"`
	Kind      string          `json:"kind"`
	Payload   json.RawMessage `json:"payload"`
	TS        string          `json:"ts"`
}

// DisconnectParams is the system.disconnect notification sent before the
// daemon drops a client on purpose.
type DisconnectParams struct {
	Reason  string           `json:"reason"`
	Code    string           `json:"code"`
	LastSeq map[string]int64 `json:"lastSeq,omitempty"`
}

// Event payloads.
type (
	AgentLinePayload struct {
		Line json.RawMessage `json:"line"`
	}
	TurnStartedPayload struct {
		Text string `json:"text,omitempty"`
	}
	MessageDeltaPayload struct {
		Text            string `json:"text"`
		ParentToolUseID string `json:"parentToolUseId,omitempty"`
	}
	MessageDonePayload struct {
		Message         json.RawMessage `json:"message"`
		Text            string          `json:"text"`
		ParentToolUseID string          `json:"parentToolUseId,omitempty"`
	}
	ToolCallPayload struct {
		ToolUseID       string          `json:"toolUseId"`
		Name            string          `json:"name"`
		Input           json.RawMessage `json:"input"`
		ParentToolUseID string          `json:"parentToolUseId,omitempty"`
	}
	ToolResultPayload struct {
		ToolUseID       string          `json:"toolUseId"`
		Content         json.RawMessage `json:"content"`
		IsError         bool            `json:"isError"`
		ParentToolUseID string          `json:"parentToolUseId,omitempty"`
	}
	SubagentPayload struct {
		ToolUseID string          `json:"toolUseId,omitempty"`
		TaskID    string          `json:"taskId,omitempty"`
		Status    string          `json:"status,omitempty"`
		Detail    json.RawMessage `json:"detail"`
	}
	ModeChangedPayload struct {
		Mode string `json:"mode"`
	}
	UsagePayload struct {
		Usage        json.RawMessage `json:"usage"`
		TotalCostUSD float64         `json:"totalCostUsd"`
	}
	ErrorPayload struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	TurnDonePayload struct {
		Subtype    string `json:"subtype"`
		IsError    bool   `json:"isError"`
		Result     string `json:"result,omitempty"`
		NumTurns   int    `json:"numTurns"`
		DurationMS int64  `json:"durationMs"`
	}
	ApprovalEventPayload struct {
		ID       string `json:"id"`
		Tool     string `json:"tool,omitempty"`
		Who      string `json:"who,omitempty"`
		Decision string `json:"decision,omitempty" enum:"allow,deny"`
	}
	TitledPayload struct {
		Title string `json:"title"`
	}
	SessionEndedPayload struct {
		Outcome  string `json:"outcome" enum:"success,error,denied,interrupted,timeout,stalled,closed,crashed"`
		ExitCode int    `json:"exitCode"`
		Error    string `json:"error,omitempty"`
	}
)

// EventKinds maps each session.event kind to its payload type.
var EventKinds = []struct {
	Kind    string
	Doc     string
	Payload any
}{
	{"agent.line", "each raw line of the agent's stdout, for clients that want the protocol itself", AgentLinePayload{}},
	{"turn.started", "a turn was sent to the agent (session.prompt, command.run)", TurnStartedPayload{}},
	{"message.delta", "a text delta of a partial message (session.create partial: true passes --include-partial-messages; claude streams the main agent's messages only, a subagent's arrive whole)", MessageDeltaPayload{}},
	{"message.done", "an assistant message, whole", MessageDonePayload{}},
	{"tool.call", "a tool_use block of an assistant message", ToolCallPayload{}},
	{"tool.result", "a tool_result block of a user message", ToolResultPayload{}},
	{"subagent.spawn", "a subagent started, once per subagent: its Task/Agent tool call, or a task_started line without one (status started)", SubagentPayload{}},
	{"subagent.update", "a subagent's progress: task_started after its call (started), its messages (parent_tool_use_id; running), task_progress and task_updated (their status), a backgrounded Task's immediate tool_result (launched)", SubagentPayload{}},
	{"subagent.done", "a subagent ended, once: task_notification for a backgrounded Task (its status), else the Task call's tool_result (completed or failed)", SubagentPayload{}},
	{"mode.changed", "the permission mode changed (init, session.setMode)", ModeChangedPayload{}},
	{"usage", "token usage and cost of a turn", UsagePayload{}},
	{"error", "an error of the agent or of agentjq (a warning, a failed turn)", ErrorPayload{}},
	{"turn.done", "the turn's result", TurnDonePayload{}},
	{"approval.pending", "an approval is waiting for a client", ApprovalEventPayload{}},
	{"approval.resolved", "an approval was answered", ApprovalEventPayload{}},
	{"session.ended", "the agent's process ended; the session can be read, not driven", SessionEndedPayload{}},
	{"turn.steered", "a user message sent to reach the model now (session.steer): claude takes it into the running turn, or stops that turn (its turn.done, error_during_execution) and answers the message in the next turn.done", TurnStartedPayload{}},
	{"session.titled", "the session's title was set (session.create's title, session.setTitle)", TitledPayload{}},
}

// Methods is the method table.
var Methods = []Method{
	{Name: "system.hello", Doc: "The handshake: must be the first call on every connection.", Params: HelloParams{}, Result: HelloResult{}},
	{Name: "system.info", Doc: "Where the daemon runs and what it holds.", Params: Empty{}, Result: InfoResult{}},
	{Name: "system.health", Doc: "A sign of life.", Params: Empty{}, Result: HealthResult{}},
	{Name: "system.shutdown", Doc: "Close every session (staged shutdown) and exit.", Params: Empty{}, Result: Empty{}},
	{Name: "session.create", Doc: "Start an agent session (spawn's session core), recorded to $AGENTJQ_HOME/sessions/<id>.rec.", Params: CreateParams{}, Result: CreateResult{}},
	{Name: "session.list", Doc: "Live sessions and the recordings of ended ones, oldest first, each with its title; workdir and live narrow the list.", Params: ListParams{}, Result: ListResult{}},
	{Name: "session.setTitle", Doc: "Name a live session (a session.titled event; session.list shows it).", Params: SetTitleParams{}, Result: Empty{}},
	{Name: "session.subscribe", Doc: "Events of a session: from the log after afterSeq (if given), then live, with no gap and no duplicate. kinds and a jq filter narrow them: the filter is the language of agentjq filter (agentlib included, no $ENV, no input), run on each session.event's params; an event is sent when its first output is truthy, and a program that does not compile fails invalid_params.", Params: SubscribeParams{}, Result: SubscribeResult{}},
	{Name: "session.unsubscribe", Doc: "Stop a subscription.", Params: SessionRef{}, Result: Empty{}},
	{Name: "session.resume", Doc: "session.subscribe from afterSeq, all kinds; the result lists the approvals still pending.", Params: ResumeParams{}, Result: SubscribeResult{}},
	{Name: "session.prompt", Doc: "Send a user turn; returns at once with the turn's first seq (turn.started); turn.done ends it.", Params: PromptParams{}, Result: PromptResult{}},
	{Name: "session.steer", Doc: "Add a user message to the running turn: sent with a uuid, then claude's interrupt with send_now for it, so that it reaches the model now instead of after the turn: claude moves what the turn waits on to the background so the turn takes the message in, or stops the turn and answers the message next (sendNow stopped; what claude 2.1.328 and 2.1.332 do under a running Bash call). With no turn running it is a turn of its own. Returns once claude has answered.", Params: SteerParams{}, Result: SteerResult{}},
	{Name: "session.fork", Doc: "A new session that starts from a session's conversation (claude --resume <its agentSessionId> --fork-session, in its workdir, with its create params): the source goes on unchanged, live or ended. atMessage forks at one of its messages (--resume-session-at: the conversation up to and including the agent line with that uuid). Fails invalid_params before the source's agent has started (no agentSessionId yet).", Params: ForkParams{}, Result: CreateResult{}},
	{Name: "session.interrupt", Doc: "Interrupt the turn in flight: claude's interrupt control request; the turn ends (turn.done), the session goes on.", Params: SessionRef{}, Result: Empty{}},
	{Name: "session.setMode", Doc: "set_permission_mode: default, acceptEdits, plan, bypassPermissions, dontAsk.", Params: SetModeParams{}, Result: Empty{}},
	{Name: "session.compact", Doc: "Send /compact as a turn (what claude does headless).", Params: SessionRef{}, Result: PromptResult{}},
	{Name: "session.close", Doc: "End the session: stdin closed, then the staged shutdown.", Params: SessionRef{}, Result: Empty{}},
	{Name: "session.deleteSaved", Doc: "Delete an ended session's recording (agentjq's own file only).", Params: SessionRef{}, Result: Empty{}},
	{Name: "command.list", Doc: "The agent's slash commands (from its init).", Params: SessionRef{}, Result: CommandListResult{}},
	{Name: "command.run", Doc: "Send a slash command as a turn.", Params: CommandRunParams{}, Result: PromptResult{}},
	{Name: "tool.list", Doc: "The agent's tools (from its init).", Params: SessionRef{}, Result: ToolListResult{}},
	{Name: "backend.set", Doc: "On claude the backend is the model: set_model.", Params: BackendSetParams{}, Result: Empty{}},
	{Name: "approval.list", Doc: "Approvals waiting for an answer.", Params: ApprovalListParams{}, Result: ApprovalListResult{}},
	{Name: "approval.respond", Doc: "Answer an approval; the first answer wins, a later one fails approval_resolved. scope session or always is for an allow; a deny is once (a deny rule belongs in a policy file).", Params: RespondParams{}, Result: ResolvedParams{}},
	{Name: "permission.allowlist.list", Doc: "The allow rules of the daemon's --allowlist policy file.", Params: Empty{}, Result: AllowlistResult{}},
	{Name: "permission.allowlist.add", Doc: "Add an allow rule (validated like a --policy file).", Params: AllowlistParams{}, Result: AllowlistResult{}},
	{Name: "permission.allowlist.remove", Doc: "Remove an allow rule.", Params: AllowlistParams{}, Result: AllowlistResult{}},

	{Name: "approval.request", Doc: "Server to client: a permission request the policy chain left undecided. Answer with a Decision.", Params: ApprovalInfo{}, Result: Decision{}, ServerToClient: true},
	{Name: "session.event", Doc: "Notification: one event of a subscribed session.", Params: Event{}, Notification: true},
	{Name: "approval.pending", Doc: "Notification to every client: an approval is waiting.", Params: ApprovalInfo{}, Notification: true},
	{Name: "approval.resolved", Doc: "Notification to every client: an approval was answered.", Params: ResolvedParams{}, Notification: true},
	{Name: "system.disconnect", Doc: "Notification: the daemon drops this client, and why.", Params: DisconnectParams{}, Notification: true},
}

// notOffered are the seed's methods that belong to the snowpea product,
// not to an agent-CLI wrapper: they answer not_implemented.
var notOffered = []string{
	"provider.list", "provider.configure", "provider.loginWeb",
	"agent.list", "agent.create", "agent.spawn", "agent.bindChannel", "agent.delete",
	"team.start", "team.status",
	"job.schedule", "job.list", "job.cancel", "job.runNow",
	"gateway.bind", "gateway.list", "gateway.unbind",
	"memory.search", "memory.write",
	"skill.search", "skill.install", "skill.list", "skill.remove", "skill.reload",
}

// NotOffered lists the seed methods answered not_implemented.
func NotOffered() []string { return append([]string(nil), notOffered...) }

// Capabilities are the names of the methods a client may call.
func Capabilities() []string {
	var caps []string
	for _, m := range Methods {
		if !m.ServerToClient && !m.Notification && !m.NotImplemented {
			caps = append(caps, m.Name)
		}
	}
	return caps
}

func typeOf(v any) reflect.Type {
	if v == nil {
		return nil
	}
	return reflect.TypeOf(v)
}
