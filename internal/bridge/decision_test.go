package bridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/hooks"
	"github.com/agentjq/agentjq/internal/protocol"
)

// countingPerson allows every call it is asked about and counts the asks
// by tool_use_id.
type countingPerson struct {
	mu    sync.Mutex
	asked map[string]int
}

func (p *countingPerson) Decide(_ context.Context, req *approve.Request) (approve.Verdict, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked[req.ToolUseID]++
	return approve.Verdict{Behavior: protocol.Allow, Source: protocol.ByTTY}, nil
}

// TestOneDecisionPerToolCall: the rules ask about git push, so the person
// must answer; the guard's hook and can_use_tool come for one call in
// either order, or can_use_tool alone. Whichever comes first decides, the
// other reads that decision: the person is asked exactly once per call,
// and each call makes one decision event.
func TestOneDecisionPerToolCall(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(rules, []byte(`{"ask":["Bash(git push:*)"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	person := &countingPerson{asked: map[string]int{}}
	chain, err := approve.NewChain(approve.ChainOptions{Policies: []string{rules}, Person: person, Cwd: "/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	defer chain.Close()
	guard := &hooks.Guard{Screen: chain.Screen}
	r := runFake(t, "guard-orders", "go\n", func(o *Options) {
		o.Approver = chain
		o.Guard = guard.Answer
	})
	if r.rep.ExitCode != 0 {
		t.Fatalf("exit %d: %s\n%s", r.rep.ExitCode, r.rep.Err, r.stderr)
	}
	for _, id := range []string{"toolu_a", "toolu_b", "toolu_c"} {
		if n := person.asked[id]; n != 1 {
			t.Errorf("%s: the person was asked %d times, want once", id, n)
		}
	}
	res := responses(r.log)
	for _, id := range []string{"pa", "pb", "pc"} {
		body, _ := res[id]["response"].(map[string]any)
		if body["behavior"] != protocol.Allow {
			t.Errorf("permission %s answered %v, want the person's allow", id, res[id])
		}
	}
	if spec, _ := res["ha"]["response"].(map[string]any)["hookSpecificOutput"].(map[string]any); spec["permissionDecision"] != protocol.Ask {
		t.Errorf("hook before the permission request: %v, want ask", res["ha"])
	}
	if spec, _ := res["hb"]["response"].(map[string]any)["hookSpecificOutput"].(map[string]any); spec["permissionDecision"] != nil {
		t.Errorf("hook after the allow: %v, want no objection", res["hb"])
	}
	perCall := map[string]int{}
	for _, ev := range events(t, r.stdout, protocol.EventDecision) {
		id, _ := ev["tool_use_id"].(string)
		perCall[id]++
	}
	for _, id := range []string{"toolu_a", "toolu_b", "toolu_c"} {
		if perCall[id] != 1 {
			t.Errorf("%s: %d decision events, want 1 (all: %v)", id, perCall[id], perCall)
		}
	}
	if len(res) != 5 || strings.Contains(strings.Join(keys(res), " "), "#dup") {
		t.Errorf("answers %v, want each of the five requests answered once", keys(res))
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
