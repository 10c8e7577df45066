package acp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

func mapLines(lines ...string) []Update {
	m := NewMapper()
	var ups []Update
	for _, l := range lines {
		ups = append(ups, m.Line(protocol.DirOut, []byte(l)).Updates...)
	}
	return ups
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestMapperStreamsOnceAndFallsBack(t *testing.T) {
	// Deltas stream; the whole block that follows is not sent again.
	ups := mapLines(
		`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1"}}}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}}`,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Hi"}]}}`,
		// Without partial messages (an older recording) the block is the chunk.
		`{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"Whole"}]}}`,
	)
	want := `[{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}},{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hi"}},{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Whole"}}]`
	if got := js(ups); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestMapperToolCalls(t *testing.T) {
	ups := mapLines(
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"/p/a.go","old_string":"x","new_string":"y"}}]}}`,
		`{"type":"agentjq","subtype":"decision","tool":"Edit","tool_use_id":"t1","behavior":"allow","decided_by":"rules"}`,
		`{"type":"agentjq","subtype":"decision","tool":"Edit","tool_use_id":"t1","behavior":"allow","decided_by":"rules"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`,
		`{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"false"}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","is_error":true,"content":[{"type":"text","text":"exit 1"}]}]}}`,
	)
	want := []string{
		`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Edit /p/a.go","kind":"edit","status":"pending","locations":[{"path":"/p/a.go"}],"rawInput":{"file_path":"/p/a.go","old_string":"x","new_string":"y"},"content":[{"type":"diff","path":"/p/a.go","oldText":"x","newText":"y"}]}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"in_progress"}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"diff","path":"/p/a.go","oldText":"x","newText":"y"},{"type":"content","content":{"type":"text","text":"ok"}}]}`,
		"{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"t2\",\"title\":\"`false`\",\"kind\":\"execute\",\"status\":\"pending\",\"rawInput\":{\"command\":\"false\"}}",
		`{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"failed","content":[{"type":"content","content":{"type":"text","text":"exit 1"}}]}`,
	}
	if len(ups) != len(want) {
		t.Fatalf("%d updates, want %d: %s", len(ups), len(want), js(ups))
	}
	for i := range want {
		if got := js(ups[i]); got != want[i] {
			t.Errorf("update %d:\ngot  %s\nwant %s", i, got, want[i])
		}
	}
}

func TestMapperPlanAndCommands(t *testing.T) {
	ups := mapLines(
		`{"type":"system","subtype":"init","session_id":"s","permissionMode":"default","slash_commands":["review"]}`,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"TodoWrite","input":{"todos":[{"content":"a","status":"in_progress","activeForm":"A"},{"content":"b","status":"weird"}]}}]}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}`,
		`{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"TodoWrite","input":{"todos":[]}}]}}`,
	)
	want := `[{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"review","description":"/review"}]},{"sessionUpdate":"plan","entries":[{"content":"a","priority":"medium","status":"in_progress"},{"content":"b","priority":"medium","status":"pending"}]},{"sessionUpdate":"plan","entries":[]}]`
	if got := js(ups); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestStopReason(t *testing.T) {
	for _, c := range []struct {
		line      string
		cancelled bool
		want, err string
	}{
		{`{"subtype":"success","stop_reason":"end_turn"}`, false, StopEndTurn, ""},
		{`{"subtype":"success","stop_reason":"max_tokens"}`, false, StopMaxTokens, ""},
		{`{"subtype":"success","stop_reason":"refusal"}`, false, StopRefusal, ""},
		{`{"subtype":"error_max_turns"}`, false, StopMaxTurns, ""},
		{`{"subtype":"error_during_execution"}`, true, StopCancelled, ""},
		{`{"subtype":"success","is_error":true,"result":"API Error: 400 scripted bad request"}`, false, "", "scripted bad request"},
		{`{"subtype":"error_during_execution","errors":["boom"]}`, false, "", "boom"},
	} {
		var r Result
		json.Unmarshal([]byte(c.line), &r)
		got, err := StopReason(&r, c.cancelled)
		if got != c.want || (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s cancelled=%v: %q %v, want %q %q", c.line, c.cancelled, got, err, c.want, c.err)
		}
	}
}

// BenchmarkMapDelta is the mapper's share of a text delta's way.
func BenchmarkMapDelta(b *testing.B) {
	m := NewMapper()
	line := []byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello there"}},"session_id":"s","parent_tool_use_id":null,"uuid":"u"}`)
	b.ReportAllocs()
	for range b.N {
		u := m.Line(protocol.DirOut, line).Updates
		json.Marshal(sessionNotification{SessionID: "s", Update: u[0]})
	}
}

// TestMapperSandboxBlock: what the sandbox stopped a call from doing is
// shown with the call's result.
func TestMapperSandboxBlock(t *testing.T) {
	ups := mapLines(
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"make"}}]}}`,
		`{"type":"agentjq","subtype":"sandbox","tool_use_id":"t1","tool":"Bash","blocked":[{"kind":"write","path":"/p/.git/hooks/pre-commit"}]}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"Read-only file system"}]}}`,
	)
	last := js(ups[len(ups)-1])
	if !strings.Contains(last, "Blocked by the sandbox: write /p/.git/hooks/pre-commit") || !strings.Contains(last, `"status":"failed"`) {
		t.Errorf("the result's update: %s", last)
	}
}

// TestMapperCommands: the answer to initialize describes the commands
// (hints as a string or a list); the init line's names reuse them and
// are not sent again when they are the same.
func TestMapperCommands(t *testing.T) {
	ups := mapLines(
		`{"type":"control_response","response":{"subtype":"success","request_id":"agentjq-init-1","response":{"commands":[{"name":"review","description":"Review the diff","argumentHint":"BRANCH"},{"name":"fix","description":"","argumentHint":["FILE","LINE"]}]}}}`,
		`{"type":"system","subtype":"init","slash_commands":["review","fix"]}`,
		`{"type":"system","subtype":"init","slash_commands":["review","fix","new"]}`,
	)
	want := `[{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"review","description":"Review the diff","input":{"hint":"BRANCH"}},{"name":"fix","description":"/fix","input":{"hint":"FILE LINE"}}]},` +
		`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"review","description":"Review the diff","input":{"hint":"BRANCH"}},{"name":"fix","description":"/fix","input":{"hint":"FILE LINE"}},{"name":"new","description":"/new"}]}]`
	if got := js(ups); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestMapperUsage: usage_update at a result: the last call's context
// (input, cache and output), the smallest context window, the cost; a
// result without usage sends none (never a null).
func TestMapperUsage(t *testing.T) {
	ups := mapLines(
		`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1","usage":{"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":5,"output_tokens":1}}}}`,
		`{"type":"stream_event","event":{"type":"message_delta","usage":{"output_tokens":7}}}`,
		`{"type":"result","subtype":"success","usage":{"input_tokens":99,"output_tokens":99},"total_cost_usd":0.25,"modelUsage":{"a":{"contextWindow":1000000},"b":{"contextWindow":200000}}}`,
	)
	if want := `[{"sessionUpdate":"usage_update","used":122,"size":200000,"cost":{"amount":0.25,"currency":"USD"}}]`; js(ups) != want {
		t.Errorf("got  %s\nwant %s", js(ups), want)
	}
	ups = mapLines(`{"type":"result","subtype":"success","usage":{"input_tokens":3,"output_tokens":4}}`)
	if want := `[{"sessionUpdate":"usage_update","used":7,"size":200000}]`; js(ups) != want {
		t.Errorf("without stream events: got %s\nwant %s", js(ups), want)
	}
	if ups := mapLines(`{"type":"result","subtype":"success"}`); len(ups) != 0 {
		t.Errorf("a result without usage: %s", js(ups))
	}
}

// TestMapperImageTurn: a user turn's image is replayed as an image block.
func TestMapperImageTurn(t *testing.T) {
	m := NewMapper()
	ups := m.Line(protocol.DirIn, []byte(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}}`)).Updates
	want := `[{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"see"}},{"sessionUpdate":"user_message_chunk","content":{"type":"image","data":"AAAA","mimeType":"image/png"}}]`
	if got := js(ups); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
