package protocol

// Sender says who writes a message type, for the reference tables.
type Sender string

// Senders, seen from the agent CLI.
const (
	FromAgent  Sender = "agent -> client"
	ToAgent    Sender = "client -> agent"
	FromAgentq Sender = "agentjq -> stdout"
)

// TypeDoc documents one message type.
type TypeDoc struct {
	Type     string
	Sender   Sender
	Summary  string
	Subtypes []SubtypeDoc
}

// SubtypeDoc documents one subtype of a message or control request.
type SubtypeDoc struct {
	Name    string
	Summary string
	// Answer is the shape of the response, for control requests.
	Answer string
}

// MessageTypes lists every message type agentjq knows, for the protocol
// reference. Unknown types still pass through untouched.
var MessageTypes = []TypeDoc{
	{TypeUser, ToAgent, "a user turn: message.content is a string or an array of content blocks; parent_tool_use_id null; session_id", nil},
	{TypeUser, FromAgent, "user-role content the agent adds: tool results (message.content[].tool_result, tool_use_result), replays (isReplay), injected context (isSynthetic)", nil},
	{TypeSystem, FromAgent, "session and runtime events", []SubtypeDoc{
		{"init", "start of every turn: session_id, cwd, tools, mcp_servers, model, permissionMode, claude_code_version, capabilities", ""},
		{"status", "runtime status (requesting, compacting) and permissionMode changes", ""},
		{"permission_denied", "a call the agent denied itself (no stdio permission tool, dontAsk mode): tool_name, tool_use_id, message", ""},
		{"thinking_tokens", "estimated thinking tokens", ""},
		{"task_started", "a subagent or background task started: task_id, tool_use_id, description, task_type", ""},
		{"task_progress", "progress of a task: summary, last_tool_name, usage", ""},
		{"task_updated", "a patch to a task's state", ""},
		{"task_notification", "a task ended: status, summary, usage", ""},
		{"background_tasks_changed", "the full live set of background tasks (replace semantics)", ""},
		{"session_state_changed", "idle, running, requires_action", ""},
		{"hook_started", "a hook began (hook_id, hook_name, hook_event)", ""},
		{"hook_progress", "a hook's progress", ""},
		{"hook_response", "a hook finished: exit_code, outcome, stdout, stderr", ""},
		{"api_retry", "the agent retries an API call", ""},
		{"compact_boundary", "the conversation was compacted", ""},
	}},
	{TypeAssistant, FromAgent, "one completed content block of a model message (text, thinking, tool_use); blocks of one message share message.id; parent_tool_use_id is set inside a subagent", nil},
	{TypeResult, FromAgent, "end of a turn: is_error, result, num_turns, duration_ms, total_cost_usd (cumulative), usage, modelUsage, permission_denials, terminal_reason, errors", []SubtypeDoc{
		{ResultSuccess, "the turn completed; is_error may still be true for an API error", ""},
		{ResultErrorDuringExec, "the turn failed or was interrupted", ""},
		{ResultErrorMaxTurns, "--max-turns was reached", ""},
		{ResultErrorMaxBudget, "--max-budget-usd was reached", ""},
		{ResultErrorMaxStructured, "structured output retries ran out", ""},
	}},
	{TypeStreamEvent, FromAgent, "with --include-partial-messages: event is a raw Messages API stream event (message_start, content_block_start/delta/stop, message_delta, message_stop); deltas carry no message id", nil},
	{"rate_limit_event", FromAgent, "rate_limit_info: status, resetsAt, rateLimitType, utilization", nil},
	{"tool_progress", FromAgent, "heartbeat of a running tool: tool_use_id, tool_name, elapsed_time_seconds", nil},
	{TypeKeepAlive, FromAgent, "heartbeat; ignored", nil},
	{TypeControlRequest, FromAgent, "the agent asks the client and blocks until the answer: request_id, request.subtype", AgentRequests},
	{TypeControlRequest, ToAgent, "the client asks the agent: request_id, request.subtype", ClientRequests},
	{TypeControlResp, FromAgent + " / " + ToAgent, "the answer to a control_request: response.subtype success (response) or error (error), response.request_id", nil},
	{TypeControlCancel, FromAgent, "the agent withdraws one of its pending requests (request_id); the client answers nothing", nil},
	{TypeAgentjq, FromAgentq, "agentjq's own events, written between the agent's lines", AgentjqEvents},
}

// AgentRequests are the control requests the agent sends, with the answer
// agentjq gives each.
var AgentRequests = []SubtypeDoc{
	{SubCanUseTool, "permission to run a tool: tool_name, input, tool_use_id, permission_suggestions, requires_user_interaction (AskUserQuestion)",
		`{"behavior":"allow","updatedInput":{...}} or {"behavior":"deny","message":"..."}`},
	{SubHookCallback, "a hook registered in initialize fired: callback_id, input (hook_event_name, tool_name, tool_input...)",
		`hook output JSON, e.g. {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`},
	{SubMCPMessage, "a JSON-RPC message for an SDK MCP server hosted by the client: server_name, message",
		`{"mcp_response":<JSON-RPC response>}`},
	{"(any other)", "unknown subtypes", `error: "Unsupported control request subtype: X"`},
}

// ClientRequests are the control requests a client may send the agent.
var ClientRequests = []SubtypeDoc{
	{SubInitialize, "handshake: hooks, sdkMcpServers, systemPrompt, agents", "commands, agents, models, account, pid, claude_code_version"},
	{SubInterrupt, "stop the running turn; pending permission requests are cancelled", `{"still_queued":[...]}`},
	{SubSetPermissionMode, "mode: default, acceptEdits, plan, bypassPermissions, dontAsk", `{"mode":"..."}`},
	{"set_model", "model", `{"model":"..."}`},
	{SubMCPMessage, "an SDK MCP server's own outbound JSON-RPC", "empty"},
}

// AgentjqEvents are the subtypes of agentjq's own events.
var AgentjqEvents = []SubtypeDoc{
	{EventDecision, "an answer agentjq sent about a tool call: request_id, tool, tool_use_id, behavior, decided_by (rules, jq, approver, tty, default, timeout, cancel, error, hook), via (hook: agentjq's PreToolUse hook, before the call runs; permission: a can_use_tool answer), rule, message, latency_us. The hook path reports deny and allow only: its \"ask\" hands the call to the can_use_tool that follows, whose decision is the one recorded", ""},
	{EventWarning, "a problem that did not stop the session: code, message, line", ""},
	{EventSandbox, "what the OS sandbox stopped a tool call from doing, read from its result, written just before it: tool_use_id, tool, blocked (a list of {kind: write, read or network; path or host; text: the error line})", ""},
	{EventExit, "the last line of a session: code, outcome, agent_exit, signal, turns, denials, error, stderr_tail", ""},
}
