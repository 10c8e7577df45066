package agentlib

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// Each definition against the real captures, with exact expected values.
func TestDefinitionsOnCaptures(t *testing.T) {
	const bananaIn = `{"file_path":"/home/user/project/banana.txt","content":"banana\n"}`
	tests := []struct {
		scenario, program, want string
		slurp                   bool
	}{
		// selectors
		{scenario: "hello", program: `events("assistant") | .message.id`, want: `["msg_000"]`},
		{scenario: "partial", program: `events("system"; "status") | .status`, want: `["requesting"]`},
		{scenario: "multi-turn", program: `is_init`, want: `[true,false,false,true,false,false]`},
		{scenario: "multi-turn", program: `init | .cwd`, want: `["/home/user/project","/home/user/project"]`},
		{scenario: "hello", program: `version`, want: `["2.1.328"]`},
		{scenario: "multi-turn", program: `results | .result_index`, want: `[0,1]`},
		{scenario: "subagent", program: `subagent | assistant_text`, want: `["Hello from the scripted model."]`},
		{scenario: "subagent", program: `[in_subagent] | any`, want: `[false,false,false,false,false,true,false,false,false,false,false,false,false,false]`},
		{scenario: "subagent", program: `main_agent | assistant_text`, want: `["The helper finished.","The helper finished."]`},

		// text
		{scenario: "write-allow", program: `assistant_text`, want: `["I will write the file.","The file is written."]`},
		{scenario: "api-error", program: `assistant_text`, want: `["API Error: 400 scripted bad request"]`},
		{scenario: "thinking", program: `thinking`, want: `["Let me think about it."]`},
		{scenario: "thinking", program: `assistant_text`, want: `["Thought it through."]`},
		{scenario: "partial", program: `text_deltas`, want: `["Hello"," from"," the"," scripted"," model."]`},
		{scenario: "partial-tool", program: `delta_text`, want: `["I"," will"," write"," the"," file.","The"," file"," is"," written."]`},
		{scenario: "replay-user", program: `user_text`, want: `["HELLO replay"]`},
		{scenario: "interrupt", program: `user_text`, want: `["[Request interrupted by user for tool use]"]`},
		{scenario: "mcp-ping", program: `tool_results | .content`, want: `["pong-from-probe"]`},

		// tools
		{scenario: "write-allow", program: `tool_calls`, want: `[{"name":"Write","id":"toolu_w1","input":` + bananaIn + `,"parent":null}]`},
		{scenario: "chain", program: `tool_calls | [.name, .id]`, want: `[["Bash","toolu_c1"],["Write","toolu_c2"],["Read","toolu_c3"]]`},
		{scenario: "chain", program: `tool_calls("Read") | .input.file_path`, want: `["/home/user/project/two.txt"]`},
		{scenario: "partial-tool", program: `tool_calls | .name`, want: `["Write"]`},
		{scenario: "subagent", program: `tool_calls | [.name, .input.subagent_type, .parent]`, want: `[["Task","general-purpose",null]]`},
		{scenario: "chain", program: `tool_results`, want: `[
			{"tool_use_id":"toolu_c1","content":"one","is_error":false,"parent":null},
			{"tool_use_id":"toolu_c2","content":"File created successfully at: /home/user/project/two.txt (file state is current in your context — no need to Read it back)","is_error":false,"parent":null},
			{"tool_use_id":"toolu_c3","content":"1\ttwo\n2\t","is_error":false,"parent":null}]`},
		{scenario: "write-deny", program: `tool_results`, want: `[{"tool_use_id":"toolu_w1","content":"Denied by scripted policy.","is_error":true,"parent":null}]`},
		{scenario: "subagent", program: `tool_results | .content | split("\n")[0]`, want: `["Async agent launched successfully. (This tool result is internal metadata — never quote or paste any part of it, including the agentId below, into a user-facing reply.)"]`},
		{scenario: "chain", program: `tool_calls | key_input`, want: `["echo one","/home/user/project/two.txt","/home/user/project/two.txt"]`},
		{scenario: "ask-answer", program: `tool_calls | key_input`, want: `["Do you prefer cats or dogs?"]`},
		{scenario: "subagent", program: `tool_calls | key_input`, want: `["Say hello"]`},
		{scenario: "mcp-ping", program: `tool_calls | key_input`, want: `["{\"note\":\"hi\"}"]`},
		{scenario: "rmrf-deny", program: `permission_requests | key_input`, want: `["rm -rf /tmp/definitely-not-here"]`},

		// permissions and control
		{scenario: "write-allow", program: `permission_requests | [.request_id, .tool_name, .tool_use_id, .input.file_path]`,
			want: `[["ee25409c-b461-406a-9d17-8717dbd9e419","Write","toolu_w1","/home/user/project/banana.txt"]]`},
		{scenario: "ask-answer", program: `permission_requests | [.tool_name, .requires_user_interaction]`, want: `[["AskUserQuestion",true]]`},
		{scenario: "hello", program: `permission_requests`, want: `[]`},
		{scenario: "mcp-ping", program: `control_requests | .subtype`, want: `["mcp_message","mcp_message","mcp_message","can_use_tool","mcp_message"]`},
		{scenario: "mcp-ping", program: `mcp_messages | .message.method`, want: `["initialize","notifications/initialized","tools/list","tools/call"]`},
		{scenario: "hook-callback", program: `hook_callbacks | [.callback_id, .input.hook_event_name, .input.tool_name]`, want: `[["hook_0","PreToolUse","Bash"]]`},

		// results
		{scenario: "hello", program: `outcome`, want: `["success"]`},
		{scenario: "write-deny", program: `outcome`, want: `["denied"]`},
		{scenario: "write-nostdio", program: `outcome`, want: `["denied"]`},
		{scenario: "api-error", program: `outcome`, want: `["error"]`},
		{scenario: "max-turns", program: `outcome`, want: `["error"]`},
		{scenario: "interrupt", program: `outcome`, want: `["error"]`},
		{scenario: "multi-turn", program: `outcome`, want: `["success","success"]`},
		{scenario: "chain", program: `results | [cost, turns, duration]`, want: `[[0.000752, 4, 772]]`},
		{scenario: "multi-turn", program: `cost`, want: `[0.000188, 0.000376]`},
		{scenario: "hello", program: `usage | [.input_tokens, .output_tokens]`, want: `[[12, 7]]`},
		// usage and cost: a stream's assistant line has the message_start
		// count of output tokens; --include-partial-messages' message_delta
		// the final one, which messages_usage keeps.
		{scenario: "hello", program: `message_usage | [.message_id, .model, .input_tokens, .output_tokens]`, want: `[["msg_000","claude-opus-5-5",12,1]]`},
		{scenario: "partial", program: `message_usage | [.message_id, .output_tokens]`, want: `[["msg_000",1],["msg_000",7]]`},
		{scenario: "partial", program: `[messages_usage(.[] | message_usage)] | map([.message_id, .model, .output_tokens, usage_cost])`, want: `[[["msg_000","claude-opus-5-5",7,0.000188]]]`, slurp: true},
		{scenario: "rmrf-deny", program: `denials`, want: `[{"tool":"Bash","tool_use_id":"toolu_r1","input":{"command":"rm -rf /tmp/definitely-not-here","description":"Remove a folder"}}]`},

		// errors
		{scenario: "api-error", program: `select(is_api_error) | .message.model`, want: `["<synthetic>"]`},
		{scenario: "hello", program: `select(is_api_error)`, want: `[]`},
		{scenario: "api-error", program: `errors`, want: `[
			{"kind":"api_error","message":"API Error: 400 scripted bad request","status":400,"parent":null},
			{"kind":"result","message":"API Error: 400 scripted bad request","subtype":"success","terminal_reason":"api_error"}]`},
		{scenario: "max-turns", program: `errors`, want: `[{"kind":"result","message":"Reached maximum number of turns (1)","subtype":"error_max_turns","terminal_reason":"max_turns"}]`},
		{scenario: "write-nostdio", program: `errors | .kind`, want: `["permission_denied","tool_error"]`},
		{scenario: "write-nostdio", program: `errors | select(.kind == "permission_denied") | [.tool, .tool_use_id]`, want: `[["Write","toolu_w1"]]`},
		{scenario: "interrupt", program: `errors | .kind`, want: `["tool_error","result"]`},
		{scenario: "hello", program: `errors`, want: `[]`},
		{scenario: "write-allow", program: `errors`, want: `[]`},

		// whole stream
		{scenario: "chain", slurp: true, program: `tool_pairs | [.name, .content, .is_error, .denied]`, want: `[
			["Bash","one",false,false],
			["Write","File created successfully at: /home/user/project/two.txt (file state is current in your context — no need to Read it back)",false,false],
			["Read","1\ttwo\n2\t",false,false]]`},
		{scenario: "write-deny", slurp: true, program: `tool_pairs`, want: `[{"name":"Write","id":"toolu_w1","input":` + bananaIn + `,"parent":null,"content":"Denied by scripted policy.","is_error":true,"denied":true}]`},
		{scenario: "interrupt", slurp: true, program: `tool_pairs | [.name, .is_error, .denied]`, want: `[["Bash",true,false]]`},
		{scenario: "subagent", slurp: true, program: `subagents | {parent, description, subagent_type, status, summary, n: (.events | length), text: [.events[] | assistant_text]}`,
			want: `[{"parent":"toolu_t1","description":"Say hello","subagent_type":"general-purpose","status":"completed","summary":"Hello from the scripted model.","n":1,"text":["Hello from the scripted model."]}]`},
		{scenario: "chain", slurp: true, program: `subagents`, want: `[]`},
	}
	for _, tc := range tests {
		name := tc.scenario + " " + tc.program
		t.Run(name, func(t *testing.T) {
			if tc.slurp {
				want(t, slurped(t, tc.scenario, tc.program), tc.want)
			} else {
				want(t, perLine(t, tc.scenario, tc.program), tc.want)
			}
		})
	}
}

// agentjq's own events are not in the captures: build them from the
// protocol package's types, as spawn writes them.
func TestDefinitionsOnAgentjqEvents(t *testing.T) {
	agentExit := 0
	lines := []any{
		protocol.Decision{Type: protocol.TypeAgentjq, Subtype: protocol.EventDecision, RequestID: "r1", Tool: "Write", ToolUseID: "toolu_w1", Behavior: "deny", DecidedBy: protocol.ByRules, Rule: "Write(/etc/**)", Message: "no"},
		protocol.NewWarning(protocol.WarnVersion, "agent 9.9.9 was not checked"),
		protocol.Exit{Type: protocol.TypeAgentjq, Subtype: protocol.EventExit, Code: 3, Outcome: protocol.OutcomeDenied, AgentExit: &agentExit, Turns: 2, Denials: 1},
		protocol.Exit{Type: protocol.TypeAgentjq, Subtype: protocol.EventExit, Code: 4, Outcome: protocol.OutcomeCrashed, Turns: 1, Error: "agent exited without a result"},
		json.RawMessage(`{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{"behavior":"allow","updatedInput":{"a":1}}}}`),
		json.RawMessage(`{"type":"control_response","response":{"subtype":"error","request_id":"r2","error":"Unsupported control request subtype: x"}}`),
	}
	var evs []any
	for _, l := range lines {
		var v any
		if err := json.Unmarshal(protocol.Marshal(l), &v); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, v)
	}
	run := func(program string) []any {
		code := compile(t, program)
		out := []any{}
		for _, ev := range evs {
			out = append(out, collect(t, code, ev)...)
		}
		return out
	}
	want(t, run(`decisions | [.tool, .behavior, .decided_by, .rule]`), `[["Write","deny","rules","Write(/etc/**)"]]`)
	want(t, run(`warnings | [.code, .message]`), `[["version_drift","agent 9.9.9 was not checked"]]`)
	want(t, run(`agentjq_exit | .code`), `[3, 4]`)
	want(t, run(`outcome`), `["denied","crashed"]`)
	want(t, run(`permission_responses`), `[{"request_id":"r1","behavior":"allow","message":null,"updated_input":{"a":1}}]`)
	want(t, run(`errors | [.kind, .message]`), `[
		["warning","agent 9.9.9 was not checked"],
		["exit","agent exited without a result"],
		["control_error","Unsupported control request subtype: x"]]`)

	// tool_pairs sees agentjq's deny decisions.
	all := append([]any{}, evs...)
	var call any
	_ = json.Unmarshal([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_w1","name":"Write","input":{"file_path":"/etc/x"}}]},"parent_tool_use_id":null}`), &call)
	all = append([]any{call}, all...)
	want(t, collect(t, compile(t, `tool_pairs | [.name, .content, .is_error, .denied]`), all), `[["Write",null,null,true]]`)
}

// Definitions must not fail on lines of other shapes: strings, numbers,
// objects without type, unknown types.
func TestDefinitionsTolerateOddLines(t *testing.T) {
	odd := []any{"text", 1.5, nil, true, []any{1}, map[string]any{}, map[string]any{"type": "rate_limit_event"},
		map[string]any{"type": "assistant"}, map[string]any{"type": "user", "message": map[string]any{"content": "hi"}},
		map[string]any{"type": "assistant", "message": map[string]any{"content": []any{"x", 1}}}}
	for _, d := range Docs {
		name, arity, _ := strings.Cut(d.Name, "/")
		if name == "tool_pairs" || name == "subagents" || name == "content_text" {
			continue
		}
		prog := name
		switch arity {
		case "1":
			prog = name + `("assistant")`
		case "2":
			prog = name + `("system"; "init")`
		}
		code := compile(t, prog)
		for _, v := range odd {
			iter := code.Run(v)
			for {
				x, ok := iter.Next()
				if !ok {
					break
				}
				if err, ok := x.(error); ok {
					t.Errorf("%s on %s: %v", prog, js(t, v), err)
				}
			}
		}
	}
}

func TestWholeStreamHelpersExplainSlurp(t *testing.T) {
	for _, prog := range []string{"tool_pairs", "subagents"} {
		iter := compile(t, prog).Run(map[string]any{"type": "result"})
		x, _ := iter.Next()
		err, ok := x.(error)
		if !ok || !strings.Contains(err.Error(), "-s") {
			t.Errorf("%s on one event: got %v, want an error that mentions -s", prog, x)
		}
	}
}

func TestContentText(t *testing.T) {
	code := compile(t, `content_text`)
	for in, out := range map[string]string{
		`"plain"`: `["plain"]`,
		`[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]`: `["a\n[image]\nb"]`,
		`null`: `[""]`,
	} {
		var v any
		_ = json.Unmarshal([]byte(in), &v)
		want(t, collect(t, code, v), out)
	}
}

// Source stays a sequence of defs, and Docs names each public def once.
func TestDocsMatchSource(t *testing.T) {
	defRE := regexp.MustCompile(`(?m)^def ([a-z_][a-z0-9_]*)(\(([^)]*)\))?:`)
	var defined []string
	for _, m := range defRE.FindAllStringSubmatch(Source, -1) {
		if strings.HasPrefix(m[1], "_") {
			continue
		}
		name := m[1]
		if m[3] != "" {
			name += "/" + string(rune('0'+len(strings.Split(m[3], ";"))))
		}
		defined = append(defined, name)
	}
	var documented []string
	for _, d := range Docs {
		documented = append(documented, d.Name)
		if d.Usage == "" || d.Summary == "" {
			t.Errorf("%s: empty usage or summary", d.Name)
		}
	}
	sort.Strings(defined)
	sort.Strings(documented)
	if strings.Join(defined, " ") != strings.Join(documented, " ") {
		t.Errorf("defined:    %v\ndocumented: %v", defined, documented)
	}
	// Every top-level line is a comment, blank, a def or its continuation:
	// a stray expression would turn the prepended program into something else.
	q, err := compileOnly(Source + "\n.")
	if err != nil {
		t.Fatal(err)
	}
	out := collect(t, q, map[string]any{"k": 1})
	want(t, out, `[{"k":1}]`)
}
