package replay

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/recording"
)

// fixtureEntries reads a recording of the fixtures (a .rec, or a .rec.gz
// through recording's gzip reading).
func fixtureEntries(t *testing.T, name string) (recording.Header, []recording.Entry) {
	t.Helper()
	dir := filepath.Join(fixtures.Dir(), "recordings", "claude-code-"+fixtures.CLIVersion)
	path := filepath.Join(dir, name+".rec")
	f, err := os.Open(path)
	if err != nil {
		if f, err = os.Open(path + ".gz"); err != nil {
			t.Fatal(err)
		}
	}
	defer f.Close()
	h, entries, err := recording.ReadAll(f, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h, entries
}

func TestCheckInputs(t *testing.T) {
	_, entries := fixtureEntries(t, "multi-turn")
	in := checkInputs(entries)
	if len(in) != 2 {
		t.Fatalf("%d inputs, want the 2 turns", len(in))
	}
	if in[0].count != 0 {
		t.Errorf("the first turn waits for %d %v", in[0].count, in[0].gate)
	}
	if in[1].gate != (gateKey{protocol.DirOut, "result/success"}) || in[1].count != 1 {
		t.Errorf("the second turn waits for %d %v, want the first result", in[1].count, in[1].gate)
	}

	_, entries = fixtureEntries(t, "interrupt")
	in = checkInputs(entries)
	if len(in) != 2 || !strings.Contains(string(in[1].line), `"interrupt"`) {
		t.Fatalf("inputs %+v", in)
	}
	if in[1].gate.kind != "assistant[tool_use]" || in[1].count != 1 || in[1].delay < time.Second || in[1].delay > 5*time.Second {
		t.Errorf("the interrupt waits for %d %v then %s", in[1].count, in[1].gate, in[1].delay)
	}

	// agentjq's own lines (its initialize, its permission answers) are not fed.
	_, entries = fixtureEntries(t, "initialize")
	for _, x := range checkInputs(entries) {
		if !strings.Contains(string(x.line), `"type":"user"`) {
			t.Errorf("fed %s", x.line)
		}
	}
}

func TestRecordedDecider(t *testing.T) {
	ctx := context.Background()
	_, entries := fixtureEntries(t, "write-deny")
	d := newRecordedDecider(entries)
	req := &approve.Request{CanUseTool: protocol.CanUseTool{ToolName: "Write", Input: json.RawMessage(`{"file_path":"/elsewhere/banana.txt","content":"banana\n"}`)}}
	v, _ := d.Decide(ctx, req)
	if v.Behavior != protocol.Deny || v.Message != "Denied by scripted policy." {
		t.Errorf("write-deny: %+v", v)
	}
	v, _ = d.Decide(ctx, req)
	if v.Behavior != protocol.Deny || !strings.Contains(v.Message, "no answer") {
		t.Errorf("a request the recording never answered: %+v", v)
	}

	_, entries = fixtureEntries(t, "write-allow")
	v, _ = newRecordedDecider(entries).Decide(ctx, req)
	if v.Behavior != protocol.Allow || string(v.UpdatedInput) != string(req.Input) {
		t.Errorf("an allow that echoed the input keeps the live input: %+v %s", v, v.UpdatedInput)
	}

	_, entries = fixtureEntries(t, "ask-answer")
	ask := &approve.Request{CanUseTool: protocol.CanUseTool{ToolName: "AskUserQuestion", Input: json.RawMessage(`{"questions":[{"question":"Do you prefer cats or dogs?"}]}`)}}
	v, _ = newRecordedDecider(entries).Decide(ctx, ask)
	var in struct {
		Questions []any             `json:"questions"`
		Answers   map[string]string `json:"answers"`
	}
	if err := json.Unmarshal(v.UpdatedInput, &in); err != nil || v.Behavior != protocol.Allow || in.Answers["Do you prefer cats or dogs?"] != "Dogs" || len(in.Questions) != 1 {
		t.Errorf("the recorded answers do not come along: %+v %s", v, v.UpdatedInput)
	}
}

// TestMergeSettings: the recorded settings are re-used, a setting given
// to replay --check replaces the recorded one (agent arguments as a
// whole), nothing asks a person, and the merged settings render as the
// spawn command line of the new recording.
func TestMergeSettings(t *testing.T) {
	rec := recording.Session{Agent: "claude", Partial: true, MaxTurns: 3, Hook: []string{"PreToolUse=true"}, HookTimeout: "5s",
		AgentArgs: []string{"--replay-user-messages"}, Policy: []string{"p.json"}, OneShot: true}
	s, over := mergeSettings(rec, recording.Session{})
	if over || !s.Partial || s.MaxTurns != 3 || len(s.Hook) != 1 || s.HookTimeout != "5s" || len(s.AgentArgs) != 1 {
		t.Errorf("re-used: %+v overridden=%v", s, over)
	}
	if s.Policy != nil || s.OneShot || !s.NoPrompt {
		t.Errorf("policy, prompt or terminal re-used: %+v", s)
	}
	s, over = mergeSettings(rec, recording.Session{MaxTurns: 1, AgentArgs: []string{"--verbose"}, HookTimeout: "9s"})
	if !over || s.MaxTurns != 1 || len(s.AgentArgs) != 1 || s.AgentArgs[0] != "--verbose" || s.HookTimeout != "9s" {
		t.Errorf("overrides: %+v %v", s, over)
	}
	if got := strings.Join(sessionArgv(s), " "); got != "agentjq spawn --max-turns 1 --partial --hook PreToolUse=true -- --verbose" {
		t.Errorf("sessionArgv: %s", got)
	}
	if s, _ := mergeSettings(recording.Session{}, recording.Session{}); s.Agent != "claude" {
		t.Errorf("no agent: %q", s.Agent)
	}
}
