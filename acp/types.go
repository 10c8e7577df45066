package acp

import "encoding/json"

// The wire types of the subset of ACP v1 that agentjq speaks, written from
// the published schema (@agentclientprotocol/sdk 2.4.0, schema/v1/
// schema.json). The tests validate every message both ways against that
// schema, so a field spelled wrong here fails there.

// ProtocolVersion is the ACP major version agentjq implements.
const ProtocolVersion = 1

type implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

type initializeRequest struct {
	ProtocolVersion    int             `json:"protocolVersion"`
	ClientCapabilities json.RawMessage `json:"clientCapabilities,omitempty"`
	ClientInfo         json.RawMessage `json:"clientInfo,omitempty"`
	Meta               json.RawMessage `json:"_meta,omitempty"`
}

type promptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

type mcpCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

// capability is an advertised optional method: {} when it is offered.
type capability struct{}

type sessionCapabilities struct {
	List   *capability `json:"list,omitempty"`
	Resume *capability `json:"resume,omitempty"`
	Close  *capability `json:"close,omitempty"`
	// Fork is session/fork, unstable in ACP v1 (schema.unstable.json).
	Fork *capability `json:"fork,omitempty"`
}

type agentCapabilities struct {
	LoadSession         bool                `json:"loadSession"`
	PromptCapabilities  promptCapabilities  `json:"promptCapabilities"`
	MCPCapabilities     mcpCapabilities     `json:"mcpCapabilities"`
	SessionCapabilities sessionCapabilities `json:"sessionCapabilities"`
}

type initializeResponse struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities agentCapabilities `json:"agentCapabilities"`
	AuthMethods       []struct{}        `json:"authMethods"`
	AgentInfo         implementation    `json:"agentInfo"`
}

// nameValue is an environment variable or an HTTP header.
type nameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// MCPServer is one entry of session/new's mcpServers: stdio (no type),
// http or sse.
type MCPServer struct {
	Type    string          `json:"type,omitempty"`
	Name    string          `json:"name"`
	Command string          `json:"command,omitempty"`
	Args    []string        `json:"args,omitempty"`
	Env     []nameValue     `json:"env,omitempty"`
	URL     string          `json:"url,omitempty"`
	Headers []nameValue     `json:"headers,omitempty"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

type newSessionRequest struct {
	Cwd                   string          `json:"cwd"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	MCPServers            []MCPServer     `json:"mcpServers"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// loadSessionRequest is session/new's request naming the session to load.
type loadSessionRequest struct {
	SessionID string `json:"sessionId"`
	newSessionRequest
}

type sessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type sessionModeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []sessionMode `json:"availableModes"`
}

type newSessionResponse struct {
	SessionID string           `json:"sessionId"`
	Modes     sessionModeState `json:"modes"`
}

// loadSessionResponse is also session/resume's response.
type loadSessionResponse struct {
	Modes sessionModeState `json:"modes"`
}

type forkSessionResponse struct {
	SessionID string           `json:"sessionId"`
	Modes     sessionModeState `json:"modes"`
}

type listSessionsRequest struct {
	Cwd    *string         `json:"cwd,omitempty"`
	Cursor *string         `json:"cursor,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

type sessionInfo struct {
	SessionID string  `json:"sessionId"`
	Cwd       string  `json:"cwd"`
	Title     *string `json:"title,omitempty"`
	UpdatedAt string  `json:"updatedAt,omitempty"`
}

type listSessionsResponse struct {
	Sessions []sessionInfo `json:"sessions"`
}

type promptRequest struct {
	SessionID string            `json:"sessionId"`
	Prompt    []json.RawMessage `json:"prompt"`
	Meta      json.RawMessage   `json:"_meta,omitempty"`
}

type promptResponse struct {
	StopReason string `json:"stopReason"`
}

// Stop reasons.
const (
	StopEndTurn   = "end_turn"
	StopMaxTokens = "max_tokens"
	StopMaxTurns  = "max_turn_requests"
	StopRefusal   = "refusal"
	StopCancelled = "cancelled"
)

type sessionIDParams struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

type setModeRequest struct {
	SessionID string          `json:"sessionId"`
	ModeID    string          `json:"modeId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// ContentBlock is the subset of content blocks agentjq sends: text, and
// (a user's turn replayed by session/load) image.
type ContentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"-"`
	MimeType string `json:"-"`
}

// MarshalJSON writes an image block as ACP's ImageContent.
func (c ContentBlock) MarshalJSON() ([]byte, error) {
	if c.Type == "image" {
		return json.Marshal(struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
		}{c.Type, c.Data, c.MimeType})
	}
	type plain ContentBlock
	return json.Marshal(plain(c))
}

// Location is a file a tool call touches.
type Location struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

// ToolContent is one item of a tool call's content: {type:content,
// content:{text}} or a diff.
type ToolContent struct {
	Type    string        `json:"type"`
	Content *ContentBlock `json:"content,omitempty"`
	Path    string        `json:"path,omitempty"`
	OldText *string       `json:"oldText,omitempty"`
	NewText *string       `json:"newText,omitempty"`
}

// PlanEntry is one TodoWrite item.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

// Command is one slash command of available_commands_update.
type Command struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *CommandInput `json:"input,omitempty"`
}

// CommandInput is a command's unstructured input: the hint shown until
// it is typed.
type CommandInput struct {
	Hint string `json:"hint"`
}

// Cost is usage_update's cumulative cost.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// Update is the update member of one session/update notification; which
// fields are set depends on SessionUpdate.
type Update struct {
	SessionUpdate string `json:"sessionUpdate,omitempty"`

	// agent_message_chunk, agent_thought_chunk, user_message_chunk
	Content *ContentBlock `json:"content,omitempty"`

	// tool_call, tool_call_update
	ToolCallID  string          `json:"toolCallId,omitempty"`
	Title       string          `json:"title,omitempty"`
	Kind        string          `json:"kind,omitempty"`
	Status      string          `json:"status,omitempty"`
	ToolContent []ToolContent   `json:"-"`
	Locations   []Location      `json:"locations,omitempty"`
	RawInput    json.RawMessage `json:"rawInput,omitempty"`
	RawOutput   json.RawMessage `json:"rawOutput,omitempty"`

	// plan
	Entries []PlanEntry `json:"entries,omitempty"`
	// available_commands_update
	AvailableCommands []Command `json:"availableCommands,omitempty"`
	// current_mode_update
	CurrentModeID string `json:"currentModeId,omitempty"`
	// usage_update: Used and Size are required (set together).
	Used *int64 `json:"used,omitempty"`
	Size *int64 `json:"size,omitempty"`
	Cost *Cost  `json:"cost,omitempty"`
}

// MarshalJSON puts ToolContent under "content" (a chunk's content is one
// block, a tool call's a list: the same key in ACP).
func (u Update) MarshalJSON() ([]byte, error) {
	type plain Update
	switch u.SessionUpdate {
	case "plan":
		// entries is required even when the plan is empty.
		entries := u.Entries
		if entries == nil {
			entries = []PlanEntry{}
		}
		return json.Marshal(struct {
			SessionUpdate string      `json:"sessionUpdate"`
			Entries       []PlanEntry `json:"entries"`
		}{u.SessionUpdate, entries})
	}
	if u.ToolContent == nil {
		return json.Marshal(plain(u))
	}
	return json.Marshal(struct {
		plain
		ToolContent []ToolContent `json:"content"`
	}{plain(u), u.ToolContent})
}

type sessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    Update `json:"update"`
}

type permissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

type requestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  Update             `json:"toolCall"`
	Options   []permissionOption `json:"options"`
}

type requestPermissionResponse struct {
	Outcome struct {
		Outcome  string `json:"outcome"`
		OptionID string `json:"optionId"`
	} `json:"outcome"`
}

// Permission option kinds, also agentjq's option ids.
const (
	AllowOnce    = "allow_once"
	AllowAlways  = "allow_always"
	RejectOnce   = "reject_once"
	RejectAlways = "reject_always"
)
