package daemon

import (
	"encoding/json"
	"strings"

	"github.com/agentjq/agentjq/internal/protocol"
)

// agentLine is the part of an agent line the events are derived from.
type agentLine struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Message         json.RawMessage `json:"message"`
	Event           json.RawMessage `json:"event"`
	// system init
	Tools          []string `json:"tools"`
	SlashCommands  []string `json:"slash_commands"`
	PermissionMode string   `json:"permissionMode"`
	Model          string   `json:"model"`
	// task_* (subagents.go)
	TaskID         string `json:"task_id"`
	ToolUseID      string `json:"tool_use_id"`
	Status         string `json:"status"`
	IsBackgrounded bool   `json:"is_backgrounded"`
	Patch          struct {
		Status string `json:"status"`
	} `json:"patch"`
	// result
	IsError      bool            `json:"is_error"`
	Result       string          `json:"result"`
	NumTurns     int             `json:"num_turns"`
	DurationMS   int64           `json:"duration_ms"`
	Usage        json.RawMessage `json:"usage"`
	TotalCostUSD float64         `json:"total_cost_usd"`
	// control_response
	Response *struct {
		Subtype   string          `json:"subtype"`
		RequestID string          `json:"request_id"`
		Error     string          `json:"error"`
		Response  json.RawMessage `json:"response"`
	} `json:"response"`
}

// fromAgent derives the events of one agent line, agent.line first. It
// runs on the bridge's tap, in the order of the agent's lines.
//
// agent.line is logged whole although the out entry before it holds the
// same line (about half of a recording): resume sends the logged bytes,
// and an event rebuilt from the out entry would not be them. The entry
// is written outside the append lock (another event may come between it
// and its seq), its time is the Writer's clock (ms since start, not ts),
// and it is encoded without HTML escapes where the event is not.
func (s *Session) fromAgent(line []byte) {
	s.emitRaw("agent.line", append(append([]byte(`{"line":`), line...), '}'))
	var l agentLine
	if json.Unmarshal(line, &l) != nil {
		return
	}
	parent := ""
	if l.ParentToolUseID != nil {
		parent = *l.ParentToolUseID
	}
	switch l.Type {
	case "system":
		s.fromSystem(&l, line)
	case "stream_event":
		var ev struct {
			Type  string `json:"type"`
			Delta struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"delta"`
		}
		if json.Unmarshal(l.Event, &ev) == nil && ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" {
			s.emit("message.delta", MessageDeltaPayload{Text: ev.Delta.Text, ParentToolUseID: parent})
		}
	case "assistant":
		var m struct {
			Content []protocol.Block `json:"content"`
		}
		_ = json.Unmarshal(l.Message, &m)
		var text strings.Builder
		for _, b := range m.Content {
			if b.Type == "text" {
				text.WriteString(b.Text)
			}
		}
		if parent != "" {
			s.emit("subagent.update", s.subagents.message(parent, line))
		}
		s.emit("message.done", MessageDonePayload{Message: l.Message, Text: text.String(), ParentToolUseID: parent})
		for _, b := range m.Content {
			if b.Type != "tool_use" {
				continue
			}
			s.emit("tool.call", ToolCallPayload{ToolUseID: b.ID, Name: b.Name, Input: orNull(b.Input), ParentToolUseID: parent})
			if b.Name == "Task" || b.Name == "Agent" {
				if kind, p := s.subagents.called(b.ID, b.Input); kind != "" {
					s.emit(kind, p)
				}
			}
		}
	case "user":
		var m struct {
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(l.Message, &m)
		if parent != "" {
			s.emit("subagent.update", s.subagents.message(parent, line))
		}
		var blocks []protocol.Block
		if json.Unmarshal(m.Content, &blocks) != nil {
			return
		}
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			s.emit("tool.result", ToolResultPayload{ToolUseID: b.ToolUseID, Content: orNull(b.Content), IsError: b.IsError, ParentToolUseID: parent})
			if kind, p := s.subagents.result(b.ToolUseID, b.IsError, b.Content); kind != "" {
				s.emit(kind, p)
			}
		}
	case "result":
		if len(l.Usage) > 0 {
			s.emit("usage", UsagePayload{Usage: l.Usage, TotalCostUSD: l.TotalCostUSD})
		}
		if l.IsError {
			s.emit("error", ErrorPayload{Code: "turn_" + l.Subtype, Message: l.Result})
		}
		s.emit("turn.done", TurnDonePayload{Subtype: l.Subtype, IsError: l.IsError, Result: l.Result, NumTurns: l.NumTurns, DurationMS: l.DurationMS})
	case "control_response":
		if l.Response == nil {
			return
		}
		s.infoMu.Lock()
		what := s.ownReqs[l.Response.RequestID]
		delete(s.ownReqs, l.Response.RequestID)
		if ch := s.waiting[l.Response.RequestID]; ch != nil {
			delete(s.waiting, l.Response.RequestID)
			ch <- controlAnswer{ok: l.Response.Subtype == "success", err: l.Response.Error, body: append(json.RawMessage(nil), l.Response.Response...)}
		}
		s.infoMu.Unlock()
		if mode, ok := strings.CutPrefix(what, "set_permission_mode:"); ok && l.Response.Subtype == "success" {
			s.setModeSeen(mode)
		}
	}
}

func (s *Session) fromSystem(l *agentLine, line []byte) {
	switch l.Subtype {
	case "init":
		s.infoMu.Lock()
		s.agentSID = l.SessionID
		s.tools = l.Tools
		s.commands = s.commands[:0]
		for _, c := range l.SlashCommands {
			s.commands = append(s.commands, CommandInfo{Name: c})
		}
		if l.Model != "" {
			s.Model = l.Model
		}
		s.infoMu.Unlock()
		if l.PermissionMode != "" {
			s.setModeSeen(l.PermissionMode)
		}
	case "task_started", "task_progress", "task_updated", "task_notification":
		kind, p := s.subagents.task(l, line)
		s.emit(kind, p)
	case "status":
		if l.PermissionMode != "" {
			s.setModeSeen(l.PermissionMode)
		}
	}
}

// setModeSeen emits mode.changed when the mode is new.
func (s *Session) setModeSeen(mode string) {
	s.infoMu.Lock()
	changed := s.mode != mode || !s.modeKnown()
	s.mode = mode
	s.infoMu.Unlock()
	if changed {
		s.emit("mode.changed", ModeChangedPayload{Mode: mode})
	}
}

func (s *Session) modeKnown() bool { return s.modeSeen.Swap(true) }

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}
