package mcphost

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

func toolServer(cmd string) *ToolServer {
	return &ToolServer{
		Name: "agentjq", Version: "test",
		Tools:   []Tool{{Name: "t", Command: cmd, Description: "a test tool"}},
		Env:     []string{"PATH=" + os.Getenv("PATH")},
		Timeout: 5 * time.Second,
	}
}

func call(t *testing.T, s *ToolServer, ctx context.Context, id, args string) string {
	t.Helper()
	return string(s.Handle(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"t","arguments":`+args+`,"_meta":{"claudecode/toolUseId":"toolu_9","progressToken":2}}}`)))
}

func TestToolServerProtocol(t *testing.T) {
	s := toolServer("true")
	s.Tools = append(s.Tools, Tool{Name: "u", Command: "true", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)})
	cases := []struct{ in, want string }{
		{`{"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}},"jsonrpc":"2.0","id":0}`,
			`{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"tools":{"listChanged":false}},"protocolVersion":"2025-11-25","serverInfo":{"name":"agentjq","version":"test"}}}`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":null,"result":{}}`},
		{`{"method":"tools/list","jsonrpc":"2.0","id":1}`,
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","description":"a test tool","inputSchema":{"type":"object","additionalProperties":true}},{"name":"u","description":"Runs a shell command hosted by agentjq; the arguments reach it as JSON on stdin.","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}]}}`},
		{`{"jsonrpc":"2.0","id":"p","method":"ping"}`, `{"jsonrpc":"2.0","id":"p","result":{}}`},
		{`{"jsonrpc":"2.0","id":7,"method":"resources/list"}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"agentjq: method not supported: resources/list"}}`},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope"}}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"agentjq: no tool named \"nope\""}}`},
		{`not json`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"agentjq: unreadable JSON-RPC message: invalid character 'o' in literal null (expecting 'u')"}}`},
	}
	for _, c := range cases {
		if got := string(s.Handle(context.Background(), json.RawMessage(c.in))); got != c.want {
			t.Errorf("%s\n got  %s\n want %s", c.in, got, c.want)
		}
	}
}

func TestToolCall(t *testing.T) {
	livetest.SkipShort(t, "runs tool commands")
	cases := []struct{ name, cmd, args, want string }{
		{"stdout is the text", `echo "hello $AGENTJQ_ARG_WHO"`, `{"who":"bob"}`,
			`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hello bob"}],"isError":false}}`},
		{"arguments on stdin", `cat`, `{"who":"bob","n":[1,2]}`,
			`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{\"who\":\"bob\",\"n\":[1,2]}"}],"isError":false}}`},
		{"no arguments is an empty object", `cat`, `null`,
			`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"{}"}],"isError":false}}`},
		{"tool and tool use id", `echo "$AGENTJQ_TOOL $AGENTJQ_TOOL_USE_ID"`, `{}`,
			`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"t toolu_9"}],"isError":false}}`},
		{"failure carries stderr", `echo partial; echo 'disk full' >&2; exit 4`, `{}`,
			`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"disk full"}],"isError":true}}`},
		{"failure without stderr", `exit 5`, `{}`,
			`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"the tool command exited with status 5"}],"isError":true}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := call(t, toolServer(c.cmd), context.Background(), "3", c.args); got != c.want {
				t.Errorf("\n got  %s\n want %s", got, c.want)
			}
		})
	}
}

func TestToolTimeout(t *testing.T) {
	livetest.SkipShort(t, "runs tool commands")
	s := toolServer("sleep 30")
	s.Timeout = 300 * time.Millisecond
	start := time.Now()
	got := call(t, s, context.Background(), "4", `{}`)
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("took %s", el)
	}
	if want := `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"agentjq: the tool command did not finish within 300ms and was killed"}],"isError":true}}`; got != want {
		t.Errorf("\n got  %s\n want %s", got, want)
	}
}

// callStarted waits until s runs one call; false after 5 s without.
func callStarted(s *ToolServer) bool {
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		n := len(s.calls)
		s.mu.Unlock()
		if n == 1 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestToolCancelledByNotification(t *testing.T) {
	livetest.SkipShort(t, "runs tool commands")
	s := toolServer("sleep 30")
	done := make(chan string, 1)
	go func() { done <- call(t, s, context.Background(), `"c1"`, `{}`) }()
	if !callStarted(s) {
		t.Fatal("the call never started")
	}
	if ack := s.Handle(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"user"}}`)); string(ack) != `{"jsonrpc":"2.0","id":null,"result":{}}` {
		t.Errorf("ack %s", ack)
	}
	select {
	case got := <-done:
		if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "cancelled") {
			t.Errorf("got %s", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call did not end")
	}
}

func TestToolCancelledByContext(t *testing.T) {
	livetest.SkipShort(t, "runs tool commands")
	s := toolServer("sleep 30")
	ctx, cancel := context.WithCancel(context.Background())
	// Withdrawn once the tool command runs.
	started := make(chan bool, 1)
	go func() { started <- callStarted(s); cancel() }()
	start := time.Now()
	got := call(t, s, ctx, "5", `{}`)
	if !<-started {
		t.Error("the call never started")
	}
	if time.Since(start) > 5*time.Second || !strings.Contains(got, "cancelled") {
		t.Errorf("got %s after %s", got, time.Since(start))
	}
}

func TestArgEnv(t *testing.T) {
	got := ArgEnv(json.RawMessage(`{"file_path":"a b.go","n":12345678901234567890,"ok":true,"obj":{"x":1},"list":[1],"nil":null,"dash-name":"x","nul":"a\u0000b"}`))
	want := []string{"AGENTJQ_ARG_DASH_NAME=x", "AGENTJQ_ARG_FILE_PATH=a b.go", "AGENTJQ_ARG_N=12345678901234567890", "AGENTJQ_ARG_OK=true"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q", got)
	}
	if ArgEnv(json.RawMessage(`[1]`)) != nil {
		t.Error("non-object")
	}
}

func TestArgNameCollisions(t *testing.T) {
	for _, args := range []string{`{"file":"a","FILE":"b"}`, `{"a-b":1,"a_b":2}`, `{"x":1,"x":2}`, `{"é":1,"__":2}`} {
		if err := CheckArgNames(json.RawMessage(args)); err == nil {
			t.Errorf("%s: accepted", args)
		}
	}
	if err := CheckArgNames(json.RawMessage(`{"file":"a","file_path":"b","n":{"file":1,"FILE":2}}`)); err != nil {
		t.Errorf("distinct names: %v", err)
	}
	dir := t.TempDir()
	p := dir + "/s.json"
	os.WriteFile(p, []byte(`{"type":"object","properties":{"city":{},"CITY":{}}}`), 0o644)
	if _, err := ReadSchema(p); err == nil || !strings.Contains(err.Error(), "AGENTJQ_ARG_CITY") {
		t.Errorf("colliding schema: %v", err)
	}
}

func TestReadSchema(t *testing.T) {
	dir := t.TempDir()
	good, bad := dir+"/good.json", dir+"/bad.json"
	os.WriteFile(good, []byte("{\n  \"type\": \"object\"\n}\n"), 0o644)
	os.WriteFile(bad, []byte(`[1]`), 0o644)
	if s, err := ReadSchema(good); err != nil || string(s) != `{"type":"object"}` {
		t.Errorf("%s %v", s, err)
	}
	if _, err := ReadSchema(bad); err == nil {
		t.Error("array accepted as a schema")
	}
	if _, err := ReadSchema(dir + "/none.json"); err == nil {
		t.Error("missing file accepted")
	}
}

func TestHostRouting(t *testing.T) {
	var h Host
	if err := h.Add("agentjq", toolServer("true")); err != nil {
		t.Fatal(err)
	}
	if h.Add("agentjq", toolServer("true")) == nil || h.Add("bad name", toolServer("true")) == nil {
		t.Error("duplicate or bad name accepted")
	}
	got, err := h.Handle(context.Background(), "r1", json.RawMessage(`{"subtype":"mcp_message","server_name":"other","message":{"jsonrpc":"2.0","id":4,"method":"tools/list"}}`))
	b, _ := json.Marshal(got)
	if err != nil || string(b) != `{"mcp_response":{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"agentjq hosts no MCP server named \"other\""}}}` {
		t.Errorf("%s %v", b, err)
	}
	got, _ = h.Handle(context.Background(), "r2", json.RawMessage(`{"subtype":"mcp_message","server_name":"agentjq","message":{"jsonrpc":"2.0","id":5,"method":"ping"}}`))
	b, _ = json.Marshal(got)
	if string(b) != `{"mcp_response":{"jsonrpc":"2.0","id":5,"result":{}}}` {
		t.Errorf("%s", b)
	}
	if !slices.Equal(h.Names(), []string{"agentjq"}) {
		t.Errorf("names %v", h.Names())
	}
}
