package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/protocol"
)

// chainSays is a Screen that answers behavior for every call and records
// the inputs it judged.
func chainSays(behavior string, judged *[]string) func(context.Context, *approve.Request) approve.Verdict {
	return func(_ context.Context, req *approve.Request) approve.Verdict {
		if judged != nil {
			*judged = append(*judged, string(req.Input))
		}
		return approve.Verdict{Behavior: behavior, Message: "chain says " + behavior, Source: protocol.ByRules, Rule: "r"}
	}
}

func guardCallback(tool, input string) json.RawMessage {
	return json.RawMessage(`{"subtype":"hook_callback","callback_id":"` + GuardID + `","input":{"session_id":"s","cwd":"/p/sub","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"toolu_1"}}`)
}

func decisionOf(t *testing.T, answer json.RawMessage) (decision, reason string, spec map[string]any) {
	t.Helper()
	var out struct {
		Spec map[string]any `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		t.Fatalf("answer %s: %v", answer, err)
	}
	decision, _ = out.Spec["permissionDecision"].(string)
	reason, _ = out.Spec["permissionDecisionReason"].(string)
	return decision, reason, out.Spec
}

func TestGuardAlone(t *testing.T) {
	for _, tc := range []struct{ chain, want, event string }{
		{protocol.Deny, "deny", "deny"},
		{protocol.Ask, "ask", "ask"},
		{"", "ask", "ask"}, // undecided: the permission path decides
		{protocol.Allow, "", "allow"},
	} {
		var got *approve.Request
		g := &Guard{Screen: func(ctx context.Context, req *approve.Request) approve.Verdict {
			got = req
			return chainSays(tc.chain, nil)(ctx, req)
		}}
		answer, d, ok := g.Answer(context.Background(), "req-1", guardCallback("Read", `{"file_path":".env"}`))
		if !ok {
			t.Fatal("the guard did not take its own callback")
		}
		dec, reason, _ := decisionOf(t, answer)
		if dec != tc.want || d.Behavior != tc.event || d.Tool != "Read" || d.ToolUseID != "toolu_1" {
			t.Errorf("chain %q: answer %s, decision %+v", tc.chain, answer, d)
		}
		if tc.want == "" && string(answer) != "{}" {
			t.Errorf("chain allow: answer %s, want no opinion", answer)
		}
		if tc.want == "deny" && (reason != "chain says deny" || d.Message != reason || d.DecidedBy != protocol.ByRules) {
			t.Errorf("deny: reason %q, decision %+v", reason, d)
		}
		if got.ShellCwd != "/p/sub" || got.Cwd != "" || got.ToolName != "Read" || got.RequestID != "req-1" {
			t.Errorf("request %+v", got)
		}
	}
	if _, _, ok := (&Guard{Screen: chainSays("", nil)}).Answer(context.Background(), "r", json.RawMessage(`{"subtype":"hook_callback","callback_id":"hook_0","input":{}}`)); ok {
		t.Errorf("the guard took a user hook's callback")
	}
	answer, d, ok := (&Guard{Screen: chainSays(protocol.Allow, nil)}).Answer(context.Background(), "r", json.RawMessage(`{"subtype":"hook_callback","callback_id":"`+GuardID+`","input":"nonsense"}`))
	if dec, _, _ := decisionOf(t, answer); !ok || dec != "deny" || d.Behavior != protocol.Deny {
		t.Errorf("unreadable input: %s %+v", answer, d)
	}
	// A guard call whose envelope does not decode (a field of another
	// type) is still the guard's, and blocked: an error would let it run.
	answer, d, ok = (&Guard{Screen: chainSays(protocol.Allow, nil)}).Answer(context.Background(), "r", json.RawMessage(`{"subtype":"hook_callback","callback_id":"`+GuardID+`","tool_use_id":7,"input":{}}`))
	if dec, _, _ := decisionOf(t, answer); !ok || dec != "deny" || d.Behavior != protocol.Deny {
		t.Errorf("unreadable callback: %s %+v", answer, d)
	}
}

// TestGuardWithUserHooks: the user's PreToolUse hooks run first, in order,
// and the stricter answer wins.
func TestGuardWithUserHooks(t *testing.T) {
	allow := `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"user allows"}}'`
	ask := `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"user asks"}}'`
	block := `echo 'user blocks' >&2; exit 2`
	for _, tc := range []struct {
		name, chain, user, want, by string
	}{
		{"user deny beats chain allow", protocol.Allow, block, "deny", protocol.ByHook},
		{"chain deny beats user allow", protocol.Deny, allow, "deny", protocol.ByRules},
		{"user allow does not skip the chain's ask", "", allow, "ask", protocol.ByRules},
		{"user ask beats chain allow", protocol.Allow, ask, "ask", protocol.ByHook},
		{"both allow: the user's allow passes", protocol.Allow, allow, "allow", protocol.ByRules},
		{"no opinion from the user", protocol.Allow, `true`, "", protocol.ByRules},
		{"a failing hook is no opinion", protocol.Allow, `exit 1`, "", protocol.ByRules},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Runner{Hooks: []Hook{{Event: "PreToolUse", Matcher: "Bash|Read", Command: tc.user}, {Event: "PreToolUse", Matcher: "Write", Command: block}},
				Env: []string{"PATH=" + os.Getenv("PATH")}, Timeout: 5 * time.Second}
			g := &Guard{Screen: chainSays(tc.chain, nil), Runner: r}
			answer, d, _ := g.Answer(context.Background(), "r", guardCallback("Read", `{"file_path":"a"}`))
			dec, reason, _ := decisionOf(t, answer)
			if dec != tc.want || d.DecidedBy != tc.by {
				t.Errorf("answer %s, decision %+v; want %q by %s", answer, d, tc.want, tc.by)
			}
			if tc.want == "deny" && tc.by == protocol.ByHook && reason != "user blocks" {
				t.Errorf("reason %q", reason)
			}
		})
	}
}

// TestGuardJudgesTheRewrittenInput: a user hook that changes the input
// makes the chain judge both the new input and the original; the answer
// carries the new one.
func TestGuardJudgesTheRewrittenInput(t *testing.T) {
	rewrite := `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"rm -rf /"}}}'`
	second := `cat > "$OUT"` // sees the input as the first hook left it
	out := t.TempDir() + "/seen.json"
	r := &Runner{Hooks: []Hook{{Event: "PreToolUse", Command: rewrite}, {Event: "PreToolUse", Matcher: "Bash", Command: second}},
		Env: []string{"PATH=" + os.Getenv("PATH"), "OUT=" + out}, Timeout: 5 * time.Second}
	var judged []string
	g := &Guard{Screen: func(ctx context.Context, req *approve.Request) approve.Verdict {
		judged = append(judged, string(req.Input))
		if strings.Contains(string(req.Input), "rm -rf") {
			return approve.Verdict{Behavior: protocol.Deny, Message: "no rm", Source: protocol.ByRules}
		}
		return approve.Verdict{Behavior: protocol.Allow, Source: protocol.ByRules}
	}, Runner: r}
	answer, d, _ := g.Answer(context.Background(), "r", guardCallback("Bash", `{"command":"echo hi"}`))
	if dec, _, spec := decisionOf(t, answer); dec != "deny" || d.Behavior != protocol.Deny || spec["updatedInput"] == nil {
		t.Errorf("answer %s, decision %+v", answer, d)
	}
	if len(judged) != 1 || !strings.Contains(judged[0], "rm -rf") {
		t.Errorf("judged %q (a deny of the new input needs no second look)", judged)
	}
	seen, _ := os.ReadFile(out)
	if !strings.Contains(string(seen), `"command":"rm -rf /"`) {
		t.Errorf("the second hook saw %s", seen)
	}

	// A harmless rewrite of a denied original: the original is judged too.
	r.Hooks[0].Command = `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"echo safe"}}}'`
	judged = nil
	answer, _, _ = g.Answer(context.Background(), "r", guardCallback("Bash", `{"command":"rm -rf /"}`))
	if dec, _, _ := decisionOf(t, answer); dec != "deny" || len(judged) != 2 {
		t.Errorf("answer %s, judged %q", answer, judged)
	}
}

func TestGuardReadsHookAnswersExactly(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{`{"hookSpecificOutput":{"permissionDecision":"deny"}}`, protocol.Deny},
		{`{"hookSpecificOutput":{"PermissionDecision":"deny"}}`, ""}, // keys are case-sensitive, as the agent reads them
		{`{"decision":"block","reason":"old style"}`, protocol.Deny},
		{`{"decision":"approve"}`, protocol.Allow},
		{`{"hookSpecificOutput":{"permissionDecision":"allow"},"decision":"block"}`, protocol.Deny},
		{`not json`, ""},
	} {
		if a := readUserAnswer(json.RawMessage(tc.out)); a.decision != tc.want {
			t.Errorf("%s: %q, want %q", tc.out, a.decision, tc.want)
		}
	}
}

func TestGuardRegistration(t *testing.T) {
	r := &Runner{Hooks: []Hook{{Event: "PreToolUse", Matcher: "Bash", Command: "x"}, {Event: "Stop", Command: "y"}}, Timeout: 10 * time.Second}
	g := &Guard{Screen: chainSays("", nil), Runner: r, Budget: 20 * time.Second}
	reg := g.Hooks()
	pre := reg["PreToolUse"]
	if len(pre) != 1 || pre[0].Matcher != "" || pre[0].HookCallbackIDs[0] != GuardID {
		t.Errorf("PreToolUse %+v: want the guard alone, for every tool", pre)
	}
	if pre[0].Timeout != 35 { // the chain's budget, the user's hook, a margin
		t.Errorf("timeout %d", pre[0].Timeout)
	}
	if stop := reg["Stop"]; len(stop) != 1 || stop[0].HookCallbackIDs[0] != CallbackID(1) {
		t.Errorf("Stop %+v", stop)
	}
}

func TestMatchTool(t *testing.T) {
	for _, tc := range []struct {
		matcher, tool string
		want          bool
	}{
		{"", "Read", true}, {"*", "Bash", true}, {"Bash", "Bash", true}, {"Bash", "BashOutput", false},
		{"Edit|Write", "Write", true}, {"Edit|Write", "Read", false}, {"mcp__.*", "mcp__x__y", true},
		{"Notebook.*", "NotebookEdit", true}, {"(", "(", false},
	} {
		if got := MatchTool(tc.matcher, tc.tool); got != tc.want {
			t.Errorf("MatchTool(%q, %q) = %v", tc.matcher, tc.tool, got)
		}
	}
}

// BenchmarkGuardAnswer is agentjq's part of one guard call in process: the
// hook input read, a real rules file's verdict, the answer written.
func BenchmarkGuardAnswer(b *testing.B) {
	dir := b.TempDir()
	rules := dir + "/rules.json"
	os.WriteFile(rules, []byte(`{"allow":["Read","Bash(git diff:*)","Bash(go test:*)","Bash(echo:*)","Bash(head:*)","Edit(src/**)"],"deny":["Read(.env)","Bash(rm:*)"]}`), 0o644)
	c, err := approve.NewChain(approve.ChainOptions{Policies: []string{rules}, Cwd: dir})
	if err != nil {
		b.Fatal(err)
	}
	g := &Guard{Screen: c.Screen}
	req := guardCallback("Bash", `{"command":"git diff HEAD~1 -- src/main.go | head -50","description":"show the diff"}`)
	at := strings.Index(string(req), "toolu_1")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		// A call of its own each time: the chain decides each call once.
		req := append(append(append([]byte(nil), req[:at]...), fmt.Sprintf("toolu_%09d", i)...), req[at+len("toolu_1"):]...)
		if _, d, _ := g.Answer(context.Background(), "r", req); d.Behavior != protocol.Allow {
			b.Fatalf("decision %+v", d)
		}
	}
}

// TestGuardClientDecides: in a proxy only the chain's deny is agentjq's;
// an undecided chain is no objection and no decision (the agent's own
// permission flow, and the client, decide), and a user hook's words still
// count.
func TestGuardClientDecides(t *testing.T) {
	for _, tc := range []struct{ chain, want, event string }{
		{protocol.Deny, "deny", "deny"},
		{protocol.Ask, "", ""},
		{"", "", ""},
		{protocol.Allow, "", "allow"},
	} {
		g := &Guard{Screen: chainSays(tc.chain, nil), ClientDecides: true}
		answer, d, ok := g.Answer(context.Background(), "req-1", guardCallback("Read", `{"file_path":".env"}`))
		dec, _, _ := decisionOf(t, answer)
		if !ok || dec != tc.want || d.Behavior != tc.event {
			t.Errorf("chain %q: answer %s, decision %+v", tc.chain, answer, d)
		}
	}
	dir := t.TempDir()
	for _, tc := range []struct{ hook, want, event, by string }{
		{`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`, "allow", "allow", protocol.ByHook},
		{`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}'`, "ask", "ask", protocol.ByHook},
		{`echo no >&2; exit 2`, "deny", "deny", protocol.ByHook},
	} {
		h, err := ParseHook("PreToolUse=" + tc.hook)
		if err != nil {
			t.Fatal(err)
		}
		g := &Guard{Screen: chainSays("", nil), ClientDecides: true, Runner: &Runner{Hooks: []Hook{h}, Dir: dir, Timeout: 10 * time.Second, Stderr: os.Stderr}}
		answer, d, _ := g.Answer(context.Background(), "req-1", guardCallback("Read", `{"file_path":"a"}`))
		if dec, _, _ := decisionOf(t, answer); dec != tc.want || d.Behavior != tc.event || d.DecidedBy != tc.by {
			t.Errorf("hook %s: answer %s, decision %+v", tc.hook, answer, d)
		}
	}
}
