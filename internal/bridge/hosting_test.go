package bridge

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

// TestKeepStdinOpenAnswersTheHandshake: with no turn at all (stdin at EOF
// at once), the MCP handshake the agent starts around the initialize
// response is still answered in full before its stdin closes.
func TestKeepStdinOpenAnswersTheHandshake(t *testing.T) {
	livetest.SkipShort(t, "runs this test binary as the agent")
	var methods atomic.Int32
	var ended atomic.Int32
	start := time.Now()
	r := runFake(t, "capture:mcp-ping", "", func(o *Options) {
		o.Init = map[string]any{"subtype": "initialize", "hooks": map[string]any{}, "sdkMcpServers": []string{"probe"}}
		o.KeepStdinOpen = true
		o.Grace = 3 * time.Second // a loaded machine, -race: the exit may be slow
		o.Handlers = map[string]ControlHandler{"mcp_message": func(_ context.Context, _ string, req json.RawMessage) (any, error) {
			methods.Add(1)
			return map[string]any{"mcp_response": map[string]any{"jsonrpc": "2.0", "id": nil, "result": map[string]any{}}}, nil
		}}
		o.AtEnd = []func(){func() { ended.Add(1) }, func() { ended.Add(10) }}
	})
	if strings.Contains(r.log, "STDIN CLOSED WHILE") {
		t.Errorf("stdin closed with a request pending:\n%s", r.log)
	}
	if got := methods.Load(); got != 4 {
		t.Errorf("%d mcp_message requests answered, want 4", got)
	}
	resp := responses(r.log)
	if _, ok := resp["agentjq-init-1"]; ok {
		t.Errorf("the agent's own control_response was sent back to it")
	}
	if ended.Load() != 11 {
		t.Errorf("AtEnd ran %d", ended.Load())
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("took %s", el)
	}
	if r.rep.AgentExit != 0 {
		t.Errorf("report %+v\nstderr %s\nlog %s\nstdout %.3000s", r.rep, r.stderr, r.log, r.stdout)
	}
}

func TestAtEndRunsWhenTheAgentCannotStart(t *testing.T) {
	var ran int
	_, err := Run(context.Background(), Options{
		Profile: Profiles["claude"], Path: "/nonexistent/agent",
		Stdout: &syncio.Buffer{}, Stderr: &syncio.Buffer{},
		AtEnd: []func(){func() { ran++ }},
	})
	if err == nil || ran != 1 {
		t.Errorf("err %v, AtEnd ran %d times", err, ran)
	}
}

// TestGuardDecisionEvents: the guard's answer goes to the agent, after a
// decision event naming the hook path; a deny counts as one denial, and an
// "ask" makes no event (the permission request that follows decides).
func TestGuardDecisionEvents(t *testing.T) {
	for _, behavior := range []string{protocol.Deny, protocol.Ask} {
		t.Run(behavior, func(t *testing.T) {
			var userCalls atomic.Int32
			r := runFake(t, "capture:hook-callback", "", func(o *Options) {
				o.Init = map[string]any{"subtype": "initialize", "hooks": map[string]any{}}
				o.KeepStdinOpen = true
				o.Handlers = map[string]ControlHandler{"hook_callback": func(context.Context, string, json.RawMessage) (any, error) {
					userCalls.Add(1)
					return map[string]any{}, nil
				}}
				o.Guard = func(_ context.Context, id string, req json.RawMessage) (json.RawMessage, protocol.Decision, bool) {
					return json.RawMessage(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + behavior + `","permissionDecisionReason":"guarded"}}`),
						protocol.Decision{Tool: "Bash", ToolUseID: "toolu_b1", Behavior: behavior, DecidedBy: protocol.ByRules, Message: "guarded"}, true
				}
			})
			if userCalls.Load() != 0 {
				t.Errorf("the user's handler answered the guard's callback")
			}
			var events []protocol.Decision
			for _, l := range strings.Split(r.stdout, "\n") {
				if strings.Contains(l, `"subtype":"decision"`) {
					var d protocol.Decision
					json.Unmarshal([]byte(l), &d)
					events = append(events, d)
				}
			}
			switch behavior {
			case protocol.Deny:
				if len(events) != 1 || events[0].Via != protocol.ViaHook || events[0].Behavior != protocol.Deny || events[0].RequestID == "" {
					t.Errorf("events %+v", events)
				}
				if r.rep.Denials != 1 {
					t.Errorf("denials %d", r.rep.Denials)
				}
			case protocol.Ask:
				if len(events) != 0 {
					t.Errorf("an ask made events %+v", events)
				}
			}
			answered := false
			for id, resp := range responses(r.log) {
				if strings.Contains(id, "#dup") {
					t.Errorf("answered twice: %s", id)
				}
				b, _ := json.Marshal(resp)
				answered = answered || strings.Contains(string(b), `"permissionDecision":"`+behavior+`"`)
			}
			if !answered {
				t.Errorf("the guard's answer never reached the agent:\n%s", r.log)
			}
		})
	}
}
