package approve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agentjq/agentjq/internal/protocol"
	names "github.com/agentjq/agentjq/internal/suggest"
)

// PolicyError is a policy file that cannot be used: agentjq reports it with
// file:line:column before it starts anything, and exits 2.
type PolicyError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *PolicyError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// ExitCode makes a bad policy a usage error.
func (e *PolicyError) ExitCode() int { return 2 }

// RulesFile is one parsed rules file.
type RulesFile struct {
	Name    string
	Default string // deny or ask
	Message string
	rules   []*rule
	answers []answer
	sandbox *sandboxKey

	pointers []string // while parsing: each rule's JSON pointer
}

// answer is a scripted answer to AskUserQuestion.
type answer struct {
	key    string   // question text, header, or "*"
	labels []string // "@first" picks the first option
	pos    string
}

// permissionKeys are the keys of Claude Code's permissions block that a
// rules file may carry without effect on agentjq.
var permissionKeys = map[string]bool{
	"allow": true, "ask": true, "deny": true, "default": true, "answers": true, "message": true,
	"defaultMode": true, "additionalDirectories": true, "disableBypassPermissionsMode": true,
	"disableAutoMode": true, "sandbox": true, "tools": true,
}

// ParseRulesFile reads a rules file: a permissions block, or a Claude Code
// settings.json whose "permissions" key holds one. home expands "~/".
func ParseRulesFile(name string, data []byte, home string) (*RulesFile, error) {
	pos, err := jsonPositions(data)
	if err != nil {
		var syn *json.SyntaxError
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			l, c := lineCol(data, len(data))
			return nil, &PolicyError{name, l, c, "unexpected end of JSON"}
		}
		if errors.As(err, &syn) {
			l, c := lineCol(data, int(syn.Offset))
			return nil, &PolicyError{name, l, c, syn.Error()}
		}
		return nil, &PolicyError{File: name, Msg: err.Error()}
	}
	perr := func(p string, format string, a ...any) error {
		off, ok := pos[p]
		if !ok {
			return &PolicyError{File: name, Msg: fmt.Sprintf(format, a...)}
		}
		l, c := lineCol(data, off)
		return &PolicyError{name, l, c, fmt.Sprintf(format, a...)}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, perr("", "a rules file is a JSON object")
	}
	base := ""
	block := top
	if raw, ok := top["permissions"]; ok {
		base = "/permissions"
		block = nil
		if err := json.Unmarshal(raw, &block); err != nil {
			return nil, perr(base, "permissions must be an object")
		}
	}
	f := &RulesFile{Name: name, Default: protocol_deny}
	var custom []string // the "tools" key: tool names of the policy's own
	if raw, ok := top["sandbox"]; ok && base != "" {
		// A Claude Code settings.json: its sandbox block stands beside
		// the permissions.
		if f.sandbox, err = parseSandboxKey(raw, "/sandbox", home, perr); err != nil {
			return nil, err
		}
		l, c := lineCol(data, pos["/sandbox"])
		f.sandbox.pos = fmt.Sprintf("%s:%d:%d", name, l, c)
	}
	keys := slices.Collect(maps.Keys(block))
	sort.Slice(keys, func(i, j int) bool { return pos[base+"/"+keys[i]] < pos[base+"/"+keys[j]] })
	for _, k := range keys {
		raw := block[k]
		p := base + "/" + pointerEscape(k)
		if !permissionKeys[k] && !strings.HasPrefix(k, "$") && !strings.HasPrefix(k, "//") && !strings.HasPrefix(k, "_") {
			return nil, perr(p+"#key", "unknown key %q (a rules file has allow, ask, deny, default, answers, message, sandbox, tools)", k)
		}
		switch k {
		case "sandbox":
			if f.sandbox, err = parseSandboxKey(raw, p, home, perr); err != nil {
				return nil, err
			}
			l, c := lineCol(data, pos[p])
			f.sandbox.pos = fmt.Sprintf("%s:%d:%d", name, l, c)
		case "allow", "ask", "deny":
			if err := f.addRules(raw, k, p, home, func(ip string) string {
				l, c := lineCol(data, pos[ip])
				return fmt.Sprintf("%s:%d:%d", name, l, c)
			}, perr); err != nil {
				return nil, err
			}
		case "tools":
			if custom, err = parseToolsKey(raw, p, perr); err != nil {
				return nil, err
			}
		case "default":
			if err := json.Unmarshal(raw, &f.Default); err != nil || (f.Default != "deny" && f.Default != "ask") {
				return nil, perr(p, `default must be "deny" or "ask"`)
			}
		case "message":
			if err := json.Unmarshal(raw, &f.Message); err != nil {
				return nil, perr(p, "message must be a string")
			}
		case "answers":
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, perr(p, "answers must be an object: question text or header -> option label")
			}
			akeys := slices.Collect(maps.Keys(m))
			sort.Slice(akeys, func(i, j int) bool { return pos[p+"/"+akeys[i]] < pos[p+"/"+akeys[j]] })
			for _, q := range akeys {
				qp := p + "/" + pointerEscape(q)
				var labels []string
				var one string
				if err := json.Unmarshal(m[q], &one); err == nil {
					labels = []string{one}
				} else if err := json.Unmarshal(m[q], &labels); err != nil {
					return nil, perr(qp+"#key", "an answer is an option label or an array of labels")
				}
				for _, l := range labels {
					if strings.TrimSpace(l) == "" {
						return nil, perr(qp+"#key", "an answer must not be empty")
					}
				}
				if len(labels) == 0 {
					return nil, perr(qp+"#key", "an answer must not be empty")
				}
				l, c := lineCol(data, pos[qp+"#key"])
				f.answers = append(f.answers, answer{key: q, labels: labels, pos: fmt.Sprintf("%s:%d:%d", name, l, c)})
			}
		}
	}
	if err := f.checkToolNames(custom, perr); err != nil {
		return nil, err
	}
	return f, nil
}

// checkToolNames checks the tool of every rule (checkToolName), once the
// whole file, its "tools" key too, is read.
func (f *RulesFile) checkToolNames(custom []string, perr func(string, string, ...any) error) error {
	defer func() { f.pointers = nil }()
	for i, r := range f.rules {
		if err := checkToolName(r, custom); err != nil {
			return perr(f.pointers[i], "%v", err)
		}
	}
	return nil
}

// addRules parses the rule strings of an allow, ask or deny array at JSON
// pointer p; at gives a rule's file:line:column from its pointer.
func (f *RulesFile) addRules(raw json.RawMessage, behavior, p, home string, at func(string) string, perr func(string, string, ...any) error) error {
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return perr(p, "%s must be an array of rule strings", behavior)
	}
	for i, text := range list {
		ip := p + "/" + strconv.Itoa(i)
		r, err := parseRule(text, behavior, home)
		if err != nil {
			return perr(ip, "%v", err)
		}
		r.pos = at(ip)
		r.file = f
		f.rules = append(f.rules, r)
		f.pointers = append(f.pointers, ip)
	}
	return nil
}

// parseToolsKey reads a rules file's "tools": the names of tools of the
// policy's own, which its rules may name.
func parseToolsKey(raw json.RawMessage, p string, perr func(string, string, ...any) error) ([]string, error) {
	var custom []string
	if err := json.Unmarshal(raw, &custom); err != nil {
		return nil, perr(p, "tools must be an array of tool names (the tools of your own the rules name)")
	}
	for i, t := range custom {
		if !isToolName(t) {
			return nil, perr(p+"/"+strconv.Itoa(i), "%q is not a tool name (tool names start with a capital letter)", t)
		}
	}
	return custom, nil
}

// checkToolName refuses a rule about a tool claude does not have, unless
// the tool is an MCP one or the file lists it under "tools": a misspelt
// name would otherwise match nothing, silently.
func checkToolName(r *rule, custom []string) error {
	if r.mcpServer != "" || protocol.KnownTool(r.tool) || slices.Contains(custom, r.tool) {
		return nil
	}
	msg := fmt.Sprintf("rule %q: unknown tool %q", r.text, r.tool)
	if s := names.Closest(r.tool, append(slices.Clone(protocol.ClaudeTools), custom...)); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", s)
	}
	return errors.New(msg + ` (a tool of your own: list it in "tools": ["` + r.tool + `"])`)
}

const protocol_deny = "deny"

func pointerEscape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int) (int, int) {
	if off > len(data) {
		off = len(data)
	}
	if off < 0 {
		off = 0
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// jsonPositions maps the JSON pointer of every value (and object key) in
// data to the byte offset where it starts, and checks the syntax.
func jsonPositions(data []byte) (map[string]int, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	pos := map[string]int{}
	var walk func(p string) error
	walk = func(p string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		end := int(dec.InputOffset())
		pos[p] = tokenStart(data, end, tok)
		d, ok := tok.(json.Delim)
		if !ok {
			return nil
		}
		switch d {
		case '{':
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				kp := p + "/" + pointerEscape(k)
				pos[kp+"#key"] = tokenStart(data, int(dec.InputOffset()), kt)
				if err := walk(kp); err != nil {
					return err
				}
			}
		case '[':
			for i := 0; dec.More(); i++ {
				if err := walk(p + "/" + strconv.Itoa(i)); err != nil {
					return err
				}
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return nil, errors.New("more than one JSON value")
		}
		return nil, err
	}
	return pos, nil
}

// tokenStart finds where the token that ends at end begins.
func tokenStart(data []byte, end int, tok json.Token) int {
	if end > len(data) {
		end = len(data)
	}
	switch tok.(type) {
	case json.Delim:
		return end - 1
	case string:
		// Back from the closing quote to the opening one, skipping
		// escaped quotes.
		for i := end - 2; i >= 0; i-- {
			if data[i] != '"' {
				continue
			}
			n := 0
			for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
				n++
			}
			if n%2 == 0 {
				return i
			}
		}
		return 0
	default:
		i := end
		for i > 0 && bytes.IndexByte([]byte("0123456789.eE+-truefalsn"), data[i-1]) >= 0 {
			i--
		}
		return i
	}
}
