// Package mcphost hosts MCP servers for the agent inside its stdio control
// channel (the agent's "SDK MCP servers"): their names go in the
// initialize request's sdkMcpServers, and every JSON-RPC message the agent
// sends one of them arrives as an mcp_message control request, answered
// under response.mcp_response.
//
// Two kinds of server are hosted: a ToolServer, which exposes shell
// commands as tools, and a Relay, which passes the messages on to a stdio
// MCP server process that agentjq starts and owns. The MCP Go SDK was
// weighed against it (BENCHMARKS.md): 2.47 MB for some 150 lines.
package mcphost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
)

// Server answers the JSON-RPC messages the agent sends one MCP server.
type Server interface {
	// Handle answers one message: a request with its response, a
	// notification (no id) with an acknowledgement. ctx ends when the
	// agent withdraws the message or the session ends.
	Handle(ctx context.Context, msg json.RawMessage) json.RawMessage
	// Close stops the server and everything it started.
	Close() error
}

// Host routes mcp_message requests to the servers by name.
type Host struct {
	mu      sync.Mutex
	names   []string
	servers map[string]Server
}

// validName is what the agent accepts in mcp__<server>__<tool>.
var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidName reports whether name can be an MCP server or tool name.
func ValidName(name string) bool { return validName.MatchString(name) }

// Add hosts s under name.
func (h *Host) Add(name string, s Server) error {
	if !ValidName(name) {
		return fmt.Errorf("MCP server name %q: use letters, digits, '_' and '-'", name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.servers == nil {
		h.servers = map[string]Server{}
	}
	if _, dup := h.servers[name]; dup {
		return fmt.Errorf("MCP server %q is defined twice", name)
	}
	h.servers[name] = s
	h.names = append(h.names, name)
	return nil
}

// Names are the hosted servers, in the order added: the initialize
// request's sdkMcpServers.
func (h *Host) Names() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.names)
}

// Handle answers one mcp_message control request; it has the signature of
// a bridge control handler. A message for a server that is not hosted gets
// a JSON-RPC error, as the SDKs answer.
func (h *Host) Handle(ctx context.Context, _ string, request json.RawMessage) (any, error) {
	var req struct {
		ServerName string          `json:"server_name"`
		Message    json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(request, &req); err != nil {
		return nil, fmt.Errorf("agentjq: unreadable mcp_message: %v", err)
	}
	h.mu.Lock()
	s := h.servers[req.ServerName]
	h.mu.Unlock()
	var resp json.RawMessage
	if s == nil {
		id, _ := messageID(req.Message)
		resp = errorResponse(id, codeMethodNotFound, fmt.Sprintf("agentjq hosts no MCP server named %q", req.ServerName))
	} else {
		resp = s.Handle(ctx, req.Message)
	}
	return mcpResponse{resp}, nil
}

type mcpResponse struct {
	MCPResponse json.RawMessage `json:"mcp_response"`
}

// Close closes every server.
func (h *Host) Close() error {
	h.mu.Lock()
	servers := make([]Server, 0, len(h.names))
	for _, n := range h.names {
		servers = append(servers, h.servers[n])
	}
	h.mu.Unlock()
	var errs []error
	for _, s := range servers {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// JSON-RPC error codes.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
)

// rpcMessage is any JSON-RPC 2.0 message.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// messageID is the message's id, nil for a notification. ok is false when
// the message is not a JSON object.
func messageID(msg json.RawMessage) (id json.RawMessage, ok bool) {
	var m rpcMessage
	if json.Unmarshal(msg, &m) != nil {
		return nil, false
	}
	if bytes.Equal(bytes.TrimSpace(m.ID), []byte("null")) {
		return nil, true
	}
	return m.ID, true
}

// ack answers a notification. The control channel wants an answer to every
// mcp_message, and a notification has no id: the SDKs answer with an empty
// result and a null id, which the agent accepts (capture mcp-ping).
func ack() json.RawMessage {
	return json.RawMessage(`{"jsonrpc":"2.0","id":null,"result":{}}`)
}

func resultResponse(id json.RawMessage, result any) json.RawMessage {
	return marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", idOrNull(id), result})
}

func errorResponse(id json.RawMessage, code int, msg string) json.RawMessage {
	return marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", idOrNull(id), struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
}

func idOrNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return json.RawMessage("null")
	}
	return id
}

// idKey is an id in a form that compares equal however it was spaced.
func idKey(id json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, id) != nil {
		return string(id)
	}
	return buf.String()
}

func marshal(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("mcphost: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
