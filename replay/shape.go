package replay

import (
	"encoding/json"
	"sort"
	"strings"
)

// LineShape is what drift checking compares of one agent line: its kind
// (type, subtype, control request subtype, content block types), the set
// of key paths it carries and the JSON types at them, and the few values
// that are vocabulary (vocabPaths, listPaths). Every other value is
// ignored, so ids, uuids, text, timestamps, durations, costs, session ids
// and paths never drift.
type LineShape struct {
	Kind  string
	Paths []string // sorted, e.g. ".message.content[].type"
	// Stream is the line's parent_tool_use_id, or "tasks" for the system
	// events of background tasks (task_*, background_tasks_changed): a
	// subagent's lines and a task's lifecycle come interleaved with the
	// parent's turn in no fixed order, so each stream is compared on its
	// own ("" is the main one).
	Stream string
	// types are the JSON types seen at each path (and at ".x[]" for the
	// members of an array).
	types map[string]typeBits
	// values are the values of the paths in vocabPaths; lists the string
	// members at the paths in listPaths.
	values map[string]string
	lists  map[string][]string
}

// typeBits is a set of JSON types.
type typeBits uint8

const (
	tNull typeBits = 1 << iota
	tBool
	tNumber
	tString
	tObject
	tArray
)

func (t typeBits) String() string {
	var names []string
	for i, n := range []string{"null", "boolean", "number", "string", "object", "array"} {
		if t&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, "|")
}

// vocabPaths hold values that are vocabulary, not data: what a client or
// a policy acts on (a permission mode, a tool's name, a stream event's
// block type). A changed value is breaking drift; every other value is
// ignored.
var vocabPaths = map[string]bool{
	".permissionMode":                            true,
	".request.tool_name":                         true,
	".message.role":                              true,
	".event.delta.type":                          true,
	".event.content_block.type":                  true,
	".response.response.current_permission_mode": true,
}

// listPaths hold the members of lists that carry meaning: what system/init
// and the initialize response say the agent offers (tools, commands,
// capabilities, agents, models) and the tools a message calls. They are
// compared as sets: a member added is compatible drift, one gone is
// breaking. Control request subtypes are line kinds
// (control_request/SUBTYPE), compared as such.
var listPaths = map[string]bool{
	".tools[]": true, ".slash_commands[]": true, ".terminal_slash_commands[]": true,
	".capabilities[]": true, ".agents[]": true, ".skills[]": true,
	".plugins[].name": true, ".mcp_servers[].name": true,
	".message.content[].name":                      true,
	".response.response.capabilities[]":            true,
	".response.response.commands[].name":           true,
	".response.response.agents[].name":             true,
	".response.response.models[].value":            true,
	".response.response.available_output_styles[]": true,
}

// opaqueKeys hold objects whose keys are data, not schema (tool inputs,
// per-model usage, question answers): only their presence is compared.
var opaqueKeys = map[string]bool{
	"input": true, "updatedInput": true, "tool_input": true, "tool_use_result": true,
	"modelUsage": true, "answers": true, "hooks": true, "arguments": true, "params": true,
	"properties": true, "inputSchema": true, "_meta": true, "structured_output": true,
	"mcp_response": true,
}

// Shape returns the shape of one line.
func Shape(line []byte) LineShape {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(line)))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return LineShape{Kind: "non-JSON"}
	}
	set := map[string]bool{}
	s := LineShape{Kind: shapeKind(v), types: map[string]typeBits{}}
	s.shapePaths("", v, set)
	if m, ok := v.(map[string]any); ok {
		s.Stream, _ = m["parent_tool_use_id"].(string)
		if typ, _ := m["type"].(string); typ == "system" {
			if st, _ := m["subtype"].(string); strings.HasPrefix(st, "task_") || st == "background_tasks_changed" {
				s.Stream = "tasks"
			}
		}
	}
	for p := range set {
		s.Paths = append(s.Paths, p)
	}
	sort.Strings(s.Paths)
	return s
}

func (s *LineShape) shapePaths(path string, v any, set map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		s.types[path] |= tObject
		for k, x := range t {
			p := path + "." + jqKey(k)
			set[p] = true
			if _, isObj := x.(map[string]any); isObj && opaqueKeys[k] {
				s.types[p] |= tObject
				continue
			}
			s.shapePaths(p, x, set)
		}
	case []any:
		s.types[path] |= tArray
		for _, x := range t {
			s.shapePaths(path+"[]", x, set)
		}
	case string:
		s.types[path] |= tString
		if listPaths[path] {
			if s.lists == nil {
				s.lists = map[string][]string{}
			}
			s.lists[path] = append(s.lists[path], t)
		}
		if vocabPaths[path] {
			if s.values == nil {
				s.values = map[string]string{}
			}
			s.values[path] = t
		}
	case bool:
		s.types[path] |= tBool
	case json.Number:
		s.types[path] |= tNumber
	case nil:
		s.types[path] |= tNull
	}
}

func shapeKind(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return "non-object"
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	kind := str(m, "type")
	if st := str(m, "subtype"); st != "" {
		kind += "/" + st
	}
	if r, ok := m["request"].(map[string]any); ok {
		kind += "/" + str(r, "subtype")
	}
	if r, ok := m["response"].(map[string]any); ok && kind == "control_response" {
		kind += "/" + str(r, "subtype")
	}
	if e, ok := m["event"].(map[string]any); ok {
		kind += "/" + str(e, "type")
	}
	if msg, ok := m["message"].(map[string]any); ok {
		if blocks, ok := msg["content"].([]any); ok {
			var types []string
			for _, b := range blocks {
				if bm, ok := b.(map[string]any); ok {
					types = append(types, str(bm, "type"))
				}
			}
			kind += "[" + strings.Join(types, ",") + "]"
		}
	}
	return kind
}
