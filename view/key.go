package view

import (
	"encoding/json"
	"strings"
)

// keyFields are the input fields a person reads first, in the order
// agentlib's key_input tries them.
var keyFields = []string{"command", "file_path", "notebook_path", "pattern", "url", "query", "path"}

// pathFields are shown relative to the session's working directory.
var pathFields = map[string]bool{"file_path": true, "notebook_path": true, "path": true}

// keyInput returns the argument of a tool call worth a line: the command,
// the path, the pattern, the url, the question...
func keyInput(input json.RawMessage, cwd string) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil || in == nil {
		return strings.TrimSpace(string(input))
	}
	for _, f := range keyFields {
		if s, ok := in[f].(string); ok && s != "" {
			if pathFields[f] {
				return relPath(s, cwd)
			}
			return s
		}
	}
	if q := question(in); q != "" {
		return q
	}
	for _, f := range []string{"description", "prompt", "skill"} {
		if s, ok := in[f].(string); ok && s != "" {
			return s
		}
	}
	if len(in) == 0 {
		return ""
	}
	b, _ := json.Marshal(in)
	return string(b)
}

// question returns AskUserQuestion's first question with its options.
func question(in map[string]any) string {
	qs, _ := in["questions"].([]any)
	if len(qs) == 0 {
		return ""
	}
	q, _ := qs[0].(map[string]any)
	text, _ := q["question"].(string)
	if text == "" {
		return ""
	}
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
