package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/livetest"
	"github.com/agentjq/agentjq/protocol"
	"github.com/agentjq/agentjq/recording"
)

func fixtureEntries(t *testing.T, name string) (recording.Header, []recording.Entry) {
	t.Helper()
	f, err := os.Open(fixtureRec(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, entries, err := recording.ReadAll(f, nil)
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
	if in[1].gate != (gateKey{recording.Out, "result/success"}) || in[1].count != 1 {
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

func TestCheckFlags(t *testing.T) {
	rec, args, err := recordedSession([]string{"agentjq", "spawn", "--policy", "p.json", "--partial", "--max-turns", "3", "--hook", "PreToolUse=true", "-p", "hi", "--", "--replay-user-messages"})
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Partial || rec.MaxTurns != 3 || len(rec.Hook) != 1 || len(args) != 1 {
		t.Fatalf("parsed %+v %q", rec, args)
	}
	cli := SpawnFlags{Agent: "claude", Bin: "/bin/agent"}
	cli.HookTimeout, cli.MCPToolTimeout = 60*time.Second, 2*time.Minute
	f, a, over := checkFlags(rec, cli, args, nil)
	if over || !f.Partial || f.MaxTurns != 3 || len(f.Hook) != 1 || f.Bin != "/bin/agent" || len(a) != 1 {
		t.Errorf("re-used: %+v %q overridden=%v", f, a, over)
	}
	if f.Policy != nil || f.Prompt != "" || !f.NoPrompt {
		t.Errorf("policy, prompt or terminal re-used: %+v", f)
	}
	cli.MaxTurns = 1
	f, a, over = checkFlags(rec, cli, args, []string{"--verbose"})
	if !over || f.MaxTurns != 1 || len(a) != 1 || a[0] != "--verbose" {
		t.Errorf("overrides: %+v %q %v", f, a, over)
	}
	if got := strings.Join(sessionArgv(f, a), " "); got != "agentjq spawn --max-turns 1 --partial --hook PreToolUse=true -- --verbose" {
		t.Errorf("sessionArgv: %s", got)
	}
	if _, _, err := recordedSession([]string{"agentjq", "frobnicate", "--x"}); err == nil {
		t.Error("an unparsable argv was accepted")
	}
}

// TestCheckAgainstAsAgent runs the live check with replay --as-agent of
// the fixture standing in for the agent: no CLI needed, and the whole
// path (flags re-used, inputs fed at their gates, permissions answered as
// recorded) must reproduce the recording without drift.
func TestCheckAgainstAsAgent(t *testing.T) {
	livetest.SkipShort(t, "runs this test binary as the agent")
	for _, sc := range readManifest(t) {
		t.Run(sc.Name, func(t *testing.T) {
			if testing.Short() && sc.Name == "big-line" {
				t.Skip("big-line in -short")
			}
			rec := fixtureRec(t, sc.Name)
			ios, out, errb := fixtureIO("")
			code := Main([]string{"replay", "--check", "--bin", asAgentShim(t, rec), "--timeout", "60s", rec}, ios)
			if code != 0 {
				t.Errorf("exit %d\n%s\nstderr: %s", code, out, errb)
			}
		})
	}
}

func TestCheckAgainstAsAgentReportsDrift(t *testing.T) {
	livetest.SkipShort(t, "runs this test binary as the agent")
	rec := fixtureRec(t, "chain")
	b, _ := os.ReadFile(rec)
	// The agent now sends a key the recording lacks: the agent plays the
	// changed copy, the check compares with the original.
	changed := filepath.Join(t.TempDir(), "changed.rec")
	os.WriteFile(changed, []byte(strings.Replace(string(b), `"type":"result",`, `"type":"result","brand_new":1,`, 1)), 0o644)
	if !strings.Contains(string(b), `"type":"result",`) {
		t.Fatal("no result line to change")
	}
	ios, out, errb := fixtureIO("")
	code := Main([]string{"replay", "--check", "--bin", asAgentShim(t, changed), "--timeout", "60s", rec}, ios)
	if code != 1 || !strings.Contains(out.String(), "+.brand_new") {
		t.Errorf("exit %d\n%s\nstderr: %s", code, out, errb)
	}
}
