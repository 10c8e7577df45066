package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentjq/agentjq/internal/protocol"
)

// Mapper turns the lines of a claude session (as bridge.Run writes them
// on its stdout, or as a recording holds them) into ACP session updates.
// It is not safe for concurrent use: one goroutine feeds it in order.
type Mapper struct {
	tools map[string]toolUse // tool_use_id → the call, until its result
	// streamed: message ids whose text came as partial deltas, so their
	// whole assistant blocks are not sent a second time.
	streamed map[string]bool
	msgID    string
	// skipped tool ids whose calls are shown another way (TodoWrite as a
	// plan): their results are not tool call updates either.
	skipped map[string]bool
	running map[string]bool // tool ids said to be in progress
	// blocked: what the sandbox stopped each call from doing (agentjq's
	// sandbox event, which comes just before the call's result), shown
	// with the result.
	blocked map[string]string
	// commands: the slash commands' descriptions and argument hints,
	// from the agent's answer to the initialize request; sent is the
	// names last sent in available_commands_update.
	commands map[string]Command
	sent     string
	// ctx is the context the last model call used (its input, cache and
	// output tokens), from its message_start and message_delta events.
	ctxIn, ctxOut int64
	ctxSeen       bool
}

// NewMapper is a Mapper with nothing seen.
func NewMapper() *Mapper {
	return &Mapper{tools: map[string]toolUse{}, streamed: map[string]bool{}, skipped: map[string]bool{}, running: map[string]bool{}, blocked: map[string]string{}, commands: map[string]Command{}}
}

type toolUse struct {
	Name  string
	Input json.RawMessage
}

// Result is the end of a turn as the agent reported it.
type Result struct {
	Subtype    string   `json:"subtype"`
	IsError    bool     `json:"is_error"`
	StopReason string   `json:"stop_reason"`
	Text       string   `json:"result"`
	Errors     []string `json:"errors"`
}

// Out is what one line meant.
type Out struct {
	Updates []Update
	// Result is set for a result line.
	Result *Result
	// ControlID is the request_id of a control_response (ControlErr its
	// error, if it failed).
	ControlID  string
	ControlErr string
	// Init is set for the agent's system init line.
	Init *Init
	// Exit: agentjq's exit event, the session is over.
	Exit bool
	// Decision is agentjq's decision event for a permission request.
	Decision *protocol.Decision
}

// Init is what the init line says about the session.
type Init struct {
	SessionID      string   `json:"session_id"`
	PermissionMode string   `json:"permissionMode"`
	SlashCommands  []string `json:"slash_commands"`
}

type lineHead struct {
	Type    string          `json:"type"`
	Subtype string          `json:"subtype"`
	Event   json.RawMessage `json:"event"`
	Message json.RawMessage `json:"message"`
}

// Line maps one line that travelled in direction dir.
func (m *Mapper) Line(dir protocol.Direction, line []byte) Out {
	var h lineHead
	if json.Unmarshal(line, &h) != nil {
		return Out{}
	}
	if dir == protocol.DirIn {
		if h.Type == protocol.TypeUser {
			return Out{Updates: m.userTurn(h.Message)}
		}
		return Out{}
	}
	switch h.Type {
	case "stream_event":
		return Out{Updates: m.streamEvent(h.Event)}
	case "assistant":
		return Out{Updates: m.assistant(h.Message)}
	case protocol.TypeUser:
		return Out{Updates: m.toolResults(h.Message)}
	case "result":
		var r Result
		json.Unmarshal(line, &r)
		out := Out{Result: &r}
		if u, ok := m.usage(line); ok {
			out.Updates = []Update{u}
		}
		return out
	case "system":
		if h.Subtype != "init" {
			return Out{}
		}
		var in Init
		json.Unmarshal(line, &in)
		out := Out{Init: &in}
		if len(in.SlashCommands) > 0 {
			cmds := make([]Command, 0, len(in.SlashCommands))
			for _, c := range in.SlashCommands {
				cmd, ok := m.commands[c]
				if !ok {
					cmd = Command{Name: c, Description: "/" + c}
				}
				cmds = append(cmds, cmd)
			}
			out.Updates = m.commandsUpdate(cmds)
		}
		return out
	case protocol.TypeControlResp:
		var r struct {
			Response struct {
				Subtype   string `json:"subtype"`
				RequestID string `json:"request_id"`
				Error     string `json:"error"`
				Response  struct {
					Commands []struct {
						Name         string          `json:"name"`
						Description  string          `json:"description"`
						ArgumentHint json.RawMessage `json:"argumentHint"`
					} `json:"commands"`
				} `json:"response"`
			} `json:"response"`
		}
		json.Unmarshal(line, &r)
		out := Out{ControlID: r.Response.RequestID}
		if cs := r.Response.Response.Commands; len(cs) > 0 {
			// The answer to initialize: every command with what it does.
			cmds := make([]Command, 0, len(cs))
			for _, c := range cs {
				cmd := Command{Name: c.Name, Description: c.Description}
				if cmd.Description == "" {
					cmd.Description = "/" + c.Name
				}
				if h := argumentHint(c.ArgumentHint); h != "" {
					cmd.Input = &CommandInput{Hint: h}
				}
				m.commands[c.Name] = cmd
				cmds = append(cmds, cmd)
			}
			out.Updates = m.commandsUpdate(cmds)
		}
		if r.Response.Subtype == "error" {
			out.ControlErr = r.Response.Error
			if out.ControlErr == "" {
				out.ControlErr = "the agent refused"
			}
		}
		return out
	case "agentjq":
		switch h.Subtype {
		case "exit":
			return Out{Exit: true}
		case protocol.EventSandbox:
			var sb protocol.Sandboxed
			json.Unmarshal(line, &sb)
			if sb.ToolUseID != "" && len(m.blocked) < 4096 {
				m.blocked[sb.ToolUseID] = "Blocked by the sandbox: " + protocol.BlockedText(sb.Blocked)
			}
			return Out{}
		case "decision":
			var d protocol.Decision
			json.Unmarshal(line, &d)
			out := Out{Decision: &d}
			// The hook and the permission request may both decide one
			// call: in_progress is said once.
			if d.Behavior == protocol.Allow && d.ToolUseID != "" && !m.skipped[d.ToolUseID] && !m.running[d.ToolUseID] {
				m.running[d.ToolUseID] = true
				out.Updates = []Update{{SessionUpdate: "tool_call_update", ToolCallID: d.ToolUseID, Status: "in_progress"}}
			}
			return out
		}
	}
	return Out{}
}

// argumentHint is a command's argument hint: a string, or a list of
// them (one per argument).
func argumentHint(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	json.Unmarshal(raw, &list)
	return strings.Join(list, " ")
}

// commandsUpdate is available_commands_update for cmds, unless the same
// names went last.
func (m *Mapper) commandsUpdate(cmds []Command) []Update {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.Name
	}
	key := strings.Join(names, "\x00")
	if key == m.sent {
		return nil
	}
	m.sent = key
	return []Update{{SessionUpdate: "available_commands_update", AvailableCommands: cmds}}
}

type tokenUsage struct {
	Input         int64 `json:"input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	Output        int64 `json:"output_tokens"`
}

// usage is usage_update at the end of a turn: the tokens in context (the
// last model call's, or the turn's usage when no call was streamed), the
// context window (the smallest of the models used; 200000 when the
// result names none) and the session's cost so far. Every member is a
// number: a turn that reports no usage sends none.
func (m *Mapper) usage(line []byte) (Update, bool) {
	var r struct {
		Usage      *tokenUsage `json:"usage"`
		Cost       *float64    `json:"total_cost_usd"`
		ModelUsage map[string]struct {
			ContextWindow int64 `json:"contextWindow"`
		} `json:"modelUsage"`
	}
	if json.Unmarshal(line, &r) != nil {
		return Update{}, false
	}
	used := m.ctxIn + m.ctxOut
	if !m.ctxSeen {
		if r.Usage == nil {
			return Update{}, false
		}
		used = r.Usage.Input + r.Usage.CacheCreation + r.Usage.CacheRead + r.Usage.Output
	}
	size := int64(0)
	for _, mu := range r.ModelUsage {
		if mu.ContextWindow > 0 && (size == 0 || mu.ContextWindow < size) {
			size = mu.ContextWindow
		}
	}
	if size == 0 {
		size = 200000
	}
	u := Update{SessionUpdate: "usage_update", Used: &used, Size: &size}
	if r.Cost != nil {
		u.Cost = &Cost{Amount: *r.Cost, Currency: "USD"}
	}
	return u, true
}

func (m *Mapper) streamEvent(raw json.RawMessage) []Update {
	var e protocol.StreamEvent
	if json.Unmarshal(raw, &e) != nil {
		return nil
	}
	switch e.Type {
	case "message_start", "message_delta":
		var u struct {
			Message struct {
				Usage *tokenUsage `json:"usage"`
			} `json:"message"`
			Usage *tokenUsage `json:"usage"`
		}
		json.Unmarshal(raw, &u)
		if t := u.Message.Usage; t != nil {
			m.ctxIn, m.ctxOut, m.ctxSeen = t.Input+t.CacheCreation+t.CacheRead, t.Output, true
		}
		if t := u.Usage; t != nil && m.ctxSeen {
			// message_delta's usage: the call's output so far.
			m.ctxOut = t.Output
		}
	}
	switch e.Type {
	case "message_start":
		m.msgID = e.Message.ID
	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			if e.Delta.Text == "" {
				return nil
			}
			m.streamed[m.msgID] = true
			return []Update{{SessionUpdate: "agent_message_chunk", Content: &ContentBlock{Type: "text", Text: e.Delta.Text}}}
		case "thinking_delta":
			if e.Delta.Thinking == "" {
				return nil
			}
			m.streamed[m.msgID] = true
			return []Update{{SessionUpdate: "agent_thought_chunk", Content: &ContentBlock{Type: "text", Text: e.Delta.Thinking}}}
		}
	}
	return nil
}

// messageBlocks decodes a message whose content is an array of blocks;
// ok is false for anything else.
func messageBlocks(raw json.RawMessage) (msg protocol.Message, blocks []protocol.Block, ok bool) {
	if json.Unmarshal(raw, &msg) != nil || json.Unmarshal(msg.Content, &blocks) != nil {
		return msg, nil, false
	}
	return msg, blocks, true
}

func (m *Mapper) assistant(raw json.RawMessage) []Update {
	msg, blocks, ok := messageBlocks(raw)
	if !ok {
		return nil
	}
	var ups []Update
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if !m.streamed[msg.ID] && b.Text != "" {
				ups = append(ups, Update{SessionUpdate: "agent_message_chunk", Content: &ContentBlock{Type: "text", Text: b.Text}})
			}
		case "thinking":
			if !m.streamed[msg.ID] && b.Thinking != "" {
				ups = append(ups, Update{SessionUpdate: "agent_thought_chunk", Content: &ContentBlock{Type: "text", Text: b.Thinking}})
			}
		case "tool_use":
			if b.Name == "TodoWrite" {
				m.skipped[b.ID] = true
				if p, ok := plan(b.Input); ok {
					ups = append(ups, p)
				}
				continue
			}
			m.tools[b.ID] = toolUse{Name: b.Name, Input: b.Input}
			u := ToolCall(b.ID, b.Name, b.Input)
			u.SessionUpdate = "tool_call"
			u.Status = "pending"
			ups = append(ups, u)
		}
	}
	return ups
}

// userTurn is a turn sent to the agent, shown again on session/load.
func (m *Mapper) userTurn(raw json.RawMessage) []Update {
	var msg protocol.Message
	if json.Unmarshal(raw, &msg) != nil {
		return nil
	}
	var text string
	if json.Unmarshal(msg.Content, &text) == nil {
		return []Update{{SessionUpdate: "user_message_chunk", Content: &ContentBlock{Type: "text", Text: text}}}
	}
	var blocks []struct {
		Type   string `json:"type"`
		Text   string `json:"text"`
		Source struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		} `json:"source"`
	}
	json.Unmarshal(msg.Content, &blocks)
	var ups []Update
	for _, b := range blocks {
		switch {
		case b.Type == "text" && b.Text != "":
			ups = append(ups, Update{SessionUpdate: "user_message_chunk", Content: &ContentBlock{Type: "text", Text: b.Text}})
		case b.Type == "image" && b.Source.Type == "base64" && b.Source.Data != "":
			ups = append(ups, Update{SessionUpdate: "user_message_chunk", Content: &ContentBlock{Type: "image", Data: b.Source.Data, MimeType: b.Source.MediaType}})
		}
	}
	return ups
}

func (m *Mapper) toolResults(raw json.RawMessage) []Update {
	_, blocks, ok := messageBlocks(raw)
	if !ok {
		return nil
	}
	var ups []Update
	for _, b := range blocks {
		if b.Type != "tool_result" || m.skipped[b.ToolUseID] {
			continue
		}
		use, known := m.tools[b.ToolUseID]
		delete(m.tools, b.ToolUseID)
		delete(m.running, b.ToolUseID)
		u := Update{SessionUpdate: "tool_call_update", ToolCallID: b.ToolUseID, Status: "completed"}
		if b.IsError {
			u.Status = "failed"
		}
		if known && !b.IsError {
			if d, ok := diff(use.Name, use.Input); ok {
				u.ToolContent = append(u.ToolContent, d)
			}
		}
		if t := protocol.ContentText(b.Content, false); t != "" {
			u.ToolContent = append(u.ToolContent, ToolContent{Type: "content", Content: &ContentBlock{Type: "text", Text: t}})
		}
		if note, ok := m.blocked[b.ToolUseID]; ok {
			delete(m.blocked, b.ToolUseID)
			u.ToolContent = append(u.ToolContent, ToolContent{Type: "content", Content: &ContentBlock{Type: "text", Text: note}})
		}
		ups = append(ups, u)
	}
	return ups
}

type toolInput struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	Command      string `json:"command"`
	Description  string `json:"description"`
	Pattern      string `json:"pattern"`
	URL          string `json:"url"`
	Query        string `json:"query"`
	Content      string `json:"content"`
	OldString    string `json:"old_string"`
	NewString    string `json:"new_string"`
	Offset       *int   `json:"offset"`
}

// ToolCall describes a claude tool call as ACP shows it: kind, title,
// the files it touches and, for Write and Edit, the proposed diff. The
// caller sets sessionUpdate and status.
func ToolCall(id, name string, input json.RawMessage) Update {
	var in toolInput
	json.Unmarshal(input, &in)
	u := Update{ToolCallID: id, Kind: toolKind(name), Title: name, RawInput: input}
	file := in.FilePath
	if file == "" {
		file = in.NotebookPath
	}
	switch name {
	case "Bash":
		u.Title = "`" + clip(in.Command, 200) + "`"
		if in.Description != "" {
			u.Title = in.Description + ": " + u.Title
		}
	case "Read", "Write", "Edit", "MultiEdit", "NotebookEdit":
		if file != "" {
			u.Title = name + " " + file
			loc := Location{Path: file}
			if name == "Read" && in.Offset != nil {
				loc.Line = in.Offset
			}
			u.Locations = []Location{loc}
		}
	case "Glob", "Grep":
		u.Title = fmt.Sprintf("%s %s", name, clip(in.Pattern, 200))
		if in.Path != "" {
			u.Locations = []Location{{Path: in.Path}}
		}
	case "WebFetch":
		u.Title = "Fetch " + clip(in.URL, 200)
	case "WebSearch":
		u.Title = "Search the web: " + clip(in.Query, 200)
	}
	if d, ok := diff(name, input); ok {
		u.ToolContent = []ToolContent{d}
	}
	return u
}

func toolKind(name string) string {
	switch name {
	case "Read", "NotebookRead":
		return "read"
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		return "edit"
	case "Bash", "BashOutput", "KillShell", "KillBash":
		return "execute"
	case "Glob", "Grep", "LS":
		return "search"
	case "WebFetch", "WebSearch":
		return "fetch"
	case "ExitPlanMode":
		return "switch_mode"
	case "Task", "Agent":
		return "think"
	}
	return "other"
}

// diff is the change a Write or Edit proposes. A Write's old text is not
// known from the call (the editor has the file), so it is left out.
func diff(name string, input json.RawMessage) (ToolContent, bool) {
	var in toolInput
	if json.Unmarshal(input, &in) != nil || in.FilePath == "" || !filepath.IsAbs(in.FilePath) {
		return ToolContent{}, false
	}
	switch name {
	case "Write":
		t := in.Content
		return ToolContent{Type: "diff", Path: in.FilePath, NewText: &t}, true
	case "Edit":
		o, n := in.OldString, in.NewString
		return ToolContent{Type: "diff", Path: in.FilePath, OldText: &o, NewText: &n}, true
	}
	return ToolContent{}, false
}

// plan turns a TodoWrite call into a plan update.
func plan(input json.RawMessage) (Update, bool) {
	var in struct {
		Todos []struct {
			Content  string `json:"content"`
			Status   string `json:"status"`
			Priority string `json:"priority"`
		} `json:"todos"`
	}
	if json.Unmarshal(input, &in) != nil {
		return Update{}, false
	}
	entries := make([]PlanEntry, 0, len(in.Todos))
	for _, t := range in.Todos {
		e := PlanEntry{Content: t.Content, Priority: "medium", Status: "pending"}
		switch t.Priority {
		case "high", "low":
			e.Priority = t.Priority
		}
		switch t.Status {
		case "in_progress", "completed":
			e.Status = t.Status
		}
		entries = append(entries, e)
	}
	// An empty plan is a valid update ("no plan"), so entries is never nil.
	return Update{SessionUpdate: "plan", Entries: entries}, true
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// StopReason maps the agent's result to ACP's stopReason; err is set for
// a turn that failed (an API error, a crash), which the prompt answers
// with an error response.
func StopReason(r *Result, cancelled bool) (string, error) {
	if cancelled {
		return StopCancelled, nil
	}
	switch r.Subtype {
	case "error_max_turns":
		return StopMaxTurns, nil
	case "success", "":
	default:
		msg := strings.Join(r.Errors, "; ")
		if msg == "" {
			msg = r.Text
		}
		if msg == "" {
			msg = r.Subtype
		}
		return "", fmt.Errorf("the agent's turn failed (%s): %s", r.Subtype, msg)
	}
	switch r.StopReason {
	case "max_tokens":
		return StopMaxTokens, nil
	case "refusal":
		return StopRefusal, nil
	}
	if r.IsError {
		return "", fmt.Errorf("the agent's turn failed: %s", r.Text)
	}
	return StopEndTurn, nil
}
