package protocol

import "strings"

// agentjq's own events are extra NDJSON lines on spawn's stdout, told apart
// by "type":"agentjq". Consumers that only want the agent's stream drop them
// with select(.type != "agentjq"), or run spawn with --no-events.

// Event subtypes.
const (
	EventDecision = "decision"
	EventWarning  = "warning"
	EventExit     = "exit"
	EventSandbox  = "sandbox"
)

// Who decided a permission request.
const (
	ByRules    = "rules"    // a rules file
	ByJQ       = "jq"       // a jq policy
	ByApprover = "approver" // an --approver co-process or hook command
	ByTTY      = "tty"      // the person at the terminal
	ByDefault  = "default"  // nothing else answered
	ByTimeout  = "timeout"  // --approval-timeout ran out
	ByCancel   = "cancel"   // the agent withdrew the request
	ByError    = "error"    // a policy or approver failed; fail closed
	ByHook     = "hook"     // a user's --hook command (PreToolUse)
)

// The path a decision took to the agent.
const (
	// ViaHook: agentjq's PreToolUse hook, asked about every call before it
	// runs, whether or not the agent would ask permission.
	ViaHook = "hook"
	// ViaPermission: the answer to a can_use_tool permission request.
	ViaPermission = "permission"
)

// Decision records one answer to a can_use_tool request.
type Decision struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	RequestID string `json:"request_id"`
	Tool      string `json:"tool"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	Behavior  string `json:"behavior"`
	DecidedBy string `json:"decided_by"`
	Via       string `json:"via,omitempty"` // ViaHook or ViaPermission
	Rule      string `json:"rule,omitempty"`
	Message   string `json:"message,omitempty"`
	LatencyUS int64  `json:"latency_us"`
}

// Warning codes. Where they overlap, they reuse the error vocabulary of the
// snowpea daemon protocol (approval_timeout, invalid_params, internal...).
const (
	WarnNonJSON         = "non_json_output"  // the agent wrote a line that is not JSON, or nested too deep to pass on
	WarnBadInput        = "invalid_params"   // a stdin line was not valid JSON
	WarnVersion         = "version_drift"    // the agent's version was not checked
	WarnApprovalTimeout = "approval_timeout" // a permission request waited too long
	WarnInternal        = "internal"         // a handler failed
	WarnUnanswered      = "not_implemented"  // a control request no handler knows
	WarnAgentStderr     = "agent_stderr"     // reserved: agent stderr as events
	WarnSandboxOff      = "sandbox_off"      // the sandbox is off or not verified
	WarnSandboxSettings = "sandbox_settings" // a client's sandbox setting was dropped
)

// Sandboxed is a tool call the OS sandbox stopped from doing something:
// what it tried, read from the call's result.
type Sandboxed struct {
	Type      string    `json:"type"`
	Subtype   string    `json:"subtype"`
	ToolUseID string    `json:"tool_use_id"`
	Tool      string    `json:"tool"`
	Blocked   []Blocked `json:"blocked"`
}

// Blocked is one thing the sandbox refused: a write or a read of Path, or
// a connection to Host (host:port). Text is the error line it was read
// from, when it came from one.
type Blocked struct {
	Kind string `json:"kind"` // write, read, network
	Path string `json:"path,omitempty"`
	Host string `json:"host,omitempty"`
	Text string `json:"text,omitempty"`
}

// BlockedText says what the sandbox refused, one item a kind and path or
// host: "write .git/hooks/pre-commit, read .env, network example.com:80".
func BlockedText(bs []Blocked) string {
	parts := make([]string, 0, len(bs))
	for _, b := range bs {
		what := b.Path
		if b.Kind == "network" {
			what = b.Host
		}
		if what == "" {
			what = b.Text
		}
		parts = append(parts, b.Kind+" "+what)
	}
	return strings.Join(parts, ", ")
}

// Warning is a problem agentjq saw that did not stop the session.
type Warning struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
}

// NewWarning builds a warning event.
func NewWarning(code, message string) Warning {
	return Warning{Type: TypeAgentjq, Subtype: EventWarning, Code: code, Message: message}
}

// Exit is the last event of a session.
type Exit struct {
	Type       string  `json:"type"`
	Subtype    string  `json:"subtype"`
	Code       int     `json:"code"`
	Outcome    Outcome `json:"outcome"`
	AgentExit  *int    `json:"agent_exit"`
	Signal     string  `json:"signal,omitempty"`
	Turns      int     `json:"turns"`
	Denials    int     `json:"denials"`
	Error      string  `json:"error,omitempty"`
	StderrTail string  `json:"stderr_tail,omitempty"`
}
