package apistub_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/apistub"
)

// These tests need no CLI: they check the stand-in's HTTP answers and the
// scenario table directly.

const cwdSystem = "# Environment\n - Primary working directory: /home/user/project\n - Platform: linux\n"

// conv builds a request body: the system message the CLI sends, then the
// given messages.
func conv(msgs ...any) []byte {
	all := []any{
		map[string]any{"role": "system", "content": []any{map[string]any{"type": "text", "text": cwdSystem}}},
	}
	all = append(all, msgs...)
	b, _ := json.Marshal(map[string]any{"model": "claude-test", "max_tokens": 100, "stream": true, "messages": all})
	return b
}

func user(text string) map[string]any {
	return map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "<system-reminder>\nHELLO WRITE noise\n</system-reminder>\n"},
		map[string]any{"type": "text", "text": text},
	}}
}

func assistantTool(id, name string) map[string]any {
	return map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}}}
}

func toolResult(id, text string, isErr bool) map[string]any {
	return map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": text, "is_error": isErr}}}
}

func reply(t *testing.T, body []byte) apistub.Turn {
	t.Helper()
	var req apistub.MessagesBody
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	return apistub.Reply(&req)
}

// describe renders a turn compactly: "text:..." / "tool:Name:id:input".
func describe(tn apistub.Turn) string {
	if tn.Status != 0 {
		return "error:" + tn.ErrorType + ":" + tn.ErrorMessage
	}
	var parts []string
	for _, b := range tn.Blocks {
		switch b.Type {
		case "text":
			parts = append(parts, "text:"+b.Text)
		case "thinking":
			parts = append(parts, "thinking:"+b.Thinking+":"+b.Signature)
		case "tool_use":
			in := string(b.Input)
			if len(in) > 300 {
				in = in[:300] + "..."
			}
			parts = append(parts, "tool:"+b.Name+":"+b.ID+":"+in)
		}
	}
	return strings.Join(parts, " | ")
}

func TestReplyFirstRound(t *testing.T) {
	tests := []struct{ prompt, want string }{
		{"HELLO there", "text:Hello from the scripted model."},
		{"please WRITE banana", `text:I will write the file. | tool:Write:toolu_w1:{"file_path":"/home/user/project/banana.txt","content":"banana\n"}`},
		{"WRITE apple.md", `text:I will write the file. | tool:Write:toolu_w1:{"file_path":"/home/user/project/apple.md","content":"apple\n"}`},
		{"WRITE /tmp/x/abs.txt", `text:I will write the file. | tool:Write:toolu_w1:{"file_path":"/tmp/x/abs.txt","content":"abs\n"}`},
		{"run BASH", `tool:Bash:toolu_b1:{"command":"echo hello-from-bash","description":"Print a greeting"}`},
		{"please RMRF", `tool:Bash:toolu_r1:{"command":"rm -rf /tmp/definitely-not-here","description":"Remove a folder"}`},
		{"please SLEEP", `tool:Bash:toolu_s1:{"command":"sleep 20","description":"Wait a while"}`},
		{"please TOUCH", `tool:Bash:toolu_h1:{"command":"touch /home/user/project/touched.txt","description":"Touch a file"}`},
		{"do the CHAIN", `tool:Bash:toolu_c1:{"command":"echo one","description":"one"}`},
		{"LOOP", `tool:Bash:toolu_l1:{"command":"echo loop-1","description":"Loop"}`},
		{"ASK me", `tool:AskUserQuestion:toolu_a1:{"questions":[{"question":"Do you prefer cats or dogs?","header":"Pet","options":[{"label":"Cats","description":"Independent"},{"label":"Dogs","description":"Loyal"}],"multiSelect":false}]}`},
		{"ASKMULTI me", `tool:AskUserQuestion:toolu_m1:{"questions":[{"question":"Which fruits do you like?","header":"Fruit","options":[{"label":"Apples","description":"Crisp"},{"label":"Pears","description":"Soft"},{"label":"Plums","description":"Tart"}],"multiSelect":true}]}`},
		{"THINK about it", "thinking:Let me think about it.:c2lnbmF0dXJl | text:Thought it through."},
		{"FAIL400 now", "error:invalid_request_error:scripted bad request"},
		{"FAIL529", "error:overloaded_error:scripted overloaded"},
		{"FAIL429", "error:rate_limit_error:scripted too many requests"},
		{"PING it", `tool:mcp__probe__ping:toolu_p1:{"note":"hi"}`},
		{"start an AGENT", `tool:Task:toolu_t1:{"description":"Say hello","prompt":"HELLO from the parent","subagent_type":"general-purpose"}`},
		{"no trigger here, hello", "text:OK."},
		{"FAIL4000 is not a code", "text:OK."},
		{`TOOL Read {"file_path": "{{cwd}}/x"}`, `tool:Read:toolu_g1:{"file_path":"/home/user/project/x"}`},
		{"SAY just this", "text:just this"},
		{"TOOL Bash {not json}", "text:apistub: TOOL Bash input is not valid JSON: {not json}"},
	}
	for _, tc := range tests {
		t.Run(tc.prompt, func(t *testing.T) {
			if got := describe(reply(t, conv(user(tc.prompt)))); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestReplyFollowsTheScript(t *testing.T) {
	// CHAIN: each tool result moves the script one step on.
	msgs := []any{user("do the CHAIN")}
	var got []string
	for i, id := range []string{"toolu_c1", "toolu_c2", "toolu_c3", ""} {
		tn := reply(t, conv(msgs...))
		got = append(got, describe(tn))
		if id == "" {
			break
		}
		if len(tn.Blocks) != 1 || tn.Blocks[0].ID != id {
			t.Fatalf("round %d: %s", i, describe(tn))
		}
		msgs = append(msgs, assistantTool(id, tn.Blocks[0].Name), toolResult(id, "ok", false))
	}
	if got[3] != "text:Chain complete." {
		t.Errorf("final: %s", got[3])
	}
	if !strings.Contains(got[2], `tool:Read:toolu_c3:{"file_path":"/home/user/project/two.txt"}`) {
		t.Errorf("round 3: %s", got[2])
	}
}

func TestReplyGenericQuotesResults(t *testing.T) {
	prompt := "TOOL Bash {\"command\":\"ls\"}\nTOOL Write {\"file_path\":\"{{cwd}}/a\"}\nSAY Finished."
	msgs := []any{user(prompt), assistantTool("toolu_g1", "Bash"), toolResult("toolu_g1", "a.txt\nb.txt", false)}
	if got := describe(reply(t, conv(msgs...))); got != `tool:Write:toolu_g2:{"file_path":"/home/user/project/a"}` {
		t.Fatalf("round 2: %s", got)
	}
	msgs = append(msgs, assistantTool("toolu_g2", "Write"), toolResult("toolu_g2", "Denied: "+strings.Repeat("é", 400), true))
	got := describe(reply(t, conv(msgs...)))
	want := "text:Finished.\n[1] Bash ok: a.txt\nb.txt\n[2] Write error: Denied: " + strings.Repeat("é", 246) + "…"
	if got != want {
		t.Errorf("final:\n%q\nwant\n%q", got, want)
	}
}

func TestReplyNewTurnAndUniqueIDs(t *testing.T) {
	// A second WRITE turn in the same session gets a fresh tool_use id.
	msgs := []any{
		user("please WRITE banana"), assistantTool("toolu_w1", "Write"), toolResult("toolu_w1", "ok", false),
		map[string]any{"role": "assistant", "content": "The file is written."},
		user("please WRITE cherry"),
	}
	tn := reply(t, conv(msgs...))
	if len(tn.Blocks) != 2 || tn.Blocks[1].ID != "toolu_w1_2" || !strings.Contains(string(tn.Blocks[1].Input), "cherry.txt") {
		t.Errorf("second turn: %s", describe(tn))
	}
	// A plain prompt without trigger after a scripted turn is answered "OK.".
	msgs = append(msgs[:4], user("thanks"))
	if got := describe(reply(t, conv(msgs...))); got != "text:OK." {
		t.Errorf("plain prompt: %s", got)
	}
	// A notification the CLI injects (all system reminder) continues the script.
	msgs = append(msgs[:4], user(""))
	if got := describe(reply(t, conv(msgs...))); got != "text:The file is written." {
		t.Errorf("notification: %s", got)
	}
}

func TestReplyLoopEnds(t *testing.T) {
	msgs := []any{user("LOOP")}
	for i := 1; i <= 60; i++ {
		tn := reply(t, conv(msgs...))
		if tn.StopReason() == "end_turn" {
			if i != 51 || describe(tn) != "text:Loop gave up." {
				t.Errorf("loop ended at round %d: %s", i, describe(tn))
			}
			return
		}
		id := tn.Blocks[0].ID
		msgs = append(msgs, assistantTool(id, "Bash"), toolResult(id, "x", false))
	}
	t.Fatal("LOOP never ended")
}

func post(t *testing.T, url string, body []byte) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type sse struct {
	event string
	data  map[string]any
}

func readSSE(t *testing.T, r io.Reader) []sse {
	t.Helper()
	br := bufio.NewReader(r)
	var out []sse
	var cur sse
	for {
		l, err := br.ReadString('\n')
		l = strings.TrimRight(l, "\n")
		switch {
		case strings.HasPrefix(l, "event: "):
			cur.event = l[len("event: "):]
		case strings.HasPrefix(l, "data: "):
			if err := json.Unmarshal([]byte(l[len("data: "):]), &cur.data); err != nil {
				t.Fatalf("bad data line: %v", err)
			}
		case l == "" && cur.event != "":
			if cur.data["type"] != cur.event {
				t.Errorf("event %q carries type %v", cur.event, cur.data["type"])
			}
			out = append(out, cur)
			cur = sse{}
		}
		if err != nil {
			return out
		}
	}
}

func TestStreamEvents(t *testing.T) {
	s := apistub.Start(t)
	resp := post(t, s.URL()+"/v1/messages?beta=true", conv(user("please WRITE banana")))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := readSSE(t, resp.Body)
	var seq []string
	var text, partial strings.Builder
	for _, e := range events {
		seq = append(seq, e.event)
		if d, ok := e.data["delta"].(map[string]any); ok {
			switch d["type"] {
			case "text_delta":
				text.WriteString(d["text"].(string))
			case "input_json_delta":
				partial.WriteString(d["partial_json"].(string))
			}
		}
	}
	want := "message_start content_block_start content_block_delta content_block_delta content_block_delta content_block_delta content_block_delta content_block_stop content_block_start content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(seq, " ") != want {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(seq, " "), want)
	}
	if text.String() != "I will write the file." {
		t.Errorf("text %q", text.String())
	}
	if partial.String() != `{"file_path":"/home/user/project/banana.txt","content":"banana\n"}` {
		t.Errorf("input %q", partial.String())
	}
	md := events[len(events)-2].data
	if d := md["delta"].(map[string]any); d["stop_reason"] != "tool_use" {
		t.Errorf("message_delta %v", md)
	}
	ms := events[0].data["message"].(map[string]any)
	if ms["id"] != "msg_000" || ms["model"] != "claude-test" {
		t.Errorf("message_start %v", ms)
	}
}

func TestStreamThinkingAndBigInput(t *testing.T) {
	s := apistub.Start(t)
	events := readSSE(t, post(t, s.URL()+"/v1/messages", conv(user("THINK"))).Body)
	var kinds []string
	for _, e := range events {
		if d, ok := e.data["delta"].(map[string]any); ok && e.event == "content_block_delta" {
			kinds = append(kinds, d["type"].(string))
		}
	}
	if got := strings.Join(kinds, " "); got != "thinking_delta thinking_delta thinking_delta thinking_delta thinking_delta signature_delta text_delta text_delta text_delta" {
		t.Errorf("deltas: %s", got)
	}
	if id := events[0].data["message"].(map[string]any)["id"]; id != "msg_000" {
		t.Errorf("id %v", id)
	}

	events = readSSE(t, post(t, s.URL()+"/v1/messages", conv(user("BIGWRITE 2"))).Body)
	var in strings.Builder
	n := 0
	for _, e := range events {
		if d, ok := e.data["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			in.WriteString(d["partial_json"].(string))
			n++
		}
	}
	var input struct {
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
	}
	if err := json.Unmarshal([]byte(in.String()), &input); err != nil {
		t.Fatal(err)
	}
	if len(input.Content) != 2<<20 || n < 8 {
		t.Errorf("content %d bytes in %d deltas", len(input.Content), n)
	}
}

func TestNonStreamingAndOtherRoutes(t *testing.T) {
	s := apistub.Start(t)
	body := conv(user("THINK"))
	body = bytes.Replace(body, []byte(`"stream":true`), []byte(`"stream":false`), 1)
	resp := post(t, s.URL()+"/v1/messages", body)
	var msg struct {
		ID         string          `json:"id"`
		StopReason string          `json:"stop_reason"`
		Content    []apistub.Block `json:"content"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || msg.StopReason != "end_turn" || len(msg.Content) != 2 || msg.Content[0].Signature != "c2lnbmF0dXJl" {
		t.Errorf("non-streaming: %d %+v", resp.StatusCode, msg)
	}

	resp = post(t, s.URL()+"/v1/messages", conv(user("FAIL400")))
	var apiErr struct {
		Type  string `json:"type"`
		Error struct{ Type, Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&apiErr); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 400 || apiErr.Type != "error" || apiErr.Error.Type != "invalid_request_error" || apiErr.Error.Message != "scripted bad request" {
		t.Errorf("error: %d %+v", resp.StatusCode, apiErr)
	}

	resp = post(t, s.URL()+"/v1/messages/count_tokens", conv(user("x")))
	var count struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&count); err != nil || resp.StatusCode != 200 || count.InputTokens < 1 {
		t.Errorf("count_tokens: %d %+v %v", resp.StatusCode, count, err)
	}

	if resp := post(t, s.URL()+"/v1/other", nil); resp.StatusCode != 404 {
		t.Errorf("unknown path: %d", resp.StatusCode)
	}
	if resp := post(t, s.URL()+"/v1/messages", []byte("{")); resp.StatusCode != 400 {
		t.Errorf("bad JSON: %d", resp.StatusCode)
	}

	reqs := s.Requests()
	if len(reqs) != 5 || reqs[0].Path != "/v1/messages" || reqs[0].Status != 200 || reqs[1].Status != 400 || reqs[3].Status != 404 {
		t.Errorf("log: %d requests", len(reqs))
		for _, r := range reqs {
			t.Logf("%s %s %d", r.Method, r.Path, r.Status)
		}
	}
	if n := len(s.MessagesRequests()); n != 3 {
		t.Errorf("%d messages requests, want 3", n)
	}
}

func TestToolResultsLog(t *testing.T) {
	s := apistub.Start(t)
	post(t, s.URL()+"/v1/messages", conv(user("please WRITE banana"), assistantTool("toolu_w1", "Write"), toolResult("toolu_w1", "Denied.", true)))
	post(t, s.URL()+"/v1/messages", conv(user("please WRITE banana"), assistantTool("toolu_w1", "Write"), toolResult("toolu_w1", "Denied.", true),
		map[string]any{"role": "assistant", "content": "x"}, user("run BASH"), assistantTool("toolu_b1", "Bash"),
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_b1", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}}))
	got := s.ToolResults()
	if len(got) != 2 || got[0] != (apistub.ToolResult{ToolUseID: "toolu_w1", IsError: true, Text: "Denied."}) || got[1].Text != "hi" || got[1].IsError {
		t.Errorf("tool results: %+v", got)
	}
	last := s.MessagesRequests()[1].ToolResults()
	if len(last) != 1 || last[0].ToolUseID != "toolu_b1" {
		t.Errorf("last request's results: %+v", last)
	}
}

func TestDelayEndsOnClose(t *testing.T) {
	s, err := apistub.New()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/v1/messages", bytes.NewReader(conv(user("DELAY 1h\nSAY late"))))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.WaitRequest(ctx, func(r apistub.Request) bool { return r.Path == "/v1/messages" }); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a delayed request outlived Close")
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Close took %v", d)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if _, err := s.WaitRequest(ctx2, func(r apistub.Request) bool { return r.Path == "/nope" }); !errors.Is(err, apistub.ErrNoRequest) {
		t.Errorf("WaitRequest: %v", err)
	}
}

func FuzzReply(f *testing.F) {
	for _, s := range []string{"HELLO", "TOOL X {}", "FAIL400", "WRITE", "BIGWRITE 0", "SAY a\nSAY b", "DELAY x", "ASK ASKMULTI"} {
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, prompt string, steps int) {
		msgs := []any{user(prompt)}
		for i := 0; i < steps%5; i++ {
			msgs = append(msgs, assistantTool("toolu_x", "X"), toolResult("toolu_x", prompt, i%2 == 0))
		}
		tn := reply(t, conv(msgs...))
		if tn.Status == 0 && len(tn.Blocks) == 0 {
			t.Fatal("empty turn")
		}
		for _, b := range tn.Blocks {
			if b.Type == "tool_use" && !json.Valid(b.Input) {
				t.Fatalf("invalid tool input %q", b.Input)
			}
		}
	})
}
