package protocol

import (
	"bytes"
	"encoding/json"
)

// Control request subtypes the agent sends to the client.
const (
	SubCanUseTool   = "can_use_tool"
	SubHookCallback = "hook_callback"
	SubMCPMessage   = "mcp_message"
)

// Control request subtypes the client sends to the agent.
const (
	SubInitialize        = "initialize"
	SubInterrupt         = "interrupt"
	SubSetPermissionMode = "set_permission_mode"
)

// CanUseTool is the request body of a can_use_tool control request.
type CanUseTool struct {
	Subtype                 string            `json:"subtype"`
	ToolName                string            `json:"tool_name"`
	DisplayName             string            `json:"display_name,omitempty"`
	Input                   json.RawMessage   `json:"input"`
	ToolUseID               string            `json:"tool_use_id,omitempty"`
	Description             string            `json:"description,omitempty"`
	PermissionSuggestions   []json.RawMessage `json:"permission_suggestions,omitempty"`
	BlockedPath             string            `json:"blocked_path,omitempty"`
	DecisionReason          string            `json:"decision_reason,omitempty"`
	RequiresUserInteraction bool              `json:"requires_user_interaction,omitempty"`
	MCPServer               json.RawMessage   `json:"mcp_server,omitempty"`
	AgentID                 string            `json:"agent_id,omitempty"`
}

// IsQuestion reports whether the request is AskUserQuestion, which must be
// answered with the user's choices, never with an empty answer.
func (c *CanUseTool) IsQuestion() bool {
	return c.ToolName == "AskUserQuestion"
}

// Behaviors of a permission result.
const (
	Allow = "allow"
	Deny  = "deny"
	Ask   = "ask" // only inside agentjq's approval chain; never sent
)

// PermissionResult is the response body to can_use_tool.
type PermissionResult struct {
	Behavior           string            `json:"behavior"`
	UpdatedInput       json.RawMessage   `json:"updatedInput,omitempty"`
	UpdatedPermissions []json.RawMessage `json:"updatedPermissions,omitempty"`
	Message            string            `json:"message,omitempty"`
	Interrupt          bool              `json:"interrupt,omitempty"`
	ToolUseID          string            `json:"toolUseID,omitempty"`
}

// AllowResult allows a call. An allow always carries updatedInput: older
// CLIs ran the tool with empty arguments without it.
func AllowResult(req *CanUseTool, updated json.RawMessage) PermissionResult {
	if len(updated) == 0 {
		updated = req.Input
	}
	if len(updated) == 0 {
		updated = json.RawMessage(`{}`)
	}
	return PermissionResult{Behavior: Allow, UpdatedInput: updated, ToolUseID: req.ToolUseID}
}

// DenyResult denies a call. The agent requires a message; the model reads it.
func DenyResult(req *CanUseTool, message string) PermissionResult {
	if message == "" {
		message = "Denied by agentjq."
	}
	return PermissionResult{Behavior: Deny, Message: message, ToolUseID: req.ToolUseID}
}

// Result turns a verdict into the can_use_tool answer: an allow always
// carries updatedInput, anything else is a deny with a message.
func (v Verdict) Result(req *CanUseTool) PermissionResult {
	if v.Behavior == Allow {
		r := AllowResult(req, v.UpdatedInput)
		r.UpdatedPermissions = v.UpdatedPermissions
		return r
	}
	r := DenyResult(req, v.Message)
	r.Interrupt = v.Interrupt
	return r
}

// HookCallback is the request body of a hook_callback control request.
type HookCallback struct {
	Subtype    string          `json:"subtype"`
	CallbackID string          `json:"callback_id"`
	Input      json.RawMessage `json:"input"`
	ToolUseID  string          `json:"tool_use_id,omitempty"`
}

// MCPMessage is the request body of an mcp_message control request.
type MCPMessage struct {
	Subtype    string          `json:"subtype"`
	ServerName string          `json:"server_name"`
	Message    json.RawMessage `json:"message"`
}

// ControlRequest builds a control_request line (without the newline).
func ControlRequest(requestID string, body any) []byte {
	return Marshal(struct {
		Type      string `json:"type"`
		RequestID string `json:"request_id"`
		Request   any    `json:"request"`
	}{TypeControlRequest, requestID, body})
}

// SuccessResponse builds a control_response carrying payload. A nil payload
// is sent as an empty object.
func SuccessResponse(requestID string, payload any) []byte {
	return SuccessResponseRaw(Marshal(requestID), payload)
}

// SuccessResponseRaw is SuccessResponse echoing the request's id as the
// JSON value it came as (a string, or a number from a client that sends
// one), so that the asker matches its answer whatever the id's type.
func SuccessResponseRaw(requestID json.RawMessage, payload any) []byte {
	if payload == nil {
		payload = struct{}{}
	}
	return Marshal(struct {
		Type     string `json:"type"`
		Response any    `json:"response"`
	}{TypeControlResp, struct {
		Subtype   string          `json:"subtype"`
		RequestID json.RawMessage `json:"request_id"`
		Response  any             `json:"response"`
	}{"success", requestID, payload}})
}

// ErrorResponseRaw builds an error control_response, echoing the
// request's id as the JSON value it came as.
func ErrorResponseRaw(requestID json.RawMessage, message string) []byte {
	return Marshal(struct {
		Type     string `json:"type"`
		Response any    `json:"response"`
	}{TypeControlResp, struct {
		Subtype   string          `json:"subtype"`
		RequestID json.RawMessage `json:"request_id"`
		Error     string          `json:"error"`
	}{"error", requestID, message}})
}

// UnsupportedMessage is the error text for a subtype no handler knows, in
// the CLI's own words.
func UnsupportedMessage(subtype string) string {
	return "Unsupported control request subtype: " + subtype
}

// UserTurn wraps plain text in the user envelope the CLI expects.
func UserTurn(text string) []byte {
	return UserTurnWithSession(text, "")
}

// UserTurnWithSession wraps text in the user envelope, carrying session_id
// (the legacy context CLI reads it).
func UserTurnWithSession(text, sessionID string) []byte {
	return Marshal(struct {
		Type            string `json:"type"`
		Message         any    `json:"message"`
		ParentToolUseID *byte  `json:"parent_tool_use_id"`
		SessionID       string `json:"session_id"`
	}{TypeUser, struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}{"user", text}, nil, sessionID})
}

// Marshal encodes agentjq's own values (an event, a control message) as
// one compact line: no HTML escaping, no trailing newline.
func Marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only agentjq's own well-formed values reach here.
		panic("protocol: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
