package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/syncio"
)

// fakeClient is a client of a proxied session: it reads the session's
// stdout and answers each control request with answer (none when it
// returns nil), on a pipe that is the session's stdin.
type fakeClient struct {
	mu      sync.Mutex
	out     bytes.Buffer
	partial []byte
	seen    []protocol.Envelope
	in      *io.PipeWriter
	answer  func(env protocol.Envelope) [][]byte
	first   []string // written before anything else
	done    chan struct{}
	once    sync.Once
}

func (c *fakeClient) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.out.Write(p)
	c.partial = append(c.partial, p...)
	var lines [][]byte
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, append([]byte(nil), c.partial[:i]...))
		c.partial = c.partial[i+1:]
	}
	c.mu.Unlock()
	for _, l := range lines {
		env, err := protocol.DecodeEnvelope(l)
		if err != nil {
			continue
		}
		c.mu.Lock()
		c.seen = append(c.seen, env)
		c.mu.Unlock()
		if env.Type == protocol.TypeControlRequest && c.answer != nil {
			answers := c.answer(env)
			go func() {
				for _, a := range answers {
					c.in.Write(append(a, '\n'))
				}
			}()
		}
		if env.Type == protocol.TypeResult {
			c.once.Do(func() { close(c.done) })
		}
	}
	return len(p), nil
}

// runProxied runs the fake agent scenario with the session in proxy mode.
func runProxied(t *testing.T, agentPath string, env []string, c *fakeClient, tweak func(*Options)) (Report, string, string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "fake.log")
	pr, pw := io.Pipe()
	c.in, c.done = pw, make(chan struct{})
	var errb syncio.Buffer
	opts := Options{
		Path:    agentPath,
		Env:     append(env, "AGENTJQ_FAKE_LOG="+logPath),
		Stdin:   pr,
		Stdout:  c,
		Stderr:  &errb,
		Grace:   500 * time.Millisecond,
		Forward: &Forward{},
	}
	if tweak != nil {
		tweak(&opts)
	}
	go func() {
		for _, l := range c.first {
			pw.Write([]byte(l + "\n"))
		}
		select {
		case <-c.done:
		case <-time.After(20 * time.Second):
		}
		// Like an SDK: a moment for late answers, then stdin closes.
		time.Sleep(200 * time.Millisecond)
		pw.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := Run(ctx, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	logb, _ := os.ReadFile(logPath)
	return rep, string(logb), errb.String()
}

func fakeEnv(scenario string) []string {
	return append(os.Environ(), "AGENTJQ_FAKE_AGENT="+scenario)
}

func allowAnswer(env protocol.Envelope) []byte {
	var req protocol.CanUseTool
	_ = json.Unmarshal(env.Request, &req)
	return protocol.SuccessResponse(env.RequestID, protocol.AllowResult(&req, nil))
}

// TestForwardPassThroughAndOneAnswer: with nothing of agentjq's in the way
// the client reads the agent's stdout byte for byte, and of its two
// answers to one request only the first reaches the agent.
func TestForwardPassThroughAndOneAnswer(t *testing.T) {
	c := &fakeClient{
		first: []string{`{"type":"user","message":{"role":"user","content":"please WRITE banana"},"parent_tool_use_id":null,"session_id":""}`},
		answer: func(env protocol.Envelope) [][]byte {
			a := allowAnswer(env)
			return [][]byte{a, a}
		},
	}
	rep, log, stderr := runProxied(t, os.Args[0], fakeEnv("capture:write-allow"), c, nil)
	want, err := fixtures.Capture("write-allow", "out")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.out.Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("the client's stdout is not the agent's:\n%s\nwant:\n%s", got, want)
	}
	resp := responses(log)
	id := "ee25409c-b461-406a-9d17-8717dbd9e419"
	if resp[id] == nil || resp[id+"#dup"] != nil {
		t.Fatalf("the agent got %d answers for %s, want 1:\n%s", len(resp), id, log)
	}
	if !strings.Contains(stderr, "dropped the client's control_response") {
		t.Fatalf("no warning for the duplicate answer on stderr: %q", stderr)
	}
	if rep.ExitCode != 0 {
		t.Fatalf("exit code %d, want the agent's 0", rep.ExitCode)
	}
}

// TestForwardPolicyDenyIsHeld: a policy deny is answered by agentjq and
// the client never sees the request; an allow goes to the client, whose
// deny then wins.
func TestForwardPolicyDenyIsHeld(t *testing.T) {
	for _, policy := range []string{protocol.Deny, protocol.Allow} {
		t.Run(policy, func(t *testing.T) {
			var tapped []string
			var tapMu sync.Mutex
			c := &fakeClient{
				first: []string{`{"type":"user","message":{"role":"user","content":"please WRITE banana"},"parent_tool_use_id":null,"session_id":""}`},
				answer: func(env protocol.Envelope) [][]byte {
					return [][]byte{protocol.SuccessResponse(env.RequestID, map[string]string{"behavior": "deny", "message": "the client says no"})}
				},
			}
			_, log, _ := runProxied(t, os.Args[0], fakeEnv("capture:write-allow"), c, func(o *Options) {
				o.Approver = approve.DeciderFunc(func(context.Context, *approve.Request) (approve.Verdict, error) {
					return approve.Verdict{Behavior: policy, Source: protocol.ByRules, Rule: "test", Message: "the policy says " + policy}, nil
				})
				o.Forward.TapParty = func(dir protocol.Direction, party protocol.Party, line []byte, _ protocol.Known) {
					tapMu.Lock()
					defer tapMu.Unlock()
					tapped = append(tapped, string(dir)+" "+string(party)+" "+string(line))
				}
			})
			sawRequest := false
			for _, env := range c.seen {
				if env.Type == protocol.TypeControlRequest {
					sawRequest = true
				}
			}
			if sawRequest != (policy == protocol.Allow) {
				t.Fatalf("policy %s: the client saw the request: %v", policy, sawRequest)
			}
			resp := responses(log)
			id := "ee25409c-b461-406a-9d17-8717dbd9e419"
			r := resp[id]
			if r == nil || resp[id+"#dup"] != nil {
				t.Fatalf("answers for %s: %v", id, resp)
			}
			inner, _ := r["response"].(map[string]any)
			if inner["behavior"] != protocol.Deny {
				t.Fatalf("policy %s, client deny: the agent got %v", policy, r)
			}
			wantParty := "in client "
			wantBy := `"decided_by":"client"`
			if policy == protocol.Deny {
				wantParty, wantBy = "in agentjq ", `"decided_by":"rules"`
			}
			var answerTapped, decision bool
			for _, l := range tapped {
				if strings.HasPrefix(l, wantParty) && strings.Contains(l, id) && strings.Contains(l, "control_response") {
					answerTapped = true
				}
				if strings.HasPrefix(l, "event ") && strings.Contains(l, wantBy) {
					decision = true
				}
			}
			if !answerTapped || !decision {
				t.Fatalf("the tap lacks the answer by %q (%v) or the decision %s (%v):\n%s", wantParty, answerTapped, wantBy, decision, strings.Join(tapped, "\n"))
			}
		})
	}
}

// TestForwardInitializeMergedOnce: the client's initialize goes to the
// agent once, with agentjq's hooks added under renamed ids; the agent's
// callback for the client's own id reaches the client.
func TestForwardInitializeMergedOnce(t *testing.T) {
	var handled int
	c := &fakeClient{
		first: []string{
			`{"type":"control_request","request_id":"init-1","request":{"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"]}]}}}`,
			`{"type":"user","message":{"role":"user","content":"run BASH"},"parent_tool_use_id":null,"session_id":""}`,
		},
		answer: func(env protocol.Envelope) [][]byte {
			if env.ControlSubtype() == protocol.SubHookCallback {
				return [][]byte{protocol.SuccessResponse(env.RequestID, map[string]any{})}
			}
			return [][]byte{allowAnswer(env)}
		},
	}
	_, log, _ := runProxied(t, os.Args[0], fakeEnv("capture:hook-callback"), c, func(o *Options) {
		o.Init = map[string]any{"subtype": "initialize", "hooks": map[string]any{"PreToolUse": []map[string]any{{"hookCallbackIds": []string{"hook_0"}}}}}
		o.Handlers = map[string]ControlHandler{protocol.SubHookCallback: func(context.Context, string, json.RawMessage) (any, error) {
			handled++
			return map[string]any{}, nil
		}}
	})
	var inits []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, `"initialize"`) {
			inits = append(inits, l)
		}
	}
	if len(inits) != 1 || !strings.Contains(inits[0], `"hook_0"`) || !strings.Contains(inits[0], `"agentjq-hook_0"`) || !strings.Contains(inits[0], `"init-1"`) {
		t.Fatalf("the agent got these initialize requests, want one merged under init-1:\n%s", strings.Join(inits, "\n"))
	}
	hookSeen := false
	for _, env := range c.seen {
		if env.ControlSubtype() == protocol.SubHookCallback {
			hookSeen = true
		}
	}
	if !hookSeen || handled != 0 {
		t.Fatalf("the client's hook_0 callback: seen by the client %v, by agentjq %d times", hookSeen, handled)
	}
}

// TestForwardOwnHookAnsweredByAgentjq: without a client initialize,
// agentjq sends its own before the client's first line, answers the
// callbacks for its renamed ids itself, and keeps them and the reply to
// its initialize from the client.
func TestForwardOwnHookAnsweredByAgentjq(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	// A shell agent: reads agentjq's initialize, answers it, calls
	// agentjq's hook, waits for the answer, then a result.
	script := `#!/bin/sh
read -r init; echo "IN $init" >> "$AGENTJQ_FAKE_LOG"
id=$(printf '%s' "$init" | sed 's/.*"request_id":"\([^"]*\)".*/\1/')
echo '{"type":"control_response","response":{"subtype":"success","request_id":"'"$id"'","response":{}}}'
read -r turn; echo "IN $turn" >> "$AGENTJQ_FAKE_LOG"
echo '{"type":"control_request","request_id":"cb-1","request":{"subtype":"hook_callback","callback_id":"agentjq-hook_0","input":{}}}'
read -r answer; echo "IN $answer" >> "$AGENTJQ_FAKE_LOG"
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","num_turns":1}'
while read -r l; do :; done
exit 4
`
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var gotID string
	c := &fakeClient{first: []string{`{"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null,"session_id":""}`}}
	rep, log, _ := runProxied(t, agent, os.Environ(), c, func(o *Options) {
		o.Init = map[string]any{"subtype": "initialize", "hooks": map[string]any{"PreToolUse": []map[string]any{{"hookCallbackIds": []string{"hook_0"}}}}}
		o.Handlers = map[string]ControlHandler{protocol.SubHookCallback: func(_ context.Context, _ string, req json.RawMessage) (any, error) {
			var hc protocol.HookCallback
			_ = json.Unmarshal(req, &hc)
			gotID = hc.CallbackID
			return map[string]any{"decision": "block"}, nil
		}}
	})
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"agentjq-hook_0"`) || !strings.Contains(lines[1], `"type":"user"`) || !strings.Contains(lines[2], `"cb-1"`) || !strings.Contains(lines[2], `"block"`) {
		t.Fatalf("the agent's stdin:\n%s", log)
	}
	if gotID != "hook_0" {
		t.Fatalf("agentjq's handler got callback id %q, want its own hook_0", gotID)
	}
	if got := c.out.String(); got != `{"type":"result","subtype":"success","is_error":false,"result":"done","num_turns":1}`+"\n" {
		t.Fatalf("the client saw more than the result:\n%s", got)
	}
	if rep.ExitCode != 4 {
		t.Fatalf("exit code %d, want the agent's 4", rep.ExitCode)
	}
}

func TestMergeInitialize(t *testing.T) {
	client := json.RawMessage(`{"subtype":"initialize","systemPrompt":[""],"hooks":{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0","agentjq-x"]}]},"sdkMcpServers":["probe"]}`)
	ours := json.RawMessage(`{"subtype":"initialize","hooks":{"PreToolUse":[{"hookCallbackIds":["hook_0"],"timeout":65}],"Stop":[{"hookCallbackIds":["hook_1"]}]},"sdkMcpServers":["probe","agentjq"]}`)
	merged, ids, err := MergeInitialize(client, ours)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		SystemPrompt []string                                        `json:"systemPrompt"`
		Hooks        map[string][]struct{ HookCallbackIds []string } `json:"hooks"`
		Servers      []string                                        `json:"sdkMcpServers"`
	}
	if err := json.Unmarshal(merged, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.SystemPrompt) != 1 || len(m.Hooks["PreToolUse"]) != 2 || len(m.Hooks["Stop"]) != 1 {
		t.Fatalf("merged: %s", merged)
	}
	own := m.Hooks["PreToolUse"][1].HookCallbackIds[0]
	if own == "hook_0" || strings.HasPrefix("agentjq-x", own[:len(own)-len("hook_0")]) || ids.Hooks[own] != "hook_0" {
		t.Fatalf("agentjq's hook went as %q (ids %v): it may collide with the client's", own, ids.Hooks)
	}
	if ids.Hooks[m.Hooks["Stop"][0].HookCallbackIds[0]] != "hook_1" {
		t.Fatalf("ids %v", ids.Hooks)
	}
	if len(m.Servers) != 3 || m.Servers[0] != "probe" || m.Servers[2] != "agentjq" || ids.Servers[m.Servers[1]] != "probe" || m.Servers[1] == "probe" {
		t.Fatalf("servers %v, ids %v", m.Servers, ids.Servers)
	}
	alone, ids2, err := MergeInitialize(nil, ours)
	if err != nil || !bytes.Contains(alone, []byte(`"agentjq-hook_0"`)) || ids2.Hooks["agentjq-hook_0"] != "hook_0" || ids2.Servers["probe"] != "probe" {
		t.Fatalf("agentjq's own initialize: %s %v %v", alone, ids2, err)
	}
}

// TestClassifyForwardRoutesWhatClassifyRoutes: the proxy's classifier
// skips the scan only for lines a proxy never acts on; every control line
// of every capture is still routed, and a control line with its keys in
// another order too.
func TestClassifyForwardRoutesWhatClassifyRoutes(t *testing.T) {
	var all []byte
	for _, name := range fixtures.Scenarios() {
		data, err := fixtures.Capture(name, "out")
		if err == nil {
			all = append(all, data...)
		}
	}
	all = append(all, `{"request_id":"x","type":"control_request","request":{"subtype":"can_use_tool"}}`+"\n"...)
	all = append(all, `{"type":"system","subtype":"init","session_id":"s"}`+"\n"...)
	a := classifyLines(all, nil, classify)
	b := classifyLines(all, nil, classifyForward)
	if len(a) != len(b) || len(a) < 100 {
		t.Fatalf("%d lines against %d", len(a), len(b))
	}
	routedControl := 0
	for i, li := range a {
		line := all[li.start:li.end]
		ka, kb := li.kind, b[i].kind
		if ka == kb {
			if kb == lineRouted && bytes.Contains(line, []byte(`"control_`)) {
				routedControl++
			}
			continue
		}
		if kb != linePlain || !startsPassOnly(line) {
			t.Fatalf("line %d classified %d, spawn's classifier %d: %.200s", i, kb, ka, line)
		}
		if bytes.Contains(line[:min(len(line), 40)], []byte("control_")) || bytes.HasPrefix(line, []byte(`{"type":"system","subtype":"init"`)) {
			t.Fatalf("line %d would not be routed: %.200s", i, line)
		}
	}
	if routedControl < 10 || b[len(b)-2].kind != lineRouted || b[len(b)-1].kind != lineRouted {
		t.Fatalf("only %d control lines routed; last two %d %d", routedControl, b[len(b)-2].kind, b[len(b)-1].kind)
	}
}
