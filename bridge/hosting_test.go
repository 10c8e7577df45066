package bridge

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/livetest"
	"github.com/agentjq/agentjq/internal/syncio"
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
