package view

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

func lines(t testing.TB, scenario, dir string) [][]byte {
	t.Helper()
	b, err := fixtures.Capture(scenario, dir)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func requestID(line []byte) (typ, id string) {
	env, err := protocol.DecodeEnvelope(line)
	if err != nil {
		return "", ""
	}
	if env.Type == protocol.TypeControlResp {
		return env.Type, env.ResponseID()
	}
	return env.Type, env.RequestID
}

// recordingOf interleaves a capture's two directions into a recording the
// way spawn would have written it: each client control_response right
// after the request it answers, each user turn after the previous result.
func recordingOf(t testing.TB, scenario string) []byte {
	t.Helper()
	var buf []byte
	buf = append(buf, `{"agentjq_recording":1,"agent":"claude","agent_version":"2.1.328","agentjq_version":"test","argv":["claude","--input-format","stream-json","--output-format","stream-json","--verbose"],"cwd":"/home/user/project","started":"2026-11-30T10:30:00Z","redacted":false}`...)
	buf = append(buf, '\n')
	seq := int64(0)
	add := func(dir protocol.Direction, msg []byte) {
		seq++
		buf = recording.AppendEntry(buf, recording.Entry{Seq: seq, MS: float64(seq), Dir: dir, Msg: msg})
		buf = append(buf, '\n')
	}
	in := lines(t, scenario, "in")
	used := make([]bool, len(in))
	// Client lines up to and including the next user turn.
	nextTurn := func() {
		for i, l := range in {
			if used[i] {
				continue
			}
			typ, _ := requestID(l)
			if typ == protocol.TypeControlResp {
				continue
			}
			used[i] = true
			add(protocol.DirIn, l)
			if typ == protocol.TypeUser {
				return
			}
		}
	}
	nextTurn()
	for _, l := range lines(t, scenario, "out") {
		typ, id := requestID(l)
		if typ == protocol.TypeControlResp {
			for i, x := range in { // the client's request comes first
				if xt, xid := requestID(x); !used[i] && xt == protocol.TypeControlRequest && xid == id {
					used[i] = true
					add(protocol.DirIn, x)
				}
			}
		}
		add(protocol.DirOut, l)
		switch typ {
		case protocol.TypeControlRequest:
			for i, x := range in {
				if xt, xid := requestID(x); !used[i] && xt == protocol.TypeControlResp && xid == id {
					used[i] = true
					add(protocol.DirIn, x)
				}
			}
		case protocol.TypeResult:
			nextTurn()
		}
	}
	return buf
}

// The decision shown comes from the client's control_response in a
// recording's "in" direction.
func TestGoldenRecordings(t *testing.T) {
	for _, name := range []string{"write-deny", "ask-answer", "hook-callback", "interrupt", "multi-turn"} {
		t.Run(name, func(t *testing.T) {
			golden(t, "recording-"+name, render(t, recordingOf(t, name), Options{Width: 80}))
		})
	}
}

func TestRecordingShowsClientDecisions(t *testing.T) {
	out := render(t, recordingOf(t, "write-deny"), Options{Width: 80})
	for _, want := range []string{
		"● recording  claude 2.1.328  /home/user/project  2026-11-30 10:30:00Z  agentjq test\n",
		"> please WRITE banana\n",
		"? Write  banana.txt → deny (client) Denied by scripted policy.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	out = render(t, recordingOf(t, "ask-answer"), Options{Width: 100})
	if !strings.Contains(out, "→ allow (client) Dogs\n") {
		t.Errorf("the answer to AskUserQuestion is not shown:\n%s", out)
	}
}

// spawn's own events: decisions finish the request's line, warnings and the
// exit event are shown.
func TestAgentjqEvents(t *testing.T) {
	var stream [][]byte
	stream = append(stream, protocol.Marshal(protocol.NewWarning(protocol.WarnVersion, "claude 2.1.400 was not checked with this agentjq")))
	for _, l := range lines(t, "write-allow", "out") {
		stream = append(stream, l)
		if typ, id := requestID(l); typ == protocol.TypeControlRequest {
			stream = append(stream, protocol.Marshal(protocol.Decision{Type: protocol.TypeAgentjq, Subtype: protocol.EventDecision,
				RequestID: id, Tool: "Write", ToolUseID: "toolu_w1", Behavior: protocol.Allow, DecidedBy: protocol.ByRules, Rule: "Write(*.txt)", LatencyUS: 120}))
		}
	}
	zero := 0
	stream = append(stream, protocol.Marshal(protocol.Exit{Type: protocol.TypeAgentjq, Subtype: protocol.EventExit, Code: 0,
		Outcome: protocol.OutcomeSuccess, AgentExit: &zero, Turns: 2}))
	out := render(t, append(bytes.Join(stream, []byte("\n")), '\n'), Options{Width: 80})
	golden(t, "events-write-allow", out)
	for _, want := range []string{
		"⚠ version_drift  claude 2.1.400 was not checked with this agentjq\n",
		"? Write  banana.txt → allow (rules: Write(*.txt))\n",
		"■ exit 0 success  agent exit 0  2 turns\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

// A decision that comes after other lines gets a line of its own, and a
// deny shows its message.
func TestLateDecision(t *testing.T) {
	in := `{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"rm -rf /"},"tool_use_id":"t1"}}
{"type":"system","subtype":"status","status":"compacting"}
{"type":"agentjq","subtype":"decision","request_id":"r1","tool":"Bash","tool_use_id":"t1","behavior":"deny","decided_by":"tty","message":"not today","latency_us":5}
`
	want := "? Bash  rm -rf /\n· compacting\n? Bash → deny (tty) not today\n■ ended without a result\n"
	if got := render(t, []byte(in), Options{}); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// writes records every Write, to see what a person sees at each moment.
type writes struct{ chunks []string }

func (w *writes) Write(p []byte) (int, error) {
	w.chunks = append(w.chunks, string(p))
	return len(p), nil
}

func (w *writes) String() string { return strings.Join(w.chunks, "") }

// Partial messages print as they arrive, and the final assistant message
// does not print the text again.
func TestPartialTextIsLiveAndShownOnce(t *testing.T) {
	w := &writes{}
	rn := New(w, Options{})
	sofar := ""
	for _, l := range lines(t, "partial", "out") {
		if err := rn.Event(l); err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Event struct {
				Delta struct{ Text string } `json:"delta"`
			} `json:"event"`
		}
		_ = json.Unmarshal(l, &ev)
		if d := ev.Event.Delta.Text; d != "" {
			sofar += d
			if got := w.String(); !strings.HasSuffix(got, "  "+strings.TrimSpace(sofar)) {
				t.Fatalf("after delta %q the view shows %q", d, got)
			}
		}
	}
	if err := rn.Close(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(w.String(), "Hello from the scripted model."); n != 1 {
		t.Errorf("text shown %d times:\n%s", n, w.String())
	}
	// One write per event at most: the view flushes as it goes.
	if len(w.chunks) < 5 {
		t.Errorf("only %d writes: the view is not live", len(w.chunks))
	}
}

// When the final message says more than the stream did, the rest is
// written; when it disagrees, the message is shown in full.
func TestPartialTextDisagreement(t *testing.T) {
	start := `{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1"}},"parent_tool_use_id":null}
{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},"parent_tool_use_id":null}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\n\nHello"}},"parent_tool_use_id":null}
{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" there\n\n"}},"parent_tool_use_id":null}
`
	stop := `{"type":"stream_event","event":{"type":"content_block_stop","index":0},"parent_tool_use_id":null}
`
	cases := map[string]struct{ final, want string }{
		"more":     {"Hello there\n\nand more", "  Hello there\n  \n  and more\n"},
		"disagree": {"Goodbye", "  Hello there\n  Goodbye\n"},
		"same":     {"\n\nHello there\n\n", "  Hello there\n"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			final, _ := json.Marshal(c.final)
			in := start + `{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":` + string(final) + `}]},"parent_tool_use_id":null}` + "\n" + stop
			got := strings.TrimSuffix(render(t, []byte(in), Options{}), "■ ended without a result\n")
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// Subagents nest: a subagent's own Task call indents one level more.
func TestSubagentNesting(t *testing.T) {
	in := `{"type":"assistant","message":{"id":"a","content":[{"type":"tool_use","id":"t1","name":"Task","input":{"description":"outer","subagent_type":"general-purpose"}}]},"parent_tool_use_id":null}
{"type":"assistant","message":{"id":"b","content":[{"type":"tool_use","id":"t2","name":"Task","input":{"description":"inner"}}]},"parent_tool_use_id":"t1"}
{"type":"assistant","message":{"id":"c","content":[{"type":"tool_use","id":"t3","name":"Grep","input":{"pattern":"TODO","path":"/src"}}]},"parent_tool_use_id":"t2"}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t3","content":"a.go:1: TODO\nb.go:2: TODO","is_error":false}]},"parent_tool_use_id":"t2"}
{"type":"assistant","message":{"id":"d","content":[{"type":"text","text":"two found"}]},"parent_tool_use_id":"t2"}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"two found"}]}]},"parent_tool_use_id":"t1"}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"done","is_error":true}]},"parent_tool_use_id":null}
`
	want := `▶ Task  outer  (general-purpose)
│ ▶ Task  inner
│ │ ▶ Grep  TODO
│ │ ✓ Grep  a.go:1: TODO  (2 lines, 25 B)
│ │   two found
│ ✓ Task  two found  (9 B)
✗ Task  done  (4 B)
■ ended without a result
`
	if got := render(t, []byte(in), Options{}); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Odd lines are shown and the rest of the stream too; lines that are not
// JSON make Render fail at the end (filter --view exits non-zero); control
// characters from the model never reach the terminal.
func TestOddLines(t *testing.T) {
	in := "not json at all\n\n[1,2]\n{\"no\":\"type\"}\n{\"type\":\"rate_limit_event\",\"x\":1}\n{\"type\":\"keep_alive\"}\n" +
		`{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"evil \u001b[31mred\u0007 text"}]},"parent_tool_use_id":null}` + "\n" +
		`{"type":"result","subtype":"success","is_error":false,"num_turns":"oops","duration_ms":61500,"total_cost_usd":1.5}` + "\n"
	var out bytes.Buffer
	err := Render(context.Background(), strings.NewReader(in), "odd.ndjson", &out, Options{Width: 60})
	var bad *BadInput
	if !errors.As(err, &bad) || bad.Lines != 2 || bad.Name != "odd.ndjson" {
		t.Errorf("err = %v, want the two lines that are not JSON", err)
	}
	got := out.String()
	want := `⚠ line 1: not JSON: not json at all
⚠ line 3: not an object: [1,2]
⚠ line 4: no type: {"no":"type"}
· rate_limit_event
  evil [31mred text
■ success  0 turns  1m01s  $1.50
`
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("control characters reached the output: %q", got)
	}
}

func TestWidthCutsSummaries(t *testing.T) {
	in := `{"type":"assistant","message":{"id":"a","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"` + strings.Repeat("x", 300) + `"}}]},"parent_tool_use_id":null}` + "\n"
	for _, width := range []int{40, 80, 120} {
		got := render(t, []byte(in), Options{Width: width})
		first := strings.Split(got, "\n")[0]
		if n := len([]rune(first)); n != width {
			t.Errorf("width %d: line is %d runes: %q", width, n, first)
		}
		if !strings.HasSuffix(first, "x…") {
			t.Errorf("width %d: cut not marked: %q", width, first)
		}
	}
}

func TestRenderStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	err := Render(ctx, strings.NewReader(`{"type":"keep_alive"}`+"\n"), "test", &out, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("closed pipe") }

func TestRenderReportsWriteErrors(t *testing.T) {
	b, _ := fixtures.Capture("hello", "out")
	err := Render(context.Background(), bytes.NewReader(b), "test", failWriter{}, Options{})
	if err == nil || !strings.Contains(err.Error(), "closed pipe") {
		t.Errorf("got %v, want the write error", err)
	}
}

// The last line need not end in a newline.
func TestNoFinalNewline(t *testing.T) {
	b, _ := fixtures.Capture("hello", "out")
	a := render(t, b, Options{})
	c := render(t, bytes.TrimSuffix(b, []byte("\n")), Options{})
	if a != c {
		t.Errorf("with and without the final newline:\n%s\n%s", a, c)
	}
}

func FuzzRender(f *testing.F) {
	for _, name := range []string{"partial-tool", "subagent", "ask-answer", "api-error"} {
		b, _ := fixtures.Capture(name, "out")
		f.Add(b)
	}
	f.Add(recordingOf(f, "write-deny"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		var bad *BadInput
		if err := Render(context.Background(), bytes.NewReader(in), "test", &out, Options{Width: 50}); err != nil && !errors.As(err, &bad) {
			t.Fatal(err)
		}
		if bytes.ContainsRune(out.Bytes(), 0x1b) {
			t.Fatalf("escape code without colour: %q", out.String())
		}
	})
}

// A decision of agentjq's PreToolUse hook says so.
func TestHookDecision(t *testing.T) {
	in := `{"type":"control_request","request_id":"h1","request":{"subtype":"hook_callback","callback_id":"agentjq_guard","input":{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/.env"},"tool_use_id":"t1"}}}
{"type":"agentjq","subtype":"decision","request_id":"h1","tool":"Read","tool_use_id":"t1","behavior":"deny","decided_by":"rules","via":"hook","rule":"Read(.env)","message":"no","latency_us":5}
`
	if got := render(t, []byte(in), Options{}); !strings.Contains(got, "deny (rules (hook): Read(.env)) no") {
		t.Errorf("got\n%s", got)
	}
}
