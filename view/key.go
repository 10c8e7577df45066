package view

import (
	"encoding/json"
	"strings"

	"github.com/agentjq/agentjq/internal/protocol"
)

// keyInput returns the argument of a call of tool worth a line: its key
// (protocol.ToolKey, the same as approve's and agentlib's), a path
// relative to the session's directory, a question with its options.
func keyInput(tool string, input json.RawMessage, cwd string) string {
	k := protocol.ToolKeyJSON(tool, input)
	if k.Path {
		return relPath(k.Text, cwd)
	}
	if k.Field == "questions.0.question" {
		var in map[string]any
		if json.Unmarshal(input, &in) == nil {
			return k.Text + questionNote(in)
		}
	}
	return k.Text
}

// questionNote is what AskUserQuestion's key leaves out: the first
// question's options and how many questions follow.
func questionNote(in map[string]any) string {
	qs, _ := in["questions"].([]any)
	if len(qs) == 0 {
		return ""
	}
	q, _ := qs[0].(map[string]any)
	var text string
	var labels []string
	opts, _ := q["options"].([]any)
	for _, o := range opts {
		if m, ok := o.(map[string]any); ok {
			if l, ok := m["label"].(string); ok {
				labels = append(labels, l)
			}
		}
	}
	if len(labels) > 0 {
		text += "  [" + strings.Join(labels, " | ") + "]"
	}
	if len(qs) > 1 {
		text += " (+" + plural(len(qs)-1, "question", "questions") + ")"
	}
	return text
}

func relPath(p, cwd string) string {
	if cwd != "" && cwd != "/" && strings.HasPrefix(p, cwd+"/") {
		return p[len(cwd)+1:]
	}
	return p
}

// inputNote adds what a key argument leaves out: the size of what Write
// writes, the subagent type of a Task.
func inputNote(name string, input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	switch name {
	case "Write":
		if c, ok := in["content"].(string); ok {
			return sizeNote(c)
		}
	case "Task", "Agent":
		if s, ok := in["subagent_type"].(string); ok {
			return s
		}
	}
	return ""
}
