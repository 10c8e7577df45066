package apistub_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

// These tests run the real claude CLI against the stand-in. They prove the
// stand-in is faithful enough: the CLI's output has the shape of the
// captures, which were made with the real CLI.

// line is one decoded stdout line of the CLI, with its raw bytes.
type line struct {
	raw []byte
	m   map[string]any
}

func (l line) str(path ...string) string {
	var v any = l.m
	for _, p := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = o[p]
	}
	s, _ := v.(string)
	return s
}

func (l line) kind() string {
	if st := l.str("subtype"); st != "" {
		return l.str("type") + "/" + st
	}
	if l.str("type") == "control_request" {
		return "control_request/" + l.str("request", "subtype")
	}
	return l.str("type")
}

// canUseTool answers one can_use_tool request; it returns the response
// body ({"behavior":...}).
type canUseTool func(t *testing.T, req map[string]any) map[string]any

func allowAsIs(t *testing.T, req map[string]any) map[string]any {
	return map[string]any{"behavior": "allow", "updatedInput": req["input"]}
}

func deny(msg string) canUseTool {
	return func(*testing.T, map[string]any) map[string]any {
		return map[string]any{"behavior": "deny", "message": msg}
	}
}

type run struct {
	api   *apistub.Server
	dir   string
	lines []line
	exit  int
}

// drive runs one prompt through the real CLI: it answers can_use_tool with
// answer, closes stdin after the first result and reads stdout to its end.
func drive(t *testing.T, prompt string, answer canUseTool, extraArgs ...string) *run {
	t.Helper()
	return driveWith(t, driveOpts{prompt: prompt, answer: answer, args: extraArgs})
}

type driveOpts struct {
	prompt string
	answer canUseTool
	args   []string
	// before are frames written before the prompt (initialize...).
	before []any
	// mcp answers an mcp_message's JSON-RPC message with the JSON-RPC reply.
	mcp func(t *testing.T, msg map[string]any) map[string]any
}

func driveWith(t *testing.T, o driveOpts) *run {
	t.Helper()
	prompt, answer, extraArgs := o.prompt, o.answer, o.args
	api := apistub.Start(t)
	dir := livetest.Workdir(t)
	s := livetest.Spawn(t, livetest.Options{APIURL: api.URL(), Dir: dir, Args: livetest.StreamArgs(extraArgs...), Timeout: 90 * time.Second})
	for _, f := range o.before {
		if err := s.Send(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SendUser(prompt); err != nil {
		t.Fatal(err)
	}
	r := &run{api: api, dir: dir}
	for {
		raw, err := s.Next(60 * time.Second)
		if err == livetest.ErrEOF {
			break
		}
		if err != nil {
			t.Fatalf("%v; lines so far: %d; stderr: %s", err, len(r.lines), s.Stderr())
		}
		l := line{raw: raw}
		if err := json.Unmarshal(raw, &l.m); err != nil {
			t.Fatalf("stdout line is not JSON: %v: %.200s", err, raw)
		}
		r.lines = append(r.lines, l)
		switch l.kind() {
		case "control_request/can_use_tool":
			if answer == nil {
				t.Fatalf("unexpected can_use_tool: %.300s", raw)
			}
			req, _ := l.m["request"].(map[string]any)
			resp := answer(t, req)
			if err := s.Send(map[string]any{"type": "control_response", "response": map[string]any{
				"subtype": "success", "request_id": l.str("request_id"), "response": resp}}); err != nil {
				t.Fatal(err)
			}
		case "control_request/mcp_message":
			if o.mcp == nil {
				t.Fatalf("unexpected mcp_message: %.300s", raw)
			}
			req, _ := l.m["request"].(map[string]any)
			msg, _ := req["message"].(map[string]any)
			if err := s.Send(map[string]any{"type": "control_response", "response": map[string]any{
				"subtype": "success", "request_id": l.str("request_id"),
				"response": map[string]any{"mcp_response": o.mcp(t, msg)}}}); err != nil {
				t.Fatal(err)
			}
		case "result/success", "result/error_max_turns", "result/error_during_execution":
			if err := s.CloseStdin(); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.exit = s.ExitCode()
	return r
}

func (r *run) result(t *testing.T) line {
	t.Helper()
	for i := len(r.lines) - 1; i >= 0; i-- {
		if r.lines[i].str("type") == "result" {
			return r.lines[i]
		}
	}
	t.Fatalf("no result line in %d lines", len(r.lines))
	return line{}
}

// kinds is the type/subtype sequence of a run, without the events whose
// number or place varies between runs.
func kinds(ls []line) []string {
	var out []string
	for _, l := range ls {
		switch l.kind() {
		case "system/status", "rate_limit_event", "system/thinking_tokens":
			continue
		}
		out = append(out, l.kind())
	}
	return out
}

func captureKinds(t *testing.T, name string) []string {
	t.Helper()
	b, err := fixtures.Capture(name, "out")
	if err != nil {
		t.Fatal(err)
	}
	var ls []line
	for _, raw := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		l := line{raw: raw}
		if err := json.Unmarshal(raw, &l.m); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	return kinds(ls)
}

func sameKinds(t *testing.T, r *run, capture string) {
	t.Helper()
	got, want := kinds(r.lines), captureKinds(t, capture)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("event sequence differs from capture %s:\n got: %v\nwant: %v", capture, got, want)
	}
}

func TestLiveHello(t *testing.T) {
	livetest.Claude(t)
	start := time.Now()
	r := drive(t, "HELLO there", nil)
	t.Logf("hello run took %v", time.Since(start))
	if r.exit != 0 {
		t.Errorf("exit %d, want 0", r.exit)
	}
	res := r.result(t)
	if got := res.str("result"); got != "Hello from the scripted model." {
		t.Errorf("result %q", got)
	}
	sameKinds(t, r, "hello")
	reqs := r.api.MessagesRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d messages requests, want 1", len(reqs))
	}
	body, err := reqs[0].Messages()
	if err != nil {
		t.Fatal(err)
	}
	if !body.Stream {
		t.Error("the CLI did not ask for a stream")
	}
	if init := r.lines[0]; init.str("cwd") != r.dir {
		t.Errorf("init cwd %q, want %q", init.str("cwd"), r.dir)
	}
}

func TestLiveWriteAllow(t *testing.T) {
	livetest.Claude(t)
	var asked map[string]any
	r := drive(t, "please WRITE banana", func(t *testing.T, req map[string]any) map[string]any {
		asked = req
		return allowAsIs(t, req)
	})
	if r.exit != 0 {
		t.Errorf("exit %d", r.exit)
	}
	if asked["tool_name"] != "Write" {
		t.Fatalf("can_use_tool for %v, want Write", asked["tool_name"])
	}
	want := filepath.Join(r.dir, "banana.txt")
	if in, _ := asked["input"].(map[string]any); in["file_path"] != want {
		t.Errorf("file_path %v, want %s", in["file_path"], want)
	}
	b, err := os.ReadFile(want)
	if err != nil || string(b) != "banana\n" {
		t.Errorf("banana.txt: %q, %v", b, err)
	}
	if got := r.result(t).str("result"); got != "The file is written." {
		t.Errorf("result %q", got)
	}
	sameKinds(t, r, "write-allow")
}

func TestLiveWriteDeny(t *testing.T) {
	livetest.Claude(t)
	const msg = "Denied by the live test."
	r := drive(t, "please WRITE banana", deny(msg))
	if _, err := os.Stat(filepath.Join(r.dir, "banana.txt")); !os.IsNotExist(err) {
		t.Errorf("banana.txt exists after deny (stat: %v)", err)
	}
	// The model must have been sent the deny message as an error result.
	reqs := r.api.MessagesRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d messages requests, want 2", len(reqs))
	}
	trs := reqs[1].ToolResults()
	if len(trs) != 1 || !trs[0].IsError || trs[0].Text != msg || trs[0].ToolUseID != "toolu_w1" {
		t.Errorf("tool results sent to the model: %+v", trs)
	}
	res := r.result(t)
	if d, _ := res.m["permission_denials"].([]any); len(d) != 1 {
		t.Errorf("permission_denials %v", res.m["permission_denials"])
	}
	sameKinds(t, r, "write-deny")
}

func TestLiveAPIError(t *testing.T) {
	livetest.Claude(t)
	r := drive(t, "FAIL400 now", nil)
	res := r.result(t)
	if res.m["is_error"] != true || res.str("result") != "API Error: 400 scripted bad request" {
		t.Errorf("result: %.400s", res.raw)
	}
	if r.exit != 1 {
		t.Errorf("exit %d, want 1", r.exit)
	}
	sameKinds(t, r, "api-error")
}

func TestLiveMaxTurns(t *testing.T) {
	livetest.Claude(t)
	t.Run("chain", func(t *testing.T) {
		r := drive(t, "do the CHAIN", allowAsIs, "--max-turns", "1")
		if res := r.result(t); res.str("subtype") != "error_max_turns" || res.m["is_error"] != true {
			t.Errorf("result: %.400s", res.raw)
		}
		if r.exit != 1 {
			t.Errorf("exit %d, want 1", r.exit)
		}
		sameKinds(t, r, "max-turns")
	})
	t.Run("loop", func(t *testing.T) {
		r := drive(t, "LOOP forever", allowAsIs, "--max-turns", "3")
		res := r.result(t)
		if res.str("subtype") != "error_max_turns" {
			t.Errorf("result: %.400s", res.raw)
		}
		if n := len(r.api.ToolResults()); n < 2 {
			t.Errorf("%d loop rounds reached the model, want at least 2", n)
		}
	})
}

func TestLiveAskUserQuestion(t *testing.T) {
	livetest.Claude(t)
	answerWith := func(answers map[string]string) canUseTool {
		return func(t *testing.T, req map[string]any) map[string]any {
			if req["tool_name"] != "AskUserQuestion" || req["requires_user_interaction"] != true {
				t.Errorf("can_use_tool: %v", req)
			}
			in, _ := req["input"].(map[string]any)
			out := map[string]any{}
			for k, v := range in {
				out[k] = v
			}
			out["answers"] = answers
			return map[string]any{"behavior": "allow", "updatedInput": out}
		}
	}
	t.Run("single", func(t *testing.T) {
		r := drive(t, "ASK me", answerWith(map[string]string{"Do you prefer cats or dogs?": "Dogs"}))
		trs := r.api.ToolResults()
		if len(trs) != 1 || !strings.Contains(trs[0].Text, `"Do you prefer cats or dogs?"="Dogs"`) {
			t.Errorf("tool results: %+v", trs)
		}
		if got := r.result(t).str("result"); got != "Noted your choice." {
			t.Errorf("result %q", got)
		}
		sameKinds(t, r, "ask-answer")
	})
	t.Run("multi", func(t *testing.T) {
		r := drive(t, "ASKMULTI me", answerWith(map[string]string{"Which fruits do you like?": "Apples, Plums"}))
		if got := r.result(t).str("result"); !strings.Contains(got, `"Which fruits do you like?"="Apples, Plums"`) {
			t.Errorf("result %q", got)
		}
	})
}

func TestLiveBigWrite(t *testing.T) {
	livetest.Claude(t)
	var requestLine int
	r := drive(t, "BIGWRITE now", allowAsIs)
	for _, l := range r.lines {
		if l.kind() == "control_request/can_use_tool" {
			requestLine = len(l.raw)
		}
	}
	if requestLine < 3<<20 {
		t.Errorf("can_use_tool line is %d bytes, want > 3 MiB", requestLine)
	}
	fi, err := os.Stat(filepath.Join(r.dir, "big.txt"))
	if err != nil || fi.Size() != 3<<20 {
		t.Errorf("big.txt: %v, %v", fi, err)
	}
	if got := r.result(t).str("result"); got != "Big file written." {
		t.Errorf("result %q", got)
	}
	sameKinds(t, r, "big-line")
}

func TestLiveGeneric(t *testing.T) {
	livetest.Claude(t)
	prompt := strings.Join([]string{
		`TOOL Bash {"command":"echo generic-ok","description":"Say ok"}`,
		`TOOL Write {"file_path":"{{cwd}}/g.txt","content":"g\n"}`,
		`SAY All done.`,
	}, "\n")
	r := drive(t, prompt, deny("No writes today."))
	got := r.result(t).str("result")
	want := "All done.\n[1] Bash ok: generic-ok\n[2] Write error: No writes today."
	if got != want {
		t.Errorf("result:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "g.txt")); !os.IsNotExist(err) {
		t.Errorf("g.txt written despite deny")
	}
}

func TestLiveSubagent(t *testing.T) {
	livetest.Claude(t)
	r := drive(t, "start an AGENT", allowAsIs)
	var sub bool
	for _, l := range r.lines {
		if l.str("type") == "assistant" && l.str("parent_tool_use_id") == "toolu_t1" {
			sub = true
		}
	}
	if !sub {
		t.Error("no assistant event from the subagent (parent_tool_use_id toolu_t1)")
	}
	if got := r.result(t).str("result"); got != "The helper finished." {
		t.Errorf("result %q", got)
	}
}

func TestLiveThinking(t *testing.T) {
	livetest.Claude(t)
	r := drive(t, "THINK about it", nil)
	var sig string
	for _, l := range r.lines {
		if l.str("type") != "assistant" {
			continue
		}
		msg, _ := l.m["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			if bm, _ := b.(map[string]any); bm["type"] == "thinking" {
				sig, _ = bm["signature"].(string)
			}
		}
	}
	if sig != "c2lnbmF0dXJl" {
		t.Errorf("thinking signature %q", sig)
	}
	sameKinds(t, r, "thinking")
}

func TestLivePartialTool(t *testing.T) {
	livetest.Claude(t)
	r := drive(t, "please WRITE banana", allowAsIs, "--include-partial-messages")
	var partial strings.Builder
	for _, l := range r.lines {
		ev, _ := l.m["event"].(map[string]any)
		if d, _ := ev["delta"].(map[string]any); d["type"] == "input_json_delta" {
			partial.WriteString(d["partial_json"].(string))
		}
	}
	if !strings.Contains(partial.String(), filepath.Join(r.dir, "banana.txt")) {
		t.Errorf("input_json_delta: %q", partial.String())
	}
	sameKinds(t, r, "partial-tool")
}

func TestLiveMCPTool(t *testing.T) {
	livetest.Claude(t)
	var calls []string
	r := driveWith(t, driveOpts{
		prompt: "PING it",
		answer: allowAsIs,
		before: []any{map[string]any{"type": "control_request", "request_id": "init-1",
			"request": map[string]any{"subtype": "initialize", "hooks": map[string]any{}, "sdkMcpServers": []string{"probe"}}}},
		mcp: func(t *testing.T, msg map[string]any) map[string]any {
			method, _ := msg["method"].(string)
			calls = append(calls, method)
			var result any = map[string]any{}
			switch method {
			case "initialize":
				result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{"listChanged": false}},
					"serverInfo": map[string]any{"name": "probe", "version": "0.0.1"}}
			case "tools/list":
				result = map[string]any{"tools": []any{map[string]any{"name": "ping", "description": "Answers pong",
					"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"note": map[string]any{"type": "string"}}}}}}
			case "tools/call":
				result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "pong-from-probe"}}, "isError": false}
			}
			return map[string]any{"jsonrpc": "2.0", "id": msg["id"], "result": result}
		},
	})
	if got := strings.Join(calls, " "); !strings.Contains(got, "tools/list") || !strings.HasSuffix(got, "tools/call") {
		t.Errorf("mcp calls: %s", got)
	}
	trs := r.api.ToolResults()
	if len(trs) != 1 || trs[0].Text != "pong-from-probe" || trs[0].IsError {
		t.Errorf("tool results: %+v", trs)
	}
	if got := r.result(t).str("result"); got != "Ping answered." {
		t.Errorf("result %q", got)
	}
	sameKinds(t, r, "mcp-ping")
}
