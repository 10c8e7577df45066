package view

// Claude Code's own session files (~/.claude/projects/<project>/<id>.jsonl)
// hold the same user and assistant messages as a stream-json session, with
// a timestamp each, and between them many bookkeeping lines (queue
// operations, attachments, API request snapshots, cost state...). The view
// shows a header per session, the conversation with each line's time, and
// an end line with what a transcript can tell: its last activity, turns
// and tokens. It has no result line, so it never ends "without a result".

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentjq/agentjq/filter/agentlib"
	"github.com/agentjq/agentjq/internal/transcript"
)

// prices is agentlib's price table, read once.
var prices = sync.OnceValue(agentlib.DefaultPrices)

// tline holds the fields of a transcript line the view reads.
type tline struct {
	Type             string `json:"type"`
	Subtype          string `json:"subtype"`
	SessionID        string `json:"sessionId"`
	Timestamp        string `json:"timestamp"`
	IsSidechain      bool   `json:"isSidechain"`
	IsMeta           bool   `json:"isMeta"`
	IsCompactSummary bool   `json:"isCompactSummary"`
	Version          string `json:"version"`
	Cwd              string `json:"cwd"`
	Content          any    `json:"content"`
	Operation        string `json:"operation"`
	Attachment       struct {
		Type string `json:"type"`
	} `json:"attachment"`
	CompactMetadata struct {
		Trigger   string `json:"trigger"`
		PreTokens int    `json:"preTokens"`
	} `json:"compactMetadata"`
	Message struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
		Usage   *tokens         `json:"usage"`
	} `json:"message"`
}

// tokens is an assistant message's usage.
type tokens struct {
	Input      int `json:"input_tokens"`
	Output     int `json:"output_tokens"`
	CacheRead  int `json:"cache_read_input_tokens"`
	CacheWrite int `json:"cache_creation_input_tokens"`
	Split      struct {
		Write1h int `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
}

func (t tokens) total() int { return t.Input + t.Output + t.CacheRead + t.CacheWrite }

// tsession is the transcript session being shown.
type tsession struct {
	id      string
	cwd     string
	version string
	start   time.Time
	last    time.Time
	models  []string // from the file's first reading, or as seen
	// knownModels: models came from a first reading of the file.
	knownModels bool
	shown       bool // the header is written
	turns       map[string]bool
	usage       map[string]tokens // message id -> usage (a message split over lines counts once)
	model       map[string]string // message id -> model
	subs        map[string]transcript.Subagent
	subsDone    map[string]bool
	inSub       bool
}

// isTranscriptLine is a cheap test: transcript lines name their session
// sessionId, stream-json lines session_id.
func isTranscriptLine(line []byte) bool {
	return bytes.Contains(line, []byte(`"sessionId"`))
}

// transcriptLine shows a line of a transcript; false when the line is not
// one (it has no sessionId).
func (r *Renderer) transcriptLine(line []byte) bool {
	if !isTranscriptLine(line) {
		return false
	}
	var tl tline
	if decode(line, &tl) != nil || tl.SessionID == "" || tl.Type == "" {
		return false
	}
	s := r.ts
	if s == nil || (s.id != tl.SessionID && !s.inSub) {
		r.endTranscript()
		s = &tsession{id: tl.SessionID, turns: map[string]bool{}, usage: map[string]tokens{}, model: map[string]string{}, subsDone: map[string]bool{}}
		if r.next != nil && (r.next.id == "" || r.next.id == tl.SessionID) {
			s.models, s.subs, s.knownModels = r.next.models, r.next.subs, true
		}
		r.ts = s
	}
	if t, err := time.Parse(time.RFC3339Nano, tl.Timestamp); err == nil {
		if s.start.IsZero() {
			s.start = t
		}
		if t.After(s.last) {
			s.last = t
		}
		r.stamp = t.UTC().Format("15:04:05") + " "
	} else {
		r.stamp = "         " // lines without a time keep the column
	}
	if s.cwd == "" && tl.Cwd != "" {
		s.cwd = tl.Cwd
		if r.cwd == "" {
			r.cwd = tl.Cwd
		}
	}
	if s.version == "" {
		s.version = tl.Version
	}
	if tl.Type == "assistant" && tl.Message.ID != "" {
		if m := tl.Message.Model; m != "" && m != "<synthetic>" && !s.knownModels && !slices.Contains(s.models, m) {
			s.models = append(s.models, m)
		}
		if !tl.IsSidechain && !s.inSub {
			s.turns[tl.Message.ID] = true
		}
		if u := tl.Message.Usage; u != nil {
			s.usage[tl.Message.ID] = maxTokens(s.usage[tl.Message.ID], *u)
			if tl.Message.Model != "" {
				s.model[tl.Message.ID] = tl.Message.Model
			}
		}
	}
	r.showTranscriptLine(&tl, line)
	r.stamp = ""
	return true
}

// maxTokens keeps, field by field, the larger count: the lines of one
// message carry the same usage, or an earlier one a partial count.
func maxTokens(a, b tokens) tokens {
	t := tokens{Input: max(a.Input, b.Input), Output: max(a.Output, b.Output), CacheRead: max(a.CacheRead, b.CacheRead), CacheWrite: max(a.CacheWrite, b.CacheWrite)}
	t.Split.Write1h = max(a.Split.Write1h, b.Split.Write1h)
	return t
}

func (r *Renderer) transcriptHeader() {
	s := r.ts
	if s == nil || s.shown {
		return
	}
	s.shown = true
	if s.inSub {
		return
	}
	parts := []string{}
	if s.cwd != "" {
		parts = append(parts, s.cwd)
	}
	if len(s.models) > 0 {
		parts = append(parts, strings.Join(s.models, ", "))
	}
	if !s.start.IsZero() {
		parts = append(parts, s.start.UTC().Format("2006-01-02 15:04:05Z"))
	}
	if s.version != "" {
		parts = append(parts, "claude "+s.version)
	}
	stamp := r.stamp
	r.stamp = ""
	r.put(0, r.st.bold.Sprint("●"), r.st.bold.Sprint("session "+s.id)+"  "+r.st.dim.Sprint(strings.Join(parts, "  ")))
	r.stamp = stamp
}

// bookkeeping shows a line that is not part of the conversation: only with
// Options.All.
func (r *Renderer) bookkeeping(tl *tline) {
	if !r.opts.All {
		return
	}
	what := tl.Type
	switch {
	case tl.Attachment.Type != "":
		what += " " + tl.Attachment.Type
	case tl.Operation != "":
		what += " " + tl.Operation
	case tl.Subtype != "":
		what += " " + tl.Subtype
	}
	r.transcriptHeader()
	r.put(r.sideDepth(tl), r.st.dim.Sprint("·"), r.st.dim.Sprint(what))
}

func (r *Renderer) sideDepth(tl *tline) int {
	if tl.IsSidechain && !r.ts.inSub {
		return 1 // an older CLI kept subagent lines in the session's file
	}
	return 0
}

var (
	commandRE = regexp.MustCompile(`(?s)<command-name>(.*?)</command-name>.*?(?:<command-args>(.*?)</command-args>)?`)
	stdoutRE  = regexp.MustCompile(`(?s)^<local-command-stdout>(.*)</local-command-stdout>$`)
	taskRE    = regexp.MustCompile(`(?s)<status>(.*?)</status>.*?<summary>(.*?)</summary>`)
)

func (r *Renderer) showTranscriptLine(tl *tline, line []byte) {
	d := r.sideDepth(tl)
	switch tl.Type {
	case "assistant":
		var ev envelope
		if !r.object(line, &ev) {
			return
		}
		r.transcriptHeader()
		r.base += d
		r.assistant(&ev)
		r.base -= d
	case "user":
		if tl.IsMeta {
			r.bookkeeping(tl)
			return
		}
		var text string
		_ = json.Unmarshal(tl.Message.Content, &text)
		text = strings.TrimSpace(text)
		r.transcriptHeader()
		switch {
		case tl.IsCompactSummary:
			r.put(d, r.st.dim.Sprint("◆"), r.st.dim.Sprint("compact summary  ("+sizeNote(text)+")"))
		case strings.HasPrefix(text, "<command-name>"):
			m := commandRE.FindStringSubmatch(text)
			cmd := strings.TrimSpace(m[1] + " " + m[2])
			r.put(d, r.st.bold.Sprint(">"), r.st.bold.Sprint(cmd))
		case stdoutRE.MatchString(text):
			r.text(d, stdoutRE.FindStringSubmatch(text)[1], r.st.dim.Sprint)
		case strings.HasPrefix(text, "<task-notification>"):
			m := taskRE.FindStringSubmatch(text)
			if m == nil {
				m = []string{"", "notification", ""}
			}
			r.put(d+1, r.st.dim.Sprint("◆"), r.st.dim.Sprint(fit(oneLine("task "+m[1]+"  "+m[2]), r.budget(d+1))))
		default:
			var ev envelope
			if !r.object(line, &ev) {
				return
			}
			r.base += d
			r.user(&ev)
			r.base -= d
			r.subagentsOf(tl)
		}
	case "system":
		r.transcriptHeader()
		switch tl.Subtype {
		case "compact_boundary":
			body := "compacted"
			if m := tl.CompactMetadata; m.Trigger != "" {
				body += fmt.Sprintf(" (%s, %s before)", m.Trigger, plural(m.PreTokens, "token", "tokens"))
			}
			r.put(d, r.st.dim.Sprint("◆"), r.st.dim.Sprint(body))
		default:
			text, _ := tl.Content.(string)
			body := "system " + tl.Subtype
			if text != "" {
				body += "  " + oneLine(text)
			}
			r.put(d, r.st.dim.Sprint("·"), r.st.dim.Sprint(fit(body, r.budget(d))))
		}
	default:
		r.bookkeeping(tl)
	}
}

// subagentsOf shows, after the result of a Task call, the subagent's own
// file under it.
func (r *Renderer) subagentsOf(tl *tline) {
	s := r.ts
	if len(s.subs) == 0 || s.inSub {
		return
	}
	for _, b := range blocks(tl.Message.Content) {
		if b.Type != "tool_result" {
			continue
		}
		if sub, ok := s.subs[b.ToolUseID]; ok && !s.subsDone[b.ToolUseID] {
			s.subsDone[b.ToolUseID] = true
			r.subagentFile(sub, r.depthOfTool(b.ToolUseID)+1)
		}
	}
}

// subagentFile renders a subagent's transcript indented by depth.
func (r *Renderer) subagentFile(sub transcript.Subagent, depth int) {
	f, err := os.Open(sub.Path)
	if err != nil {
		r.put(depth, r.st.yellow.Sprint("⚠"), r.st.yellow.Sprint(err.Error()))
		return
	}
	defer f.Close()
	label := "subagent"
	if sub.AgentType != "" {
		label += " " + sub.AgentType
	}
	if sub.Description != "" {
		label += "  " + sub.Description
	}
	r.put(depth, r.st.dim.Sprint("◆"), r.st.dim.Sprint(fit(label, r.budget(depth))))
	s := r.ts
	s.inSub = true
	saved, savedNo := r.base, r.lineNo
	r.base = depth
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	r.lineNo = 0
	for sc.Scan() {
		r.lineNo++
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			r.out(sc.Bytes())
		}
	}
	if err := sc.Err(); err != nil {
		r.put(depth, r.st.yellow.Sprint("⚠"), r.st.yellow.Sprint(sub.Path+": "+err.Error()))
	}
	r.base, r.lineNo = saved, savedNo
	s.inSub = false
}

// endTranscript writes the end line of the transcript session being shown,
// and the subagents no Task result placed.
func (r *Renderer) endTranscript() {
	s := r.ts
	if s == nil {
		return
	}
	for id, sub := range s.subs {
		if !s.subsDone[id] {
			s.subsDone[id] = true
			r.transcriptHeader()
			r.subagentFile(sub, 1)
		}
	}
	r.transcriptHeader()
	r.ts = nil
	// What the session's lines left (tool names by id, streamed text) is
	// of no use to the next: memory stays flat over many files.
	clear(r.calls)
	clear(r.pending)
	clear(r.streams)
	clear(r.live)
	clear(r.lastMsg)
	var sum tokens
	ids := make([]string, 0, len(s.usage))
	for id := range s.usage {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	usd, priced := 0.0, true
	for _, id := range ids {
		u := s.usage[id]
		sum = tokens{Input: sum.Input + u.Input, Output: sum.Output + u.Output, CacheRead: sum.CacheRead + u.CacheRead, CacheWrite: sum.CacheWrite + u.CacheWrite}
		p, ok := prices().Lookup(s.model[id])
		priced = priced && ok
		w1h := u.Split.Write1h
		usd += (float64(u.Input)*p.Input + float64(u.Output)*p.Output + float64(u.CacheRead)*p.CacheRead +
			float64(u.CacheWrite-w1h)*p.CacheWrite5m + float64(w1h)*p.CacheWrite1h) / 1e6
	}
	parts := []string{}
	if !s.last.IsZero() {
		parts = append(parts, "last activity "+s.last.UTC().Format("2006-01-02 15:04:05Z"))
	}
	parts = append(parts, plural(len(s.turns), "turn", "turns"),
		fmt.Sprintf("%s (%d in, %d out, %d cache read, %d cache write)", plural(sum.total(), "token", "tokens"), sum.Input, sum.Output, sum.CacheRead, sum.CacheWrite))
	if priced && len(ids) > 0 {
		parts = append(parts, cost(usd))
	}
	r.closeOpen()
	r.put(0, r.st.bold.Sprint("■"), r.st.bold.Sprint("transcript")+"  "+r.st.dim.Sprint(strings.Join(parts, "  ")))
}

// nextFile is what a first reading of a transcript file found: the models
// its assistant messages name (for the header) and its subagents' files.
type nextFile struct {
	id     string
	models []string
	subs   map[string]transcript.Subagent
}

// scanTranscript reads the file at path once for its header facts, or
// returns nil when it is not a transcript (its first line has no
// sessionId).
func scanTranscript(path string) *nextFile {
	n, ok := scanModels(path)
	if !ok {
		return nil
	}
	n.subs = map[string]transcript.Subagent{}
	for i, s := range transcript.Subagents(path) {
		key := s.ToolUseID
		if key == "" {
			key = fmt.Sprintf("\x00%d", i)
		}
		n.subs[key] = s
		if sn, ok := scanModels(s.Path); ok {
			for _, m := range sn.models {
				if !slices.Contains(n.models, m) {
					n.models = append(n.models, m)
				}
			}
		}
	}
	return n
}

// scanModels reads the models and the session id of a transcript file;
// false when its first line is not a transcript line.
func scanModels(path string) (*nextFile, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	n := &nextFile{}
	first := true
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if first && !isTranscriptLine(line) {
			return nil, false
		}
		first = false
		if !bytes.Contains(line, []byte(`"assistant"`)) {
			continue
		}
		var tl tline
		if decode(line, &tl) == nil && tl.Type == "assistant" {
			if n.id == "" {
				n.id = tl.SessionID
			}
			if m := tl.Message.Model; m != "" && m != "<synthetic>" && !slices.Contains(n.models, m) {
				n.models = append(n.models, m)
			}
		}
	}
	return n, !first
}

// maxLine bounds a line of a subagent's file or of a first reading.
const maxLine = 256 << 20

// RenderFiles renders files one after the other with one Renderer: a
// transcript file is one session (a header, its subagents' files under
// their Task calls, an end line), a recording or stream as Render shows
// it. names are the files as the user named them (for messages). Like
// Render, it fails with a *BadInput after everything is shown when lines
// could not be read; a file that cannot be opened is an error at once.
func RenderFiles(ctx context.Context, paths, names []string, w io.Writer, opts Options) error {
	rn := New(w, opts)
	var bad *BadInput
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			_ = rn.Close()
			return err
		}
		rn.next = scanTranscript(p)
		err = rn.feed(ctx, f, names[i])
		f.Close()
		if err != nil {
			return err
		}
		rn.endTranscript()
		rn.next = nil
		if rn.broken > 0 && bad == nil {
			bad = &BadInput{Name: names[i], Lines: rn.broken, First: rn.first}
		}
		if err := rn.flush(); err != nil {
			return err
		}
	}
	if err := rn.Close(); err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	return nil
}
