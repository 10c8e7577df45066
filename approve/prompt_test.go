package approve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
)

// fakeTTY is a terminal made of two pipes: the test types into one and
// reads what the prompter prints from the other.
type fakeTTY struct {
	inR  *io.PipeReader
	inW  *io.PipeWriter
	outR *io.PipeReader
	outW *io.PipeWriter
	seen chan string
}

func newFakeTTY(t *testing.T) *fakeTTY {
	f := &fakeTTY{seen: make(chan string, 1024)}
	f.inR, f.inW = io.Pipe()
	f.outR, f.outW = io.Pipe()
	go func() {
		br := bufio.NewReader(f.outR)
		var cur strings.Builder
		for {
			b, err := br.ReadByte()
			if err != nil {
				close(f.seen)
				return
			}
			cur.WriteByte(b)
			// Prompts end without a newline: hand them over at ": ".
			if b == '\n' || strings.HasSuffix(cur.String(), ": ") {
				f.seen <- cur.String()
				cur.Reset()
			}
		}
	}()
	t.Cleanup(func() { f.Close() })
	return f
}

func (f *fakeTTY) Read(p []byte) (int, error)  { return f.inR.Read(p) }
func (f *fakeTTY) Write(p []byte) (int, error) { return f.outW.Write(p) }
func (f *fakeTTY) Close() error {
	f.inW.Close()
	f.outW.Close()
	return nil
}

// waitFor reads printed output until a piece containing s.
func (f *fakeTTY) waitFor(t *testing.T, s string) string {
	t.Helper()
	var all strings.Builder
	deadline := time.After(5 * time.Second)
	for {
		select {
		case l, ok := <-f.seen:
			if !ok {
				t.Fatalf("tty closed before %q; saw %q", s, all.String())
			}
			all.WriteString(l)
			if strings.Contains(l, s) {
				return all.String()
			}
		case <-deadline:
			t.Fatalf("no %q within 5s; saw %q", s, all.String())
		}
	}
}

func (f *fakeTTY) typeLine(t *testing.T, s string) {
	t.Helper()
	done := make(chan struct{})
	go func() { f.inW.Write([]byte(s + "\n")); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("typing %q blocked", s)
	}
}

type result struct {
	v   Verdict
	err error
}

func decideAsync(p *Prompter, ctx context.Context, req *Request) chan result {
	ch := make(chan result, 1)
	go func() { v, err := p.Decide(ctx, req); ch <- result{v, err} }()
	return ch
}

func wait(t *testing.T, ch chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no decision within 5s")
	}
	return result{}
}

func TestPromptYesNoInterrupt(t *testing.T) {
	tty := newFakeTTY(t)
	p := NewPrompter(tty, "/home/u")
	ctx := context.Background()

	ch := decideAsync(p, ctx, bashReq("make test"))
	shown := tty.waitFor(t, "[i]nterrupt: ")
	if !strings.Contains(shown, "command: make test") || !strings.Contains(shown, "Bash") {
		t.Errorf("prompt shows %q", shown)
	}
	tty.typeLine(t, "maybe") // not an answer: asked again
	tty.waitFor(t, "[i]nterrupt: ")
	tty.typeLine(t, "y")
	if r := wait(t, ch); r.v.Behavior != protocol.Allow || r.v.Source != protocol.ByTTY || string(r.v.UpdatedInput) != `{"command":"make test"}` {
		t.Errorf("yes: %+v", r)
	}

	ch = decideAsync(p, ctx, bashReq("rm -rf build"))
	tty.waitFor(t, "[i]nterrupt: ")
	tty.typeLine(t, "n")
	tty.waitFor(t, "(optional): ")
	tty.typeLine(t, "use make clean")
	if r := wait(t, ch); r.v.Behavior != protocol.Deny || r.v.Message != "use make clean" {
		t.Errorf("no: %+v", r)
	}

	ch = decideAsync(p, ctx, bashReq("rm -rf build"))
	tty.waitFor(t, "[i]nterrupt: ")
	tty.typeLine(t, "i")
	if r := wait(t, ch); r.v.Behavior != protocol.Deny || !r.v.Interrupt {
		t.Errorf("interrupt: %+v", r)
	}
}

func TestPromptAlwaysAddsSessionRule(t *testing.T) {
	tty := newFakeTTY(t)
	p := NewPrompter(tty, "/home/u")
	ctx := context.Background()
	req := bashReq("rm -rf /tmp/x")
	req.PermissionSuggestions = []json.RawMessage{
		json.RawMessage(`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"rm -rf /tmp/x"}],"behavior":"allow","destination":"localSettings"}`),
		json.RawMessage(`{"type":"setMode","mode":"acceptEdits","destination":"session"}`),
	}
	ch := decideAsync(p, ctx, req)
	tty.waitFor(t, "[i]nterrupt: ")
	tty.typeLine(t, "a")
	r := wait(t, ch)
	// The suggestion to persist a rule in localSettings is not passed on:
	// "always" lives in agentjq's session only.
	if r.v.Behavior != protocol.Allow || len(r.v.UpdatedPermissions) != 0 {
		t.Fatalf("always: %+v", r.v)
	}
	// The session allows the command (what it writes is the sandbox's).
	if got := p.SessionRules(); len(got) != 1 || got[0] != "Bash(rm -rf /tmp/x)" {
		t.Errorf("session rules %q", got)
	}
	// The same call again: allowed without a prompt.
	r = wait(t, decideAsync(p, ctx, bashReq("rm -rf /tmp/x")))
	if r.v.Behavior != protocol.Allow || !strings.HasPrefix(r.v.Rule, "session ") {
		t.Errorf("again: %+v", r.v)
	}
	// A different call still asks; a compound one asks for the new part.
	ch = decideAsync(p, ctx, bashReq("rm -rf /tmp/x && rm -rf /"))
	tty.waitFor(t, "[i]nterrupt: ")
	tty.typeLine(t, "n")
	tty.waitFor(t, "(optional): ")
	tty.typeLine(t, "")
	if r := wait(t, ch); r.v.Behavior != protocol.Deny || r.v.Message == "" {
		t.Errorf("compound: %+v", r.v)
	}
}

// TestPromptAlwaysNeverAllowsEveryCommand: "always" on a command with a
// part chosen at run time adds no rule for that part (a bare Bash rule
// would allow every command for the session): the next such call asks.
func TestPromptAlwaysNeverAllowsEveryCommand(t *testing.T) {
	tty := newFakeTTY(t)
	p := NewPrompter(tty, "/home/u")
	ctx := context.Background()
	for _, cmd := range []string{"$(curl -s x.example) --flag", "echo ok && $TOOL run"} {
		ch := decideAsync(p, ctx, bashReq(cmd))
		tty.waitFor(t, "[i]nterrupt: ")
		tty.typeLine(t, "a")
		if r := wait(t, ch); r.v.Behavior != protocol.Allow {
			t.Fatalf("%s: always: %+v", cmd, r.v)
		}
	}
	for _, rule := range p.SessionRules() {
		if rule == "Bash" {
			t.Fatalf("session rules %q hold the bare Bash rule", p.SessionRules())
		}
	}
	ch := decideAsync(p, ctx, bashReq("rm -rf /"))
	tty.waitFor(t, "[i]nterrupt: ")
	tty.typeLine(t, "n")
	tty.waitFor(t, "(optional): ")
	tty.typeLine(t, "")
	if r := wait(t, ch); r.v.Behavior != protocol.Deny {
		t.Errorf("an unrelated command after the always answers: %+v", r.v)
	}
}

func TestPromptCancelled(t *testing.T) {
	tty := newFakeTTY(t)
	p := NewPrompter(tty, "")
	ctx, cancel := context.WithCancel(context.Background())
	ch := decideAsync(p, ctx, bashReq("make"))
	tty.waitFor(t, "[i]nterrupt: ")
	cancel()
	tty.waitFor(t, "withdrew the request")
	if r := wait(t, ch); r.err == nil {
		t.Errorf("cancelled prompt returned %+v", r.v)
	}
	// A line typed for the withdrawn prompt is not taken as the next answer.
	tty.typeLine(t, "y")
	// The line has left the pipe; wait until the prompter holds it, so the
	// next prompt is opened with it already typed.
	deadline := time.Now().Add(5 * time.Second)
	for len(p.lines) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the prompter never read the typed line")
		}
		time.Sleep(time.Millisecond)
	}
	ch = decideAsync(p, context.Background(), bashReq("make install"))
	tty.waitFor(t, "[i]nterrupt: ")
	tty.typeLine(t, "n")
	tty.waitFor(t, "(optional): ")
	tty.typeLine(t, "")
	if r := wait(t, ch); r.v.Behavior != protocol.Deny {
		t.Errorf("stale line answered the next prompt: %+v", r.v)
	}
}

func TestPromptTTYClosed(t *testing.T) {
	tty := newFakeTTY(t)
	p := NewPrompter(tty, "")
	ch := decideAsync(p, context.Background(), bashReq("make"))
	tty.waitFor(t, "[i]nterrupt: ")
	tty.inW.Close()
	if r := wait(t, ch); r.v.Behavior != protocol.Deny || !strings.Contains(r.v.Message, "terminal closed") {
		t.Errorf("closed: %+v", r)
	}
}

func TestPromptPicker(t *testing.T) {
	tty := newFakeTTY(t)
	p := NewPrompter(tty, "")
	req := &Request{RequestID: "q", CanUseTool: protocol.CanUseTool{ToolName: "AskUserQuestion", RequiresUserInteraction: true,
		Input: json.RawMessage(`{"questions":[
 {"question":"Pet?","header":"Pet","options":[{"label":"Cats","description":"Independent"},{"label":"Dogs"}],"multiSelect":false},
 {"question":"Languages?","header":"Lang","options":[{"label":"Go"},{"label":"C"},{"label":"Rust"}],"multiSelect":true}]}`)}}
	ch := decideAsync(p, context.Background(), req)
	shown := tty.waitFor(t, "decline: ")
	if !strings.Contains(shown, "1) Cats: Independent") || !strings.Contains(shown, "[Pet] Pet?") {
		t.Errorf("picker shows %q", shown)
	}
	tty.typeLine(t, "1,2") // two answers to a single-select question: asked again
	tty.waitFor(t, "decline: ")
	tty.typeLine(t, "2")
	if shown := tty.waitFor(t, "decline: "); !strings.Contains(shown, "several: 1,3") {
		t.Errorf("multi-select prompt %q", shown)
	}
	tty.typeLine(t, "1,3")
	r := wait(t, ch)
	if r.v.Behavior != protocol.Allow || !strings.Contains(string(r.v.UpdatedInput), `"answers":{"Languages?":"Go, Rust","Pet?":"Dogs"}`) {
		t.Errorf("picker: %+v %s", r.v, r.v.UpdatedInput)
	}

	ch = decideAsync(p, context.Background(), req)
	tty.waitFor(t, "decline: ")
	tty.typeLine(t, "")
	if r := wait(t, ch); r.v.Behavior != protocol.Deny || r.v.Message == "" {
		t.Errorf("declined: %+v", r.v)
	}
}

func TestChainUsesTerminalForAsk(t *testing.T) {
	tty := newFakeTTY(t)
	rules := writePolicy(t, "r.json", `{"ask": ["Bash(make:*)"], "allow": ["Bash(make:*)"]}`)
	c, err := NewChain(ChainOptions{Policies: []string{rules}, TTY: func() (io.ReadWriteCloser, error) { return tty, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ch := make(chan Verdict, 1)
	go func() { v, _ := c.Decide(context.Background(), bashReq("make")); ch <- v }()
	tty.waitFor(t, "[i]nterrupt: ")
	tty.typeLine(t, "y")
	select {
	case v := <-ch:
		if v.Behavior != protocol.Allow || v.Source != protocol.ByTTY {
			t.Errorf("got %+v", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no decision")
	}
}

// TestTerminalInputRoutesLines: lines typed while no prompt is open are
// turns; a line typed while one is open is its answer and never a turn.
func TestTerminalInputRoutesLines(t *testing.T) {
	r, w := io.Pipe()
	in := NewTerminalInput(r, false)
	turns := in.Turns()
	w.Write([]byte("first turn\n"))
	buf := make([]byte, 64)
	n, _ := turns.Read(buf)
	if string(buf[:n]) != "first turn\n" {
		t.Fatalf("turn %q", buf[:n])
	}
	in.setPrompting(true)
	w.Write([]byte("y\n"))
	select {
	case a := <-in.answers:
		if a != "y" {
			t.Errorf("answer %q", a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the answer did not reach the prompt")
	}
	in.setPrompting(false)
	w.Write([]byte("second turn\n"))
	w.Close()
	rest, _ := io.ReadAll(turns)
	if string(rest) != "second turn\n" {
		t.Errorf("turns after the prompt: %q (the answer must not be one)", rest)
	}
}

// TestPromptLeadsWithKeyInput: the prompt's first line about a call is its
// key input, the one approve test, the view and agentlib's key_input show
// (protocol.ToolKey), for every tool call in the captures; the context
// lines follow it.
func TestPromptLeadsWithKeyInput(t *testing.T) {
	seen := 0
	for _, name := range fixtures.Scenarios() {
		b, err := fixtures.Capture(name, "out")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			var ev struct {
				Type    string `json:"type"`
				Message struct {
					Content []struct {
						Type  string          `json:"type"`
						Name  string          `json:"name"`
						Input json.RawMessage `json:"input"`
					} `json:"content"`
				} `json:"message"`
				Request protocol.CanUseTool `json:"request"`
			}
			if json.Unmarshal([]byte(line), &ev) != nil {
				continue
			}
			var reqs []*Request
			if ev.Type == "control_request" && ev.Request.Subtype == protocol.SubCanUseTool {
				reqs = append(reqs, &Request{CanUseTool: ev.Request})
			}
			for _, c := range ev.Message.Content {
				if c.Type == "tool_use" {
					reqs = append(reqs, &Request{CanUseTool: protocol.CanUseTool{ToolName: c.Name, Input: c.Input}})
				}
			}
			for _, req := range reqs {
				key := protocol.ToolKeyJSON(req.ToolName, req.Input)
				want := key.Field + ": " + clip(key.Text, 500)
				if key.Field == "" {
					want = "input: " + clip(key.Text, 500)
				}
				if got := keyInputLines(req); got[0] != want {
					t.Errorf("%s: %s: the prompt leads with %q, the key is %q", name, req.ToolName, got[0], want)
				}
				seen++
			}
		}
	}
	if seen == 0 {
		t.Fatal("no tool calls in the captures")
	}
	// A Task leads with its description (the key), and still shows its
	// prompt and subagent type.
	got := keyInputLines(&Request{CanUseTool: protocol.CanUseTool{ToolName: "Task",
		Input: json.RawMessage(`{"description":"Say hello","prompt":"Greet the user","subagent_type":"general-purpose"}`)}})
	if want := []string{"description: Say hello", "subagent_type: general-purpose", "prompt: Greet the user"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Task: %q, want %q", got, want)
	}
}

// "always" to the sandbox's network request allows that host for the
// session, not every host.
func TestPromptAlwaysNetworkHost(t *testing.T) {
	p := NewPrompter(newFakeTTY(t), "/home/u")
	req := &Request{CanUseTool: protocol.CanUseTool{ToolName: "SandboxNetworkAccess", Input: json.RawMessage(`{"host":"Example.COM"}`)}}
	if got := p.addSession(req); len(got) != 1 || got[0] != "SandboxNetworkAccess(domain:example.com)" {
		t.Fatalf("session rules %q", got)
	}
	for host, want := range map[string]string{"example.com": protocol.Allow, "other.org": ""} {
		in, _ := json.Marshal(map[string]string{"host": host})
		r := &Request{CanUseTool: protocol.CanUseTool{ToolName: "SandboxNetworkAccess", Input: in}}
		if v := p.session.decide(r); v.Behavior != want {
			t.Errorf("%s: %q, want %q", host, v.Behavior, want)
		}
	}
	if got := p.addSession(&Request{CanUseTool: protocol.CanUseTool{ToolName: "SandboxNetworkAccess", Input: json.RawMessage(`{"host":"a:1"}`)}}); len(got) != 0 {
		t.Errorf("an unreadable host: session rules %q", got)
	}
}
