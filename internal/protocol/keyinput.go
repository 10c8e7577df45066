package protocol

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Key is the argument of a tool call that a person reviewing it reads
// first: the Bash command, the file path, the Task's description. approve
// (`approve test`, prompts), the view and agentlib's key_input all take it
// from ToolKey, so they show the same thing for the same call.
type Key struct {
	// Field is the input field Text came from ("questions.0.question" for
	// a nested one); "" when Text is the whole input.
	Field string
	Text  string
	// Path says Text is a file path (a view may show it relative to the
	// session's directory).
	Path bool
}

// KeyFields are, per tool, the input fields that say what a call does, in
// the order they are tried: the first that is a non-empty string is the
// key. A dotted name reaches into the input (questions.0.question).
// Tools not listed here (MCP tools, tools newer than this table) and
// inputs with no tool name try GenericKeyFields. When no field fits, the
// key is the input as compact JSON.
var KeyFields = map[string][]string{
	"Bash":            {"command"},
	"BashOutput":      {"bash_id"},
	"KillShell":       {"shell_id"},
	"Monitor":         {"command", "ws.url", "description"},
	"Read":            {"file_path"},
	"Write":           {"file_path"},
	"Edit":            {"file_path"},
	"MultiEdit":       {"file_path"},
	"NotebookEdit":    {"notebook_path"},
	"NotebookRead":    {"notebook_path"},
	"Glob":            {"pattern"},
	"Grep":            {"pattern"},
	"LS":              {"path"},
	"WebFetch":        {"url"},
	"WebSearch":       {"query"},
	"ToolSearch":      {"query"},
	"Task":            {"description", "prompt"},
	"Agent":           {"description", "prompt"},
	"Skill":           {"skill"},
	"SlashCommand":    {"command"},
	"AskUserQuestion": {"questions.0.question"},
	"ExitPlanMode":    {"plan"},
	"TaskCreate":      {"subject", "description"},
	"TaskGet":         {"taskId"},
	"TaskUpdate":      {"taskId"},
	"TaskStop":        {"task_id", "shell_id"},
	"CronCreate":      {"prompt", "cron"},
	"CronDelete":      {"id"},
	"ScheduleWakeup":  {"prompt", "reason"},
	"Workflow":        {"scriptPath", "name", "title", "description"},
	"EnterWorktree":   {"path", "name"},
	"ExitWorktree":    {"action"},
	"ReadMcpResource": {"uri"},
}

// GenericKeyFields are tried for a tool KeyFields does not list.
var GenericKeyFields = []string{"command", "file_path", "notebook_path", "url", "pattern", "query", "path",
	"questions.0.question", "description", "prompt", "skill"}

// pathFields hold file paths.
var pathFields = map[string]bool{"file_path": true, "notebook_path": true, "path": true, "scriptPath": true}

// ToolKey returns the key of a call of tool with input, decoded JSON as
// encoding/json (or gojq) builds it. tool may be "" when it is unknown.
func ToolKey(tool string, input any) Key {
	in, ok := input.(map[string]any)
	if !ok {
		if s, ok := input.(string); ok {
			return Key{Text: s}
		}
		return Key{Text: compactJSON(input)}
	}
	fields, known := KeyFields[tool]
	if !known {
		fields = GenericKeyFields
	}
	for _, f := range fields {
		if s, ok := lookup(in, f).(string); ok && s != "" {
			return Key{Field: f, Text: s, Path: pathFields[f]}
		}
	}
	if len(in) == 0 {
		return Key{}
	}
	return Key{Text: compactJSON(in)}
}

// ToolKeyJSON is ToolKey of a raw input. Text that is not JSON is its own
// key.
func ToolKeyJSON(tool string, input json.RawMessage) Key {
	d := json.NewDecoder(bytes.NewReader(input))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return Key{Text: strings.TrimSpace(string(input))}
	}
	return ToolKey(tool, v)
}

// Short is the key on one line (newlines as \n) of at most n characters,
// … marking a cut.
func (k Key) Short(n int) string {
	s := strings.NewReplacer("\r\n", `\n`, "\n", `\n`, "\r", `\n`).Replace(k.Text)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}

// lookup follows a dotted field name through objects and arrays.
func lookup(v any, field string) any {
	for _, step := range strings.Split(field, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[step]
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// compactJSON writes v as jq's tojson does: compact, keys sorted, no HTML
// escapes.
func compactJSON(v any) string {
	var b bytes.Buffer
	writeJSON(&b, v)
	return b.String()
}

func writeJSON(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, k)
			b.WriteByte(':')
			writeJSON(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e)
		}
		b.WriteByte(']')
	default:
		e := json.NewEncoder(b)
		e.SetEscapeHTML(false)
		if e.Encode(v) != nil {
			b.WriteString("null")
			return
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	}
}
