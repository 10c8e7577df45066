package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/bridge"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/jsonrpc"
)

// fakeAgentEnv makes this test binary a stand-in for claude (fakeAgent):
// no real CLI can be made to stream deltas on a schedule or to send the
// same permission request twice.
const fakeAgentEnv = "ACP_TEST_FAKE_AGENT"

func TestMain(m *testing.M) {
	if os.Getenv(fakeAgentEnv) != "" {
		fakeAgent()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeAgent speaks claude's stream-json: for a turn "DELTAS n" it streams
// n text deltas 1ms apart, each carrying the time it was written (unix
// ns); for "PERM" it asks can_use_tool for the same Bash call twice; then
// a result. It ends at EOF on stdin.
func fakeAgent() {
	out := bufio.NewWriter(os.Stdout)
	emit := func(v string) { out.WriteString(v + "\n"); out.Flush() }
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	emit(`{"type":"system","subtype":"init","session_id":"s1","permissionMode":"default","slash_commands":["review"]}`)
	for in.Scan() {
		var l struct {
			Type    string `json:"type"`
			Message struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"message"`
		}
		json.Unmarshal(in.Bytes(), &l)
		if l.Type != "user" || len(l.Message.Content) == 0 {
			continue
		}
		text := l.Message.Content[0].Text
		switch {
		case strings.HasPrefix(text, "DELTAS "):
			n, _ := strconv.Atoi(strings.TrimPrefix(text, "DELTAS "))
			emit(`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1"}}}`)
			for range n {
				emit(fmt.Sprintf(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%d"}}}`, time.Now().UnixNano()))
				time.Sleep(time.Millisecond)
			}
			emit(`{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"all"}]}}`)
		case text == "PERM":
			for i := range 2 {
				emit(fmt.Sprintf(`{"type":"control_request","request_id":"p%d","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"echo same"},"tool_use_id":"t%d"}}`, i, i))
				for in.Scan() {
					if strings.Contains(in.Text(), `"control_response"`) {
						emit(fmt.Sprintf(`{"type":"agentjq_test","answer":%s}`, in.Text()))
						break
					}
				}
			}
		}
		emit(`{"type":"result","subtype":"success","is_error":false,"stop_reason":"end_turn","result":"done"}`)
	}
}

// client is a minimal ACP client over jsonrpc.Conn, for Go tests.
type client struct {
	conn    *jsonrpc.Conn
	mu      sync.Mutex
	updates []Update
	stamps  []time.Duration // delta written → chunk received
	asked   int
	answer  string
	done    chan struct{}
	closeIn func() error
}

func startAgent(t testing.TB) *client {
	t.Helper()
	cToA, aIn := io.Pipe()
	aOut, cFromA := io.Pipe()
	start := func(cfg SessionConfig) (bridge.Options, func() error, error) {
		chain, err := approve.NewChain(approve.ChainOptions{Cwd: cfg.Cwd, Person: cfg.Person})
		if err != nil {
			return bridge.Options{}, nil, err
		}
		return bridge.Options{Profile: bridge.Profiles["claude"], Path: os.Args[0], Dir: cfg.Cwd,
			Env: append(os.Environ(), fakeAgentEnv+"=1"), Approver: chain, Stderr: io.Discard, Grace: 2 * time.Second}, chain.Close, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{answer: AllowAlways, done: make(chan struct{}), closeIn: aIn.Close}
	go func() {
		defer close(c.done)
		Serve(ctx, cToA, cFromA, cToA, Options{Start: start, Version: "test"})
		cFromA.Close()
	}()
	c.conn = jsonrpc.NewConn(jsonrpc.NewLineStream(aOut, aIn, aIn), jsonrpc.Options{Handler: c.handle})
	go c.conn.Run(ctx)
	t.Cleanup(func() {
		aIn.Close()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Error("the agent did not end within 10s of its stdin closing")
		}
		cancel()
	})
	var init initializeResponse
	if err := c.conn.Call(ctx, "initialize", map[string]any{"protocolVersion": 1}, &init); err != nil || init.ProtocolVersion != 1 {
		t.Fatalf("initialize: %+v %v", init, err)
	}
	return c
}

func (c *client) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case "session/update":
		now := time.Now()
		var n struct {
			Update Update `json:"update"`
		}
		json.Unmarshal(req.Params, &n)
		c.mu.Lock()
		defer c.mu.Unlock()
		c.updates = append(c.updates, n.Update)
		if n.Update.SessionUpdate == "agent_message_chunk" {
			if ns, err := strconv.ParseInt(n.Update.Content.Text, 10, 64); err == nil {
				c.stamps = append(c.stamps, now.Sub(time.Unix(0, ns)))
			}
		}
		return nil, nil
	case "session/request_permission":
		c.mu.Lock()
		c.asked++
		c.mu.Unlock()
		return map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": c.answer}}, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: req.Method}
}

func (c *client) newSession(t testing.TB) string {
	t.Helper()
	var r newSessionResponse
	if err := c.conn.Call(context.Background(), "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}}, &r); err != nil {
		t.Fatal(err)
	}
	return r.SessionID
}

func (c *client) prompt(t testing.TB, sid, text string) string {
	t.Helper()
	var r promptResponse
	err := c.conn.Call(context.Background(), "session/prompt", map[string]any{"sessionId": sid,
		"prompt": []map[string]string{{"type": "text", "text": text}}}, &r)
	if err != nil {
		t.Fatal(err)
	}
	return r.StopReason
}

// TestDeltaChunks: each text delta the agent writes reaches the client
// as its own agent_message_chunk, once. How fast (target: under 1 ms
// median) is BenchmarkDeltaToChunk: a benchmark figure, not a test.
func TestDeltaChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs this test binary as the agent")
	}
	c := startAgent(t)
	sid := c.newSession(t)
	if got := c.prompt(t, sid, "DELTAS 300"); got != StopEndTurn {
		t.Fatalf("stopReason %q", got)
	}
	c.settle(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	chunks := 0
	for _, u := range c.updates {
		if u.SessionUpdate == "agent_message_chunk" {
			chunks++
		}
	}
	if chunks != 300 || len(c.stamps) != 300 {
		t.Fatalf("%d chunks (%d of them deltas), want 300 (the whole assistant block must not be sent again)", chunks, len(c.stamps))
	}
}

// settle ends the agent's input and waits until the client has taken
// every message the agent wrote: a response is delivered as it arrives,
// so a prompt's answer can come back while the session/update
// notifications before it still wait for the client's handler.
func (c *client) settle(t testing.TB) {
	t.Helper()
	c.closeIn()
	for _, done := range []<-chan struct{}{c.done, c.conn.Done()} {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the agent and client did not end within 30s of the agent's stdin closing")
		}
	}
}

// BenchmarkDeltaToChunk reports the median time from an agent's text
// delta to the client's agent_message_chunk (median-µs).
func BenchmarkDeltaToChunk(b *testing.B) {
	c := startAgent(b)
	sid := c.newSession(b)
	b.ResetTimer()
	for range b.N {
		c.prompt(b, sid, "DELTAS 200")
	}
	b.StopTimer()
	c.mu.Lock()
	defer c.mu.Unlock()
	b.ReportMetric(float64(median(c.stamps).Microseconds()), "median-µs")
	b.ReportMetric(float64(percentile(c.stamps, 0.9).Microseconds()), "p90-µs")
}

func median(d []time.Duration) time.Duration { return percentile(d, 0.5) }

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	return s[int(float64(len(s)-1)*p)]
}

// TestAlwaysIsASessionRule: allow_always answers the same call again
// without asking the editor; the policy chain still comes first.
func TestAlwaysIsASessionRule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs this test binary as the agent")
	}
	c := startAgent(t)
	sid := c.newSession(t)
	if got := c.prompt(t, sid, "PERM"); got != StopEndTurn {
		t.Fatalf("stopReason %q", got)
	}
	c.settle(t)
	statusesOf := func() []string {
		c.mu.Lock()
		defer c.mu.Unlock()
		var st []string
		for _, u := range c.updates {
			if u.SessionUpdate == "tool_call_update" {
				st = append(st, u.ToolCallID+":"+u.Status)
			}
		}
		return st
	}
	statuses := statusesOf()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.asked != 1 {
		t.Errorf("the editor was asked %d times, want once (allow_always)", c.asked)
	}
	if strings.Join(statuses, " ") != "t0:in_progress t1:in_progress" {
		t.Errorf("tool_call_update %v, want both calls in progress (allowed)", statuses)
	}
}

func TestRuleKeyIsNarrow(t *testing.T) {
	req := func(tool, input string) *approve.Request {
		return &approve.Request{CanUseTool: protocol.CanUseTool{ToolName: tool, Input: json.RawMessage(input)}}
	}
	same := [][2]*approve.Request{
		{req("Bash", `{"command":"go test ./..."}`), req("Bash", `{"command":"go test ./...","description":"x"}`)},
		{req("Write", `{"file_path":"/p/a.txt","content":"1"}`), req("Write", `{"file_path":"/p/a.txt","content":"2"}`)},
	}
	for _, p := range same {
		if ruleKey(p[0]) != ruleKey(p[1]) {
			t.Errorf("%s and %s should share an always rule", p[0].Input, p[1].Input)
		}
	}
	differ := [][2]*approve.Request{
		{req("Bash", `{"command":"go test ./..."}`), req("Bash", `{"command":"go test ./... ; rm -rf ~"}`)},
		{req("Write", `{"file_path":"/p/a.txt"}`), req("Write", `{"file_path":"/p/b.txt"}`)},
		{req("Write", `{"file_path":"/p/a.txt"}`), req("Edit", `{"file_path":"/p/a.txt"}`)},
		{req("WebFetch", `{"url":"https://a"}`), req("WebFetch", `{"url":"https://b"}`)},
		// Through a symlink, link/.. need not be /p.
		{req("Write", `{"file_path":"/p/a.txt"}`), req("Write", `{"file_path":"/p/link/../a.txt"}`)},
	}
	for _, p := range differ {
		if ruleKey(p[0]) == ruleKey(p[1]) {
			t.Errorf("an always answer to %s %s must not cover %s %s", p[0].ToolName, p[0].Input, p[1].ToolName, p[1].Input)
		}
	}
}

// TestSessionDeniesEverySpelling: an "always reject" of a file covers the
// file however its path is spelled; other files and tools stay unruled.
func TestSessionDeniesEverySpelling(t *testing.T) {
	req := func(tool, input string) *approve.Request {
		return &approve.Request{CanUseTool: protocol.CanUseTool{ToolName: tool, Input: json.RawMessage(input)}}
	}
	s := newSession(&Agent{}, "s1")
	s.rules[ruleKey(req("Write", `{"file_path":"/p/a.txt"}`))] = protocol.Deny
	s.denied[denyKey(req("Write", `{"file_path":"/p/a.txt"}`))] = true
	for in, want := range map[string]bool{
		`{"file_path":"/p/a.txt","content":"x"}`: true,
		`{"file_path":"/p/./a.txt"}`:             true,
		`{"file_path":"/p//a.txt"}`:              true,
		`{"file_path":"/p/b.txt"}`:               false,
	} {
		v, got := s.SessionDenies(req("Write", in))
		if got != want || got && (v.Behavior != protocol.Deny || v.Message == "") {
			t.Errorf("Write %s: denied %v (%+v), want %v", in, got, v, want)
		}
	}
	if _, got := s.SessionDenies(req("Edit", `{"file_path":"/p/a.txt"}`)); got {
		t.Errorf("an always reject of Write covers Edit")
	}
	s.denied[denyKey(req("WebFetch", `{"url":"https://a","prompt":"p"}`))] = true
	for in, want := range map[string]bool{
		`{ "prompt": "p", "url": "https://a" }`: true,
		`{"url":"https://a","prompt":"q"}`:      false,
	} {
		if _, got := s.SessionDenies(req("WebFetch", in)); got != want {
			t.Errorf("WebFetch %s: denied %v, want %v", in, got, want)
		}
	}
}

// TestEditorGoneMidTurn: the editor closes the connection while a turn
// streams; the turn is interrupted and the session (its agent process
// included: bridge.Run returns only once the agent has exited) ends.
func TestEditorGoneMidTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs this test binary as the agent")
	}
	c := startAgent(t)
	sid := c.newSession(t)
	go c.conn.Call(context.Background(), "session/prompt", map[string]any{"sessionId": sid,
		"prompt": []map[string]string{{"type": "text", "text": "DELTAS 100000"}}}, nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		n := len(c.stamps)
		c.mu.Unlock()
		if n > 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the turn never streamed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	c.closeIn()
	select {
	case <-c.done:
		t.Logf("ended %s after the editor left", time.Since(start))
	case <-time.After(15 * time.Second):
		t.Fatal("the session did not end within 15s of the editor leaving")
	}
}

// TestProtocolErrors: unknown methods, unknown sessions, a second prompt
// while one runs and unsupported content are clean error responses.
func TestProtocolErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("runs this test binary as the agent")
	}
	c := startAgent(t)
	ctx := context.Background()
	code := func(err error) int {
		if e, ok := err.(*jsonrpc.Error); ok {
			return e.Code
		}
		return 0
	}
	if err := c.conn.Call(ctx, "session/list", map[string]any{}, nil); code(err) != jsonrpc.CodeMethodNotFound {
		t.Errorf("session/list: %v, want method not found (not advertised)", err)
	}
	if err := c.conn.Call(ctx, "session/load", map[string]any{"sessionId": "x", "cwd": "/", "mcpServers": []any{}}, nil); code(err) != jsonrpc.CodeMethodNotFound {
		t.Errorf("session/load without --record-dir: %v", err)
	}
	if err := c.conn.Call(ctx, "session/prompt", map[string]any{"sessionId": "nope", "prompt": []any{}}, nil); code(err) != codeNotFound {
		t.Errorf("prompt to an unknown session: %v", err)
	}
	if err := c.conn.Call(ctx, "session/new", map[string]any{"cwd": "relative", "mcpServers": []any{}}, nil); code(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("a relative cwd: %v", err)
	}
	sid := c.newSession(t)
	audio := []map[string]string{{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}}
	if err := c.conn.Call(ctx, "session/prompt", map[string]any{"sessionId": sid, "prompt": audio}, nil); code(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("an audio prompt (not offered): %v", err)
	}
	img := []map[string]string{{"type": "image", "mimeType": "image/png"}}
	if err := c.conn.Call(ctx, "session/prompt", map[string]any{"sessionId": sid, "prompt": img}, nil); code(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("an image without its data: %v", err)
	}
	first := make(chan error, 1)
	go func() {
		first <- c.conn.Call(ctx, "session/prompt", map[string]any{"sessionId": sid,
			"prompt": []map[string]string{{"type": "text", "text": "DELTAS 300"}}}, nil)
	}()
	for deadline := time.Now().Add(5 * time.Second); ; {
		c.mu.Lock()
		n := len(c.stamps)
		c.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	err := c.conn.Call(ctx, "session/prompt", map[string]any{"sessionId": sid,
		"prompt": []map[string]string{{"type": "text", "text": "again"}}}, nil)
	if code(err) != jsonrpc.CodeInvalidRequest {
		t.Errorf("a second prompt while one runs: %v", err)
	}
	if err := <-first; err != nil {
		t.Errorf("the first prompt: %v", err)
	}
}
