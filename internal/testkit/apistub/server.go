// Package apistub is a scripted stand-in for the Anthropic Messages API, so
// that tests can drive the real `claude` CLI with no network. Point the CLI
// at it with ANTHROPIC_BASE_URL=URL() (internal/testkit/livetest builds the rest of
// the environment).
//
// The model's replies come from words in the user's prompt (see Reply):
//
//	HELLO       text "Hello from the scripted model."
//	WRITE [n]   text + Write <cwd>/n.txt "n\n" (default banana), then "The file is written."
//	BIGWRITE [N] Write <cwd>/big.txt of N MiB of "x" (default 3), then "Big file written."
//	BASH        Bash "echo hello-from-bash" (read-only, no prompt), then "Bash ran."
//	RMRF        Bash "rm -rf /tmp/definitely-not-here", then "Tried to remove."
//	SLEEP       Bash "sleep 20", then "Slept."
//	TOUCH       Bash "touch <cwd>/touched.txt", then "Touched."
//	CHAIN       Bash "echo one", Write <cwd>/two.txt, Read it, then "Chain complete."
//	LOOP        Bash "echo loop-N" every round (50 at most), for --max-turns
//	ASK         AskUserQuestion cats/dogs, then "Noted your choice."
//	ASKMULTI    AskUserQuestion multi-select, then "Noted your choices: <result>"
//	THINK       thinking block with signature + "Thought it through."
//	FAILnnn     HTTP nnn with an Anthropic error body ("scripted bad request")
//	PING        mcp__probe__ping {"note":"hi"}, then "Ping answered."
//	AGENT       Task subagent whose prompt is "HELLO from the parent", then "The helper finished."
//	CACHED      "Hello from the cache." with cache writes (100 5-minute, 50 1-hour) and 200 cache reads in its usage
//
// and lines "TOOL <Name> <json>", "SAY <text>", "DELAY <duration>" script
// anything else. Every request is logged so that a test can assert what the
// model was sent, for example that a deny message reached it as an is_error
// tool_result (Server.ToolResults).
package apistub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running stand-in. It is safe for concurrent use.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}

	// ctx is cancelled by Close so that scripted delays end at once.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	requests []Request
	nextMsg  int
	closed   bool
}

// Request is one logged HTTP request, with its body kept byte for byte.
type Request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	Time   time.Time
	// Status is the HTTP status the stand-in answered with.
	Status int
}

// New starts a stand-in on a free port of 127.0.0.1.
func New() (*Server, error) { return Listen("127.0.0.1:0") }

// Listen starts a stand-in on addr (host:port). Only loopback addresses
// make sense: the CLI and the tests run on this machine.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("apistub: %w", err)
	}
	s := &Server{ln: ln, done: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serve),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Start starts a stand-in for a test and closes it when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// URL is the base URL to give the CLI as ANTHROPIC_BASE_URL.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server, ending open streams and scripted delays. It waits
// at most a few seconds for handlers to return.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	select {
	case <-s.done:
	case <-ctx.Done():
	}
	return err
}

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// MessagesRequests returns the POST /v1/messages requests received so far
// (count_tokens and the other endpoints left out), in order.
func (s *Server) MessagesRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/messages" {
			out = append(out, r)
		}
	}
	return out
}

// ToolResults returns every tool_result block the model was sent, once
// each (keyed by tool_use_id), in the order they first appeared.
func (s *Server) ToolResults() []ToolResult {
	seen := map[string]bool{}
	var out []ToolResult
	for _, r := range s.MessagesRequests() {
		body, err := r.Messages()
		if err != nil {
			continue
		}
		for _, m := range body.Messages {
			for _, b := range m.Content {
				if b.Type != "tool_result" || seen[b.ToolUseID] {
					continue
				}
				seen[b.ToolUseID] = true
				out = append(out, b.toolResult())
			}
		}
	}
	return out
}

func (s *Server) log(r Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
	return len(s.requests) - 1
}

func (s *Server) setStatus(i, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[i].Status = status
}

// messageID numbers the model's messages per server: msg_000, msg_001...
// as in the captures.
func (s *Server) messageID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprintf("msg_%03d", s.nextMsg)
	s.nextMsg++
	return id
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<30))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	i := s.log(Request{
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.RawQuery,
		Header: r.Header.Clone(),
		Body:   body,
		Time:   time.Now(),
	})
	status := s.route(w, r, body)
	s.setStatus(i, status)
}

func (s *Server) route(w http.ResponseWriter, r *http.Request, body []byte) int {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		return s.messages(w, r, body)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		// A rough count is all the CLI uses it for (context size).
		return writeJSON(w, http.StatusOK, map[string]any{"input_tokens": len(body)/4 + 1})
	case r.Method == http.MethodHead || (r.Method == http.MethodGet && r.URL.Path == "/"):
		w.WriteHeader(http.StatusOK)
		return http.StatusOK
	default:
		return writeAPIError(w, http.StatusNotFound, "not_found_error", "apistub: no route for "+r.Method+" "+r.URL.Path)
	}
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request, body []byte) int {
	var req MessagesBody
	if err := json.Unmarshal(body, &req); err != nil {
		return writeAPIError(w, http.StatusBadRequest, "invalid_request_error", "apistub: bad JSON body: "+err.Error())
	}
	rep := Reply(&req)
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return 499
		case <-s.ctx.Done():
			return 499
		}
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		return writeAPIError(w, rep.Status, rep.ErrorType, rep.ErrorMessage)
	}
	model := req.Model
	if model == "" {
		model = "claude-scripted"
	}
	id := s.messageID()
	if !req.Stream {
		return writeJSON(w, http.StatusOK, fullMessage(id, model, rep))
	}
	writeStream(r.Context(), w, id, model, rep)
	return http.StatusOK
}

func writeJSON(w http.ResponseWriter, status int, v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"type":"error","error":{"type":"api_error","message":"apistub: marshal"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_apistub")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	return status
}

// writeAPIError answers with the Anthropic error body
// {"type":"error","error":{"type":...,"message":...}}.
func writeAPIError(w http.ResponseWriter, status int, typ, msg string) int {
	if typ == "" {
		typ = errorTypeFor(status)
	}
	return writeJSON(w, status, map[string]any{
		"type":  "error",
		"error": map[string]string{"type": typ, "message": msg},
	})
}

func errorTypeFor(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	default:
		return "api_error"
	}
}

// MessagesBody is the part of a Messages API request body the stand-in
// reads. Decode the raw Request.Body for anything else.
type MessagesBody struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	Messages  []Message       `json:"messages"`
	Tools     []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// Message is one conversation message; Content is always a list of blocks
// (a plain string content is decoded as one text block).
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// UnmarshalJSON accepts content as a string or as an array of blocks.
func (m *Message) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	m.Content = nil
	c := bytes.TrimSpace(raw.Content)
	if len(c) == 0 || bytes.Equal(c, []byte("null")) {
		return nil
	}
	if c[0] == '"' {
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return err
		}
		m.Content = []Block{{Type: "text", Text: s}}
		return nil
	}
	return json.Unmarshal(c, &m.Content)
}

// Block is a content block of any type; fields not used by a type stay
// empty.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// ToolResult is a tool_result block as the model received it.
type ToolResult struct {
	ToolUseID string
	IsError   bool
	// Text is the result's content flattened: the string itself, or the
	// text of its text blocks joined with newlines.
	Text string
}

func (b Block) toolResult() ToolResult {
	return ToolResult{ToolUseID: b.ToolUseID, IsError: b.IsError, Text: contentText(b.Content)}
}

func contentText(c json.RawMessage) string {
	c = bytes.TrimSpace(c)
	if len(c) == 0 {
		return ""
	}
	var s string
	if c[0] == '"' && json.Unmarshal(c, &s) == nil {
		return s
	}
	var blocks []Block
	if json.Unmarshal(c, &blocks) != nil {
		return string(c)
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Messages decodes the body of a /v1/messages request.
func (r Request) Messages() (*MessagesBody, error) {
	var b MessagesBody
	if err := json.Unmarshal(r.Body, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// ToolResults returns the tool_result blocks of the request's last message
// (what the model is answering now).
func (r Request) ToolResults() []ToolResult {
	b, err := r.Messages()
	if err != nil || len(b.Messages) == 0 {
		return nil
	}
	var out []ToolResult
	for _, blk := range b.Messages[len(b.Messages)-1].Content {
		if blk.Type == "tool_result" {
			out = append(out, blk.toolResult())
		}
	}
	return out
}

// SystemText is the system prompt flattened to text (a string, or the
// text of its blocks joined with newlines).
func (b *MessagesBody) SystemText() string { return contentText(b.System) }

// ErrNoRequest is returned by WaitRequest when the wait ends first.
var ErrNoRequest = errors.New("apistub: no matching request")

// WaitRequest waits until a logged request satisfies match, polling, and
// returns it; it gives up with ErrNoRequest when ctx ends.
func (s *Server) WaitRequest(ctx context.Context, match func(Request) bool) (Request, error) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		for _, r := range s.Requests() {
			if match(r) {
				return r, nil
			}
		}
		select {
		case <-ctx.Done():
			return Request{}, fmt.Errorf("%w: %v", ErrNoRequest, ctx.Err())
		case <-t.C:
		}
	}
}
