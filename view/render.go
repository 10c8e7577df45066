package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

// Renderer turns events into view lines. It keeps what later lines need:
// tool names by id (for results), nesting depth (for subagents), pending
// permission requests (for their decisions) and streamed text (so that the
// final assistant message does not print it twice).
type Renderer struct {
	w     io.Writer
	opts  Options
	width int
	st    styles
	buf   bytes.Buffer
	err   error

	lineNo int
	// broken counts the lines that could not be read (not JSON, a bad
	// recording entry or header): Render then fails at the end.
	broken int
	first  string // the first of them, for Render's error

	cwd  string
	init string // the last init header shown

	calls    map[string]call      // tool_use_id -> call
	pending  map[string]*request  // request_id -> permission or hook request
	clientRq map[string]string    // request_id -> subtype, of the client's control requests
	streams  map[string][]*stream // message key -> text blocks streamed
	live     map[string]*stream   // message key + index -> block being streamed
	lastMsg  map[string]string    // parent -> id of the last message_start
	open     *openLine            // the line left without its newline
	turnOpen bool                 // events since the last result
	sawAgent bool                 // an out entry: the agent's own lines are in the recording
	started  string               // a daemon turn.started's text shown, that the in entry repeats

	// Claude Code's own transcripts (transcript.go): the session shown,
	// what a first reading of the file found, the depth added to every
	// line (a subagent's file under its Task call), and the time of the
	// line being shown, written before its first view line.
	ts    *tsession
	next  *nextFile
	base  int
	stamp string
}

type call struct {
	name  string
	key   string
	depth int
}

type request struct {
	id    string
	tool  string
	key   string
	depth int
	hook  bool
}

type stream struct {
	key     string
	depth   int
	text    strings.Builder
	started bool // a non-newline character was written
	nl      int  // newlines held back until more text comes
	done    bool // the block's text was matched by the final message
}

// openLine is a line written without its newline, that a later event may
// finish: streamed text, or a permission request waiting for its decision.
type openLine struct {
	stream    *stream
	requestID string
}

// New returns a Renderer writing to w.
func New(w io.Writer, opts Options) *Renderer {
	width := opts.Width
	if width <= 0 {
		width = DefaultWidth
	}
	return &Renderer{
		w: w, opts: opts, width: width, st: newStyles(opts.Color),
		calls:    map[string]call{},
		pending:  map[string]*request{},
		clientRq: map[string]string{},
		streams:  map[string][]*stream{},
		live:     map[string]*stream{},
		lastMsg:  map[string]string{},
	}
}

// --- writing -----------------------------------------------------------

func (r *Renderer) prefix(depth int) string {
	depth += r.base
	stamp := ""
	if r.stamp != "" {
		stamp = r.st.dim.Sprint(r.stamp)
		r.stamp = strings.Repeat(" ", len(r.stamp)) // the next lines of the event
	}
	if depth <= 0 {
		return stamp
	}
	return stamp + r.st.dim.Sprint(strings.Repeat("│ ", depth))
}

func (r *Renderer) closeOpen() {
	if r.open != nil {
		r.buf.WriteByte('\n')
		r.open = nil
	}
}

// put writes one line: indentation, a marker, the body.
func (r *Renderer) put(depth int, marker, body string) {
	r.closeOpen()
	r.buf.WriteString(r.prefix(depth))
	r.buf.WriteString(marker)
	if body != "" {
		r.buf.WriteByte(' ')
		r.buf.WriteString(body)
	}
	r.buf.WriteByte('\n')
}

// budget is the room left for a summary after depth, a marker and a
// label, in runes.
func (r *Renderer) budget(depth int, used ...string) int {
	n := r.width - 2*depth - 2
	for _, u := range used {
		n -= utf8.RuneCountInString(u)
	}
	return max(n, 10)
}

// text writes assistant or user text, each line indented by two spaces.
func (r *Renderer) text(depth int, s string, style func(a ...any) string) {
	s = strings.Trim(clean(s), "\n")
	if s == "" {
		return
	}
	r.closeOpen()
	for _, l := range strings.Split(s, "\n") {
		r.buf.WriteString(r.prefix(depth))
		r.buf.WriteString("  ")
		if style != nil {
			l = style(l)
		}
		r.buf.WriteString(strings.TrimRight(l, "\r"))
		r.buf.WriteByte('\n')
	}
}

// brokenLine is badLine for a line that could not be read at all.
func (r *Renderer) brokenLine(why string, line []byte) {
	r.broken++
	if r.first == "" {
		r.first = fmt.Sprintf("line %d: %s", r.lineNo, why)
	}
	r.badLine(why, line)
}

func (r *Renderer) badLine(why string, line []byte) {
	r.put(0, r.st.yellow.Sprint("⚠"), r.st.yellow.Sprintf("line %d: %s: %s", r.lineNo, why,
		fit(oneLine(string(line)), r.budget(0, why, "line 000: : "))))
}

// --- recordings --------------------------------------------------------

func (r *Renderer) header(h recording.Header) {
	parts := []string{"recording"}
	if h.Agent != "" {
		parts = append(parts, h.Agent+" "+h.AgentVersion)
	}
	if h.Cwd != "" {
		parts = append(parts, h.Cwd)
	}
	if !h.Started.IsZero() {
		parts = append(parts, h.Started.UTC().Format("2006-01-02 15:04:05Z"))
	}
	if h.AgentjqVersion != "" {
		parts = append(parts, "agentjq "+h.AgentjqVersion)
	}
	r.put(0, r.st.bold.Sprint("●"), r.st.bold.Sprint(parts[0])+"  "+r.st.dim.Sprint(strings.Join(parts[1:], "  ")))
	if len(h.Argv) > 0 {
		r.put(0, " ", r.st.dim.Sprint("$ "+fit(strings.Join(h.Argv, " "), r.budget(0, "$ "))))
	}
	if h.Cwd != "" {
		r.cwd = h.Cwd
	}
}

func (r *Renderer) entry(e recording.Entry) {
	switch e.Dir {
	case protocol.DirOut, protocol.DirEvent:
		if e.Dir == protocol.DirOut {
			r.sawAgent = true
		}
		r.out(e.Msg)
	case dirDaemon:
		r.daemonEvent(e.Msg)
	case protocol.DirIn:
		r.in(e.Msg)
	case protocol.DirErr:
		r.put(0, r.st.yellow.Sprint("!"), r.st.yellow.Sprint("stderr  ")+fit(oneLine(e.Text), r.budget(0, "stderr  ")))
	case protocol.DirMeta:
		// Facts for tools (agent_version); the header already told the person.
	default:
		r.put(0, r.st.dim.Sprint("·"), r.st.dim.Sprintf("%s entry", e.Dir))
	}
}

// dirDaemon is the direction of serve's events in its recordings
// (daemon.DirDaemon; the view does not import the daemon).
const dirDaemon protocol.Direction = "daemon"

// daemonEvent renders one of serve's session.event entries. A daemon
// recording holds the agent's lines too (in, out, event entries), and
// most events are derived from them: those are shown once, from the
// agent's lines. An event of its own is shown: an approval waiting for a
// client. A recording of events alone (no out entry) is rendered from
// its agent.line events.
func (r *Renderer) daemonEvent(line []byte) {
	var ev struct {
		Kind    string          `json:"kind"`
		Seq     int64           `json:"seq"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := decode(line, &ev); err != nil || ev.Kind == "" {
		r.badLine("not a session.event", line)
		return
	}
	switch ev.Kind {
	case "agent.line":
		var p struct {
			Line json.RawMessage `json:"line"`
		}
		if !r.sawAgent && decode(ev.Payload, &p) == nil && len(p.Line) > 0 {
			r.out(p.Line)
		}
	case "approval.pending":
		var p struct {
			ID   string `json:"id"`
			Tool string `json:"tool"`
		}
		_ = decode(ev.Payload, &p)
		r.put(0, r.st.dim.Sprint("…"), r.st.dim.Sprintf("%s waits for a client (%s)", p.Tool, p.ID))
	case "session.titled":
		var p struct {
			Title string `json:"title"`
		}
		_ = decode(ev.Payload, &p)
		r.put(0, r.st.dim.Sprint("●"), r.st.dim.Sprint("title  "+fit(oneLine(p.Title), r.budget(0, "title  "))))
	case "turn.started", "turn.steered":
		var p struct {
			Text string `json:"text"`
		}
		_ = decode(ev.Payload, &p)
		r.turnOpen = true
		r.started = p.Text
		r.prompt(0, p.Text, false)
	case "approval.resolved", "session.ended":
		if !r.sawAgent {
			// With the agent's lines, agentjq's decision and exit
			// events say it.
			r.daemonEnd(ev.Kind, ev.Payload)
		}
	case "message.delta", "message.done", "tool.call", "tool.result",
		"subagent.spawn", "subagent.update", "subagent.done", "mode.changed", "usage",
		"error", "turn.done":
		// Shown from the agent's lines (or their agent.line events):
		// the messages and tools, the mode, the result and its errors.
	default:
		r.put(0, r.st.dim.Sprint("·"), r.st.dim.Sprintf("daemon %s (seq %d)", ev.Kind, ev.Seq))
	}
}

// daemonEnd renders an approval's answer or the session's end from the
// daemon's event, for a recording of events alone.
func (r *Renderer) daemonEnd(kind string, payload json.RawMessage) {
	var p struct {
		ID       string `json:"id"`
		Who      string `json:"who"`
		Decision string `json:"decision"`
		Outcome  string `json:"outcome"`
		ExitCode int    `json:"exitCode"`
	}
	_ = decode(payload, &p)
	if kind == "approval.resolved" {
		r.put(0, r.st.dim.Sprint("?"), r.st.dim.Sprintf("→ %s (%s)", p.Decision, p.Who))
		return
	}
	r.put(0, r.st.bold.Sprint("■"), fmt.Sprintf("ended %s  exit %d", p.Outcome, p.ExitCode))
}

// in renders what the client wrote to the agent.
func (r *Renderer) in(line []byte) {
	var ev envelope
	if !r.object(line, &ev) {
		return
	}
	switch ev.Type {
	case protocol.TypeUser:
		r.turnOpen = true
		s := userText(ev.Message)
		if s != "" && s == r.started {
			s = "" // shown from the daemon's turn.started
		}
		r.started = ""
		if s != "" {
			r.prompt(0, s, false)
		}
	case protocol.TypeControlRequest:
		var rq struct {
			Subtype string `json:"subtype"`
			Mode    string `json:"mode"`
		}
		_ = json.Unmarshal(ev.Request, &rq)
		r.clientRq[ev.RequestID] = rq.Subtype
		body := rq.Subtype
		if rq.Mode != "" {
			body += " " + rq.Mode
		}
		r.put(0, r.st.dim.Sprint("»"), r.st.dim.Sprint(body))
	case protocol.TypeControlResp:
		r.answer(ev.Response)
	default:
		r.put(0, r.st.dim.Sprint("»"), r.st.dim.Sprint(ev.Type))
	}
}

// answer shows the client's control_response to a permission request or
// a hook, when no agentjq decision event showed it already.
func (r *Renderer) answer(raw json.RawMessage) {
	var resp struct {
		Subtype   string          `json:"subtype"`
		RequestID string          `json:"request_id"`
		Response  json.RawMessage `json:"response"`
		Error     string          `json:"error"`
	}
	if json.Unmarshal(raw, &resp) != nil {
		return
	}
	rq := r.pending[resp.RequestID]
	if rq == nil {
		return
	}
	if resp.Subtype == "error" {
		r.decided(rq, "error", "client", resp.Error, "")
		return
	}
	var body struct {
		Behavior     string          `json:"behavior"`
		Message      string          `json:"message"`
		UpdatedInput json.RawMessage `json:"updatedInput"`
		Hook         struct {
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	_ = json.Unmarshal(resp.Response, &body)
	if rq.hook {
		behavior := body.Hook.Decision
		if behavior == "" {
			behavior = "continue"
		}
		r.decided(rq, behavior, "client", body.Hook.Reason, "")
		return
	}
	r.decided(rq, body.Behavior, "client", body.Message, answers(body.UpdatedInput))
}

// answers returns AskUserQuestion's chosen labels from an updatedInput.
func answers(input json.RawMessage) string {
	var in struct {
		Answers map[string]string `json:"answers"`
	}
	if json.Unmarshal(input, &in) != nil || len(in.Answers) == 0 {
		return ""
	}
	var vals []string
	for _, k := range slices.Sorted(maps.Keys(in.Answers)) {
		vals = append(vals, in.Answers[k])
	}
	return strings.Join(vals, "; ")
}

// --- the agent's stream ------------------------------------------------

// envelope holds the fields of any event the view reads. Fields whose
// type differs by event (message, status) stay raw.
type envelope struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	ParentToolUseID string          `json:"parent_tool_use_id"`
	Message         json.RawMessage `json:"message"`
	IsAPIError      bool            `json:"is_api_error_message"`
	RequestID       string          `json:"request_id"`
	Request         json.RawMessage `json:"request"`
	Response        json.RawMessage `json:"response"`
	Event           json.RawMessage `json:"event"`
	APIMessageID    string          `json:"api_message_id"`
	IsReplay        bool            `json:"isReplay"`
	IsSynthetic     bool            `json:"isSynthetic"`

	// system
	Model          string          `json:"model"`
	Cwd            string          `json:"cwd"`
	Version        string          `json:"claude_code_version"`
	PermissionMode string          `json:"permissionMode"`
	Status         json.RawMessage `json:"status"`
	ToolName       string          `json:"tool_name"`
	ToolUseID      string          `json:"tool_use_id"`
	Description    string          `json:"description"`
	SubagentType   string          `json:"subagent_type"`
	Summary        string          `json:"summary"`
	Usage          struct {
		TotalTokens int     `json:"total_tokens"`
		ToolUses    int     `json:"tool_uses"`
		DurationMS  float64 `json:"duration_ms"`
	} `json:"usage"`
}

// object decodes a line that must be a JSON object, and shows a warning
// line when it is not.
func (r *Renderer) object(line []byte, ev *envelope) bool {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		why := "not JSON"
		if json.Valid(trimmed) {
			why = "not an object"
		}
		r.brokenLine(why, line)
		return false
	}
	if err := decode(line, ev); err != nil {
		r.brokenLine("not JSON", line)
		return false
	}
	return true
}

// decode reads line into v. A field of an unexpected type is not fatal:
// new CLI versions change shapes, and the view shows what it can.
func decode(line []byte, v any) error {
	err := json.Unmarshal(line, v)
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return nil
	}
	return err
}

// blocks decodes message content that is an array of blocks.
func blocks(content json.RawMessage) []protocol.Block {
	var bs []protocol.Block
	if decode(content, &bs) != nil {
		return nil
	}
	return bs
}

func (r *Renderer) depth(parent string) int {
	if parent == "" {
		return 0
	}
	if c, ok := r.calls[parent]; ok {
		return c.depth + 1
	}
	return 1
}

func (r *Renderer) out(line []byte) {
	if r.transcriptLine(line) {
		return
	}
	var ev envelope
	if !r.object(line, &ev) {
		return
	}
	switch ev.Type {
	case protocol.TypeSystem:
		r.system(&ev)
	case protocol.TypeAssistant:
		r.turnOpen = true
		r.assistant(&ev)
	case protocol.TypeUser:
		r.turnOpen = true
		r.user(&ev)
	case protocol.TypeStreamEvent:
		r.turnOpen = true
		r.streamEvent(&ev)
	case protocol.TypeControlRequest:
		r.turnOpen = true
		r.controlRequest(&ev)
	case protocol.TypeControlResp:
		r.controlResponse(&ev)
	case protocol.TypeResult:
		r.result(line)
	case protocol.TypeAgentjq:
		r.agentjq(&ev, line)
	case protocol.TypeControlCancel:
		if rq := r.pending[ev.RequestID]; rq != nil {
			r.decided(rq, "cancelled", "agent", "", "")
		}
	case protocol.TypeKeepAlive, "tool_progress":
		// Liveness noise.
	case "":
		r.badLine("no type", line)
	default:
		r.put(0, r.st.dim.Sprint("·"), r.st.dim.Sprint(ev.Type))
	}
}

func (r *Renderer) system(ev *envelope) {
	switch ev.Subtype {
	case "init":
		if ev.Cwd != "" {
			r.cwd = ev.Cwd
		}
		parts := []string{ev.Model, ev.Cwd}
		if ev.Version != "" {
			parts = append(parts, "claude "+ev.Version)
		}
		if ev.PermissionMode != "" {
			parts = append(parts, ev.PermissionMode)
		}
		h := strings.Join(parts, "  ")
		if h == r.init {
			return // the agent repeats init every turn
		}
		r.init = h
		r.put(0, r.st.bold.Sprint("●"), r.st.bold.Sprint(ev.Model)+"  "+r.st.dim.Sprint(strings.Join(parts[1:], "  ")))
	case "status":
		var status string
		_ = json.Unmarshal(ev.Status, &status)
		switch {
		case ev.PermissionMode != "":
			r.put(0, r.st.dim.Sprint("·"), r.st.dim.Sprint("mode "+ev.PermissionMode))
		case status != "" && status != "requesting":
			r.put(0, r.st.dim.Sprint("·"), r.st.dim.Sprint(status))
		}
	case "permission_denied":
		var msg string
		_ = json.Unmarshal(ev.Message, &msg)
		d := r.depthOfTool(ev.ToolUseID)
		r.put(d, r.st.red.Sprint("✗"), r.st.red.Sprint("denied ")+r.st.bold.Sprint(ev.ToolName)+"  "+
			r.st.red.Sprint(fit(oneLine(msg), r.budget(d, "denied ", ev.ToolName, "  "))))
	case "task_started":
		d := r.depthOfTool(ev.ToolUseID) + 1
		body := "task started  " + ev.Description
		if ev.SubagentType != "" {
			body += "  " + ev.SubagentType
		}
		r.put(d, r.st.dim.Sprint("◆"), r.st.dim.Sprint(fit(body, r.budget(d))))
	case "task_notification":
		d := r.depthOfTool(ev.ToolUseID) + 1
		var status string
		_ = json.Unmarshal(ev.Status, &status)
		mark, style := "◆", r.st.green
		if status != "completed" {
			style = r.st.red
		}
		note := fmt.Sprintf("%s, %s", plural(ev.Usage.TotalTokens, "token", "tokens"), plural(ev.Usage.ToolUses, "tool use", "tool uses"))
		if ev.Usage.DurationMS > 0 {
			note += ", " + duration(ev.Usage.DurationMS)
		}
		label := "task " + status + "  "
		sum, _ := firstLine(ev.Summary)
		r.put(d, style.Sprint(mark), style.Sprint(label)+fit(oneLine(sum), r.budget(d, label, note, "  ()"))+"  "+r.st.dim.Sprint("("+note+")"))
	case "thinking_tokens", "task_updated", "task_progress", "background_tasks_changed",
		"hook_started", "hook_progress", "session_state_changed":
		// Progress detail; the lines that matter come with the results.
	default:
		r.put(0, r.st.dim.Sprint("·"), r.st.dim.Sprint("system "+ev.Subtype))
	}
}

// depthOfTool is the depth of the call with this id, 0 when unknown.
func (r *Renderer) depthOfTool(id string) int {
	if c, ok := r.calls[id]; ok {
		return c.depth
	}
	return 0
}

func msgKey(parent, id string) string { return parent + "\x00" + id }

func (r *Renderer) assistant(ev *envelope) {
	var m protocol.Message
	_ = decode(ev.Message, &m)
	d := r.depth(ev.ParentToolUseID)
	apiErr := ev.IsAPIError || (m.Model == "<synthetic>" && strings.HasPrefix(firstText(m.Content), "API Error"))
	key := msgKey(ev.ParentToolUseID, m.ID)
	for _, b := range blocks(m.Content) {
		switch b.Type {
		case "text":
			if apiErr {
				r.put(d, r.st.red.Sprint("✗"), r.st.red.Sprint(fit(oneLine(b.Text), r.budget(d))))
				continue
			}
			r.finalText(key, d, b.Text)
		case "thinking":
			first, more := firstLine(b.Thinking)
			body := fit(oneLine(first), r.budget(d, "  ()", sizeNote(b.Thinking)))
			if more {
				body += "  (" + sizeNote(b.Thinking) + ")"
			}
			r.put(d, r.st.dim.Sprint("∴"), r.st.dim.Sprint(body))
		case "redacted_thinking":
			r.put(d, r.st.dim.Sprint("∴"), r.st.dim.Sprint("(redacted thinking)"))
		case "tool_use":
			k := keyInput(b.Name, b.Input, r.cwd)
			r.calls[b.ID] = call{name: b.Name, key: k, depth: d}
			note := inputNote(b.Name, b.Input)
			avail := r.budget(d, b.Name, "  ")
			if note != "" {
				avail = r.budget(d, b.Name, "  ", "  ()", note)
			}
			body := r.st.bold.Sprint(b.Name) + "  " + fit(oneLine(k), avail)
			if note != "" {
				body += "  " + r.st.dim.Sprint("("+note+")")
			}
			r.put(d, r.st.cyan.Sprint("▶"), body)
		default:
			r.put(d, r.st.dim.Sprint("·"), r.st.dim.Sprint("["+b.Type+"]"))
		}
	}
}

func firstText(content json.RawMessage) string {
	for _, b := range blocks(content) {
		if b.Type == "text" {
			return b.Text
		}
	}
	return ""
}

// finalText prints a complete text block, unless partial messages already
// streamed it: then only what the stream missed is written.
func (r *Renderer) finalText(key string, d int, text string) {
	for _, s := range r.streams[key] {
		if s.done {
			continue
		}
		s.done = true
		streamed := strings.TrimLeft(s.text.String(), "\n")
		text := strings.TrimLeft(text, "\n")
		if !strings.HasPrefix(text, streamed) {
			break // the stream and the message disagree: show the message
		}
		if rest := text[len(streamed):]; rest != "" {
			r.delta(s, rest)
		}
		return
	}
	r.text(d, text, nil)
}

func (r *Renderer) streamEvent(ev *envelope) {
	var se protocol.StreamEvent
	if decode(ev.Event, &se) != nil {
		return
	}
	parent := ev.ParentToolUseID
	if se.Type == "message_start" {
		r.lastMsg[parent] = se.Message.ID
		return
	}
	id := ev.APIMessageID
	if id == "" {
		id = r.lastMsg[parent]
	}
	key := msgKey(parent, id)
	liveKey := fmt.Sprintf("%s\x00%d", key, se.Index)
	switch se.Type {
	case "content_block_start":
		if se.ContentBlock.Type != "text" {
			return
		}
		s := &stream{key: key, depth: r.depth(parent)}
		r.live[liveKey] = s
		r.streams[key] = append(r.streams[key], s)
		if se.ContentBlock.Text != "" {
			r.delta(s, se.ContentBlock.Text)
		}
	case "content_block_delta":
		if se.Delta.Type != "text_delta" {
			return
		}
		s := r.live[liveKey]
		if s == nil { // joined mid-stream
			s = &stream{key: key, depth: r.depth(parent)}
			r.live[liveKey] = s
			r.streams[key] = append(r.streams[key], s)
		}
		r.delta(s, se.Delta.Text)
	case "content_block_stop":
		if s := r.live[liveKey]; s != nil {
			delete(r.live, liveKey)
			if r.open != nil && r.open.stream == s {
				r.closeOpen()
			}
		}
	case "message_stop":
		delete(r.streams, key)
	}
}

// delta writes streamed text as it arrives, on a line left open. Leading
// and trailing newlines are held back so that a block never ends in an
// empty line.
func (r *Renderer) delta(s *stream, t string) {
	if t == "" {
		return
	}
	s.text.WriteString(t)
	t = clean(t)
	if r.open == nil || r.open.stream != s {
		r.closeOpen()
		r.buf.WriteString(r.prefix(s.depth))
		r.buf.WriteString("  ")
		r.open = &openLine{stream: s}
		s.nl = 0
	}
	for t != "" {
		i := strings.IndexByte(t, '\n')
		chunk := t
		if i >= 0 {
			chunk = t[:i]
		}
		if chunk != "" {
			if s.started {
				for ; s.nl > 0; s.nl-- {
					r.buf.WriteByte('\n')
					r.buf.WriteString(r.prefix(s.depth))
					r.buf.WriteString("  ")
				}
			}
			s.nl = 0
			s.started = true
			r.buf.WriteString(strings.TrimRight(chunk, "\r"))
		}
		if i < 0 {
			break
		}
		s.nl++
		t = t[i+1:]
	}
}

func (r *Renderer) user(ev *envelope) {
	var m protocol.Message
	_ = decode(ev.Message, &m)
	d := r.depth(ev.ParentToolUseID)
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		r.prompt(d, s, ev.IsSynthetic)
		return
	}
	for _, b := range blocks(m.Content) {
		switch b.Type {
		case "tool_result":
			r.toolResult(d, b)
		case "text":
			r.prompt(d, b.Text, ev.IsSynthetic || strings.HasPrefix(b.Text, "["))
		default:
			r.put(d, r.st.dim.Sprint(">"), r.st.dim.Sprint("["+b.Type+"]"))
		}
	}
}

// userText returns the text of a user message's content.
func userText(raw json.RawMessage) string {
	var m protocol.Message
	_ = decode(raw, &m)
	return protocol.ContentText(m.Content, false)
}

// prompt shows a user turn; notes the CLI injects are dimmed.
func (r *Renderer) prompt(d int, s string, quiet bool) {
	s = strings.Trim(clean(s), "\n")
	if s == "" {
		return
	}
	style := r.st.bold
	if quiet {
		style = r.st.dim
	}
	lines := strings.Split(s, "\n")
	r.put(d, style.Sprint(">"), style.Sprint(strings.TrimRight(lines[0], "\r")))
	for _, l := range lines[1:] {
		r.buf.WriteString(r.prefix(d) + "  " + style.Sprint(strings.TrimRight(l, "\r")) + "\n")
	}
}

func (r *Renderer) toolResult(d int, b protocol.Block) {
	name := b.ToolUseID
	if c, ok := r.calls[b.ToolUseID]; ok {
		name = c.name
		d = c.depth
	}
	content := protocol.ContentText(b.Content, true)
	mark, style := r.st.green.Sprint("✓"), func(a ...any) string { return fmt.Sprint(a...) }
	if b.IsError {
		mark, style = r.st.red.Sprint("✗"), r.st.red.Sprint
	}
	if strings.TrimSpace(content) == "" {
		r.put(d, mark, r.st.bold.Sprint(name)+"  "+r.st.dim.Sprint("(no output)"))
		return
	}
	first, _ := firstLine(content)
	note := sizeNote(content)
	first = fit(oneLine(first), r.budget(d, name, "  ", "  ()", note))
	r.put(d, mark, r.st.bold.Sprint(name)+"  "+style(first)+"  "+r.st.dim.Sprint("("+note+")"))
}

func (r *Renderer) controlRequest(ev *envelope) {
	var rq struct {
		Subtype     string          `json:"subtype"`
		ToolName    string          `json:"tool_name"`
		Input       json.RawMessage `json:"input"`
		ToolUseID   string          `json:"tool_use_id"`
		CallbackID  string          `json:"callback_id"`
		ServerName  string          `json:"server_name"`
		BlockedPath string          `json:"blocked_path"`
		Message     struct {
			Method string `json:"method"`
		} `json:"message"`
	}
	_ = decode(ev.Request, &rq)
	switch rq.Subtype {
	case protocol.SubCanUseTool:
		d := r.depthOfTool(rq.ToolUseID)
		k := keyInput(rq.ToolName, rq.Input, r.cwd)
		req := &request{id: ev.RequestID, tool: rq.ToolName, key: k, depth: d}
		r.pending[ev.RequestID] = req
		r.closeOpen()
		r.buf.WriteString(r.prefix(d))
		r.buf.WriteString(r.st.magenta.Sprint("?") + " " + r.st.bold.Sprint(rq.ToolName) + "  " + fit(oneLine(k), r.budget(d, rq.ToolName, "  ", " → allow (rules)")))
		r.open = &openLine{requestID: ev.RequestID}
	case protocol.SubHookCallback:
		var in struct {
			Event     string          `json:"hook_event_name"`
			ToolName  string          `json:"tool_name"`
			ToolInput json.RawMessage `json:"tool_input"`
			ToolUseID string          `json:"tool_use_id"`
		}
		_ = json.Unmarshal(rq.Input, &in)
		d := r.depthOfTool(in.ToolUseID)
		body := "hook " + in.Event
		if in.ToolName != "" {
			body += "  " + in.ToolName
		}
		r.pending[ev.RequestID] = &request{id: ev.RequestID, tool: "hook " + in.Event, depth: d, hook: true}
		r.closeOpen()
		r.buf.WriteString(r.prefix(d) + r.st.dim.Sprint("» "+body))
		r.open = &openLine{requestID: ev.RequestID}
	case protocol.SubMCPMessage:
		method := rq.Message.Method
		if method == "" {
			method = "reply"
		}
		r.put(0, r.st.dim.Sprint("»"), r.st.dim.Sprint("mcp "+rq.ServerName+"  "+method))
	default:
		r.put(0, r.st.dim.Sprint("»"), r.st.dim.Sprint(rq.Subtype))
	}
}

// controlResponse shows the agent's answer to a client request.
func (r *Renderer) controlResponse(ev *envelope) {
	var resp struct {
		Subtype   string `json:"subtype"`
		RequestID string `json:"request_id"`
		Error     string `json:"error"`
	}
	_ = json.Unmarshal(ev.Response, &resp)
	what := r.clientRq[resp.RequestID]
	if what == "" {
		what = resp.RequestID
	}
	if resp.Subtype == "error" {
		r.put(0, r.st.red.Sprint("✗"), r.st.red.Sprint(fit(what+": "+oneLine(resp.Error), r.budget(0))))
		return
	}
	r.put(0, r.st.dim.Sprint("·"), r.st.dim.Sprint(what+" ok"))
}

// decided finishes a permission request with its answer: on the request's
// own line when nothing came between them, else on a line of its own.
func (r *Renderer) decided(rq *request, behavior, by, message, extra string) {
	delete(r.pending, rq.id)
	style := r.st.green
	switch behavior {
	case protocol.Deny, "error", "block":
		style = r.st.red
	case protocol.Allow, "approve", "continue":
	default:
		style = r.st.yellow
	}
	s := " " + style.Sprint("→ "+behavior)
	if by != "" {
		s += " " + r.st.dim.Sprint("("+by+")")
	}
	if extra != "" {
		s += " " + extra
	}
	if message != "" {
		s += " " + style.Sprint(oneLine(message))
	}
	if r.open != nil && r.open.requestID == rq.id {
		r.buf.WriteString(s + "\n")
		r.open = nil
		return
	}
	r.closeOpen()
	marker, label := r.st.magenta.Sprint("?"), r.st.bold.Sprint(rq.tool)
	if rq.hook {
		marker, label = r.st.dim.Sprint("»"), r.st.dim.Sprint(rq.tool)
	}
	r.buf.WriteString(r.prefix(rq.depth) + marker + " " + label + s + "\n")
}

func (r *Renderer) result(line []byte) {
	r.closeOpen()
	r.turnOpen = false
	res, err := protocol.DecodeResult(line)
	var typ *json.UnmarshalTypeError
	if err != nil && !errors.As(err, &typ) {
		r.badLine("bad result", line)
		return
	}
	outcome, style := protocol.OutcomeSuccess, r.st.green
	detail := ""
	switch {
	case res.Failed():
		outcome, style = protocol.OutcomeError, r.st.red
		detail = res.ErrorText()
		if res.Aborted() {
			detail = "interrupted (" + res.TerminalReason + ")"
		}
	case len(res.PermissionDenials) > 0:
		outcome, style = protocol.OutcomeDenied, r.st.yellow
		detail = "denied: " + deniedTools(res.PermissionDenials)
	}
	stats := []string{plural(res.NumTurns, "turn", "turns"), duration(res.DurationMS), cost(res.TotalCostUSD)}
	body := style.Sprint(string(outcome)) + "  " + r.st.dim.Sprint(strings.Join(stats, "  "))
	if detail != "" {
		used := string(outcome) + "    " + strings.Join(stats, "  ")
		body += "  " + style.Sprint(fit(oneLine(detail), r.budget(0, used)))
	}
	r.put(0, style.Sprint("■"), body)
}

func deniedTools(denials []json.RawMessage) string {
	var names []string
	for _, d := range denials {
		var x struct {
			ToolName string `json:"tool_name"`
		}
		_ = json.Unmarshal(d, &x)
		if x.ToolName == "" {
			x.ToolName = "?"
		}
		names = append(names, x.ToolName)
	}
	return strings.Join(names, ", ")
}

func (r *Renderer) agentjq(ev *envelope, line []byte) {
	switch ev.Subtype {
	case protocol.EventDecision:
		var d protocol.Decision
		_ = decode(line, &d)
		by := d.DecidedBy
		if d.Via == protocol.ViaHook {
			by += " (hook)" // decided before the call ran, asked or not
		}
		if d.Rule != "" {
			by += ": " + d.Rule
		}
		rq := r.pending[d.RequestID]
		if rq == nil {
			rq = &request{id: d.RequestID, tool: d.Tool, depth: r.depthOfTool(d.ToolUseID)}
		}
		r.decided(rq, d.Behavior, by, d.Message, "")
	case protocol.EventWarning:
		var w protocol.Warning
		_ = decode(line, &w)
		label := w.Code
		if w.Line > 0 {
			label += fmt.Sprintf(" (line %d)", w.Line)
		}
		r.put(0, r.st.yellow.Sprint("⚠"), r.st.yellow.Sprint(label+"  ")+fit(oneLine(w.Message), r.budget(0, label, "  ")))
	case protocol.EventSandbox:
		var sb protocol.Sandboxed
		_ = decode(line, &sb)
		label := "sandbox blocked " + sb.Tool + "  "
		r.put(r.depthOfTool(sb.ToolUseID), r.st.red.Sprint("⛔"), r.st.red.Sprint(label)+fit(protocol.BlockedText(sb.Blocked), r.budget(0, label)))
	case protocol.EventExit:
		r.closeOpen()
		r.turnOpen = false
		var x protocol.Exit
		_ = decode(line, &x)
		style := r.st.green
		switch x.Outcome {
		case protocol.OutcomeSuccess:
		case protocol.OutcomeDenied:
			style = r.st.yellow
		default:
			style = r.st.red
		}
		parts := []string{}
		if x.AgentExit != nil {
			parts = append(parts, fmt.Sprintf("agent exit %d", *x.AgentExit))
		} else if x.Signal != "" {
			parts = append(parts, "agent killed by "+x.Signal)
		}
		parts = append(parts, plural(x.Turns, "turn", "turns"))
		if x.Denials > 0 {
			parts = append(parts, plural(x.Denials, "denial", "denials"))
		}
		body := style.Sprintf("exit %d %s", x.Code, x.Outcome) + "  " + r.st.dim.Sprint(strings.Join(parts, "  "))
		if x.Error != "" {
			body += "  " + style.Sprint(oneLine(x.Error))
		}
		r.put(0, style.Sprint("■"), body)
		for _, l := range strings.Split(strings.TrimRight(x.StderrTail, "\n"), "\n") {
			if l != "" {
				r.put(0, r.st.yellow.Sprint("!"), r.st.yellow.Sprint("stderr  ")+fit(oneLine(l), r.budget(0, "stderr  ")))
			}
		}
	default:
		r.put(0, r.st.dim.Sprint("·"), r.st.dim.Sprint("agentjq "+ev.Subtype))
	}
}
