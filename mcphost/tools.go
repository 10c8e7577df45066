package mcphost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentjq/agentjq/internal/proc"
)

// ProtocolVersion is the MCP version a ToolServer speaks when the agent
// does not ask for one.
const ProtocolVersion = "2025-11-25"

// DefaultToolTimeout limits a tool command when ToolServer.Timeout is 0.
const DefaultToolTimeout = 2 * time.Minute

// Tool is one shell command exposed as an MCP tool.
type Tool struct {
	Name        string
	Command     string
	Description string
	// InputSchema is the JSON schema of the arguments; nil means any
	// object.
	InputSchema json.RawMessage
}

// ToolServer is an MCP server whose tools are shell commands. A call runs
// the command with the arguments as JSON on stdin (and each scalar
// argument as $AGENTJQ_ARG_<NAME>); its stdout is the text of the result,
// and a non-zero exit makes the result an error carrying stderr.
type ToolServer struct {
	// Name and Version are the serverInfo of the initialize answer.
	Name, Version string
	Tools         []Tool
	// Timeout limits each call (default DefaultToolTimeout): the command's
	// process group is killed and the result is an error.
	Timeout time.Duration
	// Dir and Env are the commands' working directory and environment.
	Dir string
	Env []string

	mu    sync.Mutex
	calls map[string]context.CancelFunc // running calls by JSON-RPC id
}

// ReadSchema reads an input schema file: one JSON object.
func ReadSchema(path string) (json.RawMessage, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: not a JSON schema object: %v", path, err)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		names := map[string]string{}
		for k := range props {
			names[k] = ""
		}
		if err := collisions(names); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Handle answers one JSON-RPC message.
func (s *ToolServer) Handle(ctx context.Context, msg json.RawMessage) json.RawMessage {
	var m rpcMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		return errorResponse(nil, codeParse, "agentjq: unreadable JSON-RPC message: "+err.Error())
	}
	id, _ := messageID(msg)
	if id == nil {
		if m.Method == "notifications/cancelled" {
			s.cancel(m.Params)
		}
		return ack()
	}
	switch m.Method {
	case "initialize":
		return resultResponse(id, s.initialize(m.Params))
	case "ping":
		return resultResponse(id, struct{}{})
	case "tools/list":
		return resultResponse(id, s.list())
	case "tools/call":
		return s.call(ctx, id, m.Params)
	case "":
		return errorResponse(id, codeInvalidRequest, "agentjq: a JSON-RPC request needs a method")
	}
	return errorResponse(id, codeMethodNotFound, "agentjq: method not supported: "+m.Method)
}

func (s *ToolServer) initialize(params json.RawMessage) any {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p)
	version := p.ProtocolVersion
	if version == "" {
		version = ProtocolVersion
	}
	name, v := s.Name, s.Version
	if name == "" {
		name = "agentjq"
	}
	if v == "" {
		v = "0"
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{"tools": map[string]bool{"listChanged": false}},
		"serverInfo":      map[string]string{"name": name, "version": v},
	}
}

type toolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

func (s *ToolServer) list() any {
	tools := make([]toolInfo, 0, len(s.Tools))
	for _, t := range s.Tools {
		schema := t.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","additionalProperties":true}`)
		}
		desc := t.Description
		if desc == "" {
			desc = "Runs a shell command hosted by agentjq; the arguments reach it as JSON on stdin."
		}
		tools = append(tools, toolInfo{t.Name, desc, schema})
	}
	return map[string]any{"tools": tools}
}

// callResult is an MCP tools/call result.
type callResult struct {
	Content []textContent `json:"content"`
	IsError bool          `json:"isError"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func (s *ToolServer) call(ctx context.Context, id json.RawMessage, params json.RawMessage) json.RawMessage {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			ToolUseID string `json:"claudecode/toolUseId"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return errorResponse(id, codeInvalidParams, "agentjq: unreadable tools/call params: "+err.Error())
	}
	i := slices.IndexFunc(s.Tools, func(t Tool) bool { return t.Name == p.Name })
	if i < 0 {
		return errorResponse(id, codeInvalidParams, "agentjq: no tool named "+strconv.Quote(p.Name))
	}
	tool := s.Tools[i]
	args := bytes.TrimSpace(p.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	key := idKey(id)
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[string]context.CancelFunc{}
	}
	s.calls[key] = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.calls, key)
		s.mu.Unlock()
	}()

	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultToolTimeout
	}
	env := append(slices.Clone(s.Env), "AGENTJQ_TOOL="+tool.Name)
	if p.Meta.ToolUseID != "" {
		env = append(env, "AGENTJQ_TOOL_USE_ID="+p.Meta.ToolUseID)
	}
	if err := CheckArgNames(args); err != nil {
		return resultResponse(id, callResult{[]textContent{{"text", "agentjq: " + err.Error()}}, true})
	}
	env = append(env, ArgEnv(args)...)
	res := proc.Run(ctx, proc.Spec{
		Command: tool.Command, Dir: s.Dir, Env: env,
		Stdin: append(slices.Clone(args), '\n'), Timeout: timeout,
	})
	return resultResponse(id, toolResult(res, timeout))
}

// toolResult turns a command's result into an MCP tool result.
func toolResult(res proc.Result, timeout time.Duration) callResult {
	text := func(s string) []textContent { return []textContent{{"text", s}} }
	switch {
	case res.Err != nil:
		return callResult{text("agentjq: could not run the tool command: " + res.Err.Error()), true}
	case res.TimedOut:
		return callResult{text(fmt.Sprintf("agentjq: the tool command did not finish within %s and was killed", timeout)), true}
	case res.Cancelled:
		return callResult{text("agentjq: the tool call was cancelled and its command killed"), true}
	case res.ExitCode != 0:
		msg := strings.TrimRight(string(res.Stderr), "\n")
		if msg == "" {
			msg = fmt.Sprintf("the tool command exited with status %d", res.ExitCode)
		}
		return callResult{text(msg), true}
	}
	out := strings.TrimSuffix(string(res.Stdout), "\n")
	if res.Truncated {
		out += "\n[agentjq: output truncated]"
	}
	return callResult{text(out), false}
}

// ArgEnv turns the scalar members of an arguments object into environment
// variables: {"file_path":"a.go","n":3} gives AGENTJQ_ARG_FILE_PATH=a.go
// and AGENTJQ_ARG_N=3. Objects, arrays and nulls are left to stdin.
func ArgEnv(args json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	var env []string
	for k, v := range m {
		var val string
		switch v := v.(type) {
		case string:
			val = v
		case json.Number:
			val = v.String()
		case bool:
			val = strconv.FormatBool(v)
		default:
			continue
		}
		if strings.IndexByte(val, 0) >= 0 {
			continue
		}
		env = append(env, "AGENTJQ_ARG_"+envName(k)+"="+val)
	}
	slices.Sort(env)
	return env
}

// CheckArgNames rejects arguments whose names map to the same environment
// variable (file and FILE, a-b and a_b) or that repeat a name: the command
// would see one value and could not tell which.
func CheckArgNames(args json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil // not an object: ArgEnv sets nothing
	}
	names := map[string]string{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		k := t.(string)
		if _, dup := names[k]; dup {
			return fmt.Errorf("the argument %q is given twice", k)
		}
		names[k] = ""
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return collisions(names)
}

func collisions(names map[string]string) error {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range names {
			if !yield(k) {
				return
			}
		}
	})
	by := map[string]string{}
	for _, k := range keys {
		v := "AGENTJQ_ARG_" + envName(k)
		if other, ok := by[v]; ok {
			return fmt.Errorf("the arguments %q and %q would both be $%s (names are upper-cased and every character but a letter or digit becomes _); rename one", other, k, v)
		}
		by[v] = k
	}
	return nil
}

// envName upper-cases a name and maps anything but ASCII letters and
// digits to '_'. Two names that map to the same variable are refused
// (CheckArgNames, ReadSchema).
func envName(k string) string {
	b := []byte(strings.ToUpper(k))
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// cancel stops the call a notifications/cancelled names.
func (s *ToolServer) cancel(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	s.mu.Lock()
	c := s.calls[idKey(p.RequestID)]
	s.mu.Unlock()
	if c != nil {
		c()
	}
}

// Close cancels the calls still running.
func (s *ToolServer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.calls {
		c()
	}
	return nil
}
