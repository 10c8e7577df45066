package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

const preToolUse = `{"session_id":"s1","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"tool_use_id":"toolu_1"}`

func runner(cmd string) (*Runner, *bytes.Buffer) {
	var errb bytes.Buffer
	return &Runner{
		Hooks:   []Hook{{Event: "PreToolUse", Matcher: "Bash", Command: cmd}},
		Env:     []string{"PATH=" + os.Getenv("PATH")},
		Timeout: 5 * time.Second,
		Stderr:  &errb,
	}, &errb
}

func TestCommandHookSemantics(t *testing.T) {
	livetest.SkipShort(t, "runs hook commands")
	cases := []struct {
		name, cmd, input, want string
		problem                bool
	}{
		{"stdin is the hook input, JSON stdout is the answer", `cat`, preToolUse, preToolUse, false},
		{"JSON stdout", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`, preToolUse,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`, false},
		{"plain stdout", `echo looks fine`, preToolUse, `{}`, false},
		{"empty stdout", `true`, preToolUse, `{}`, false},
		{"two JSON objects are not one", `echo '{}{"decision":"block"}'`, preToolUse, `{}`, false},
		{"JSON that is not an object", `echo '"deny"'`, preToolUse, `{}`, false},
		{"exit 2 blocks PreToolUse", `echo 'no rm -rf here' >&2; exit 2`, preToolUse,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm -rf here"}}`, false},
		{"exit 2 ignores stdout", `echo '{"continue":true}'; exit 2`, preToolUse,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Blocked by a hook (exit status 2)."}}`, false},
		{"exit 2 blocks Stop", `echo keep going >&2; exit 2`, `{"hook_event_name":"Stop","stop_hook_active":false}`,
			`{"decision":"block","reason":"keep going"}`, false},
		{"exit 2 blocks UserPromptSubmit", `echo not that >&2; exit 2`, `{"hook_event_name":"UserPromptSubmit","prompt":"x"}`,
			`{"decision":"block","reason":"not that"}`, false},
		{"exit 2 denies PermissionRequest", `echo nope >&2; exit 2`, `{"hook_event_name":"PermissionRequest","tool_name":"Bash"}`,
			`{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"nope"},"hookEventName":"PermissionRequest"}}`, false},
		{"other status is a non-blocking error", `echo broken >&2; exit 1`, preToolUse,
			`{"systemMessage":"agentjq: hook exit status 1 (a non-blocking error): broken"}`, true},
		{"the event comes from the input", `exit 2`, `{"hook_event_name":"PostToolUse"}`,
			`{"decision":"block","reason":"Blocked by a hook (exit status 2)."}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, errb := runner(c.cmd)
			got, err := r.Handle(context.Background(), "req-1", json.RawMessage(`{"subtype":"hook_callback","callback_id":"hook_0","input":`+c.input+`}`))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			if string(b) != c.want {
				t.Errorf("got  %s\nwant %s", b, c.want)
			}
			if reported := errb.Len() > 0; reported != c.problem {
				t.Errorf("stderr report %v, want %v: %q", reported, c.problem, errb)
			}
		})
	}
}

func TestHangingHookIsAnswered(t *testing.T) {
	livetest.SkipShort(t, "runs hook commands")
	r, errb := runner(`sleep 30`)
	r.Timeout = 300 * time.Millisecond
	start := time.Now()
	got, err := r.Handle(context.Background(), "req-1", json.RawMessage(`{"subtype":"hook_callback","callback_id":"hook_0","input":`+preToolUse+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("took %s", el)
	}
	b, _ := json.Marshal(got)
	if !strings.Contains(string(b), `"systemMessage":"agentjq: hook timed out`) {
		t.Errorf("answer %s", b)
	}
	if !strings.Contains(errb.String(), "hook PreToolUse:Bash: timed out") {
		t.Errorf("stderr %q", errb)
	}
}

func TestHookEnvironment(t *testing.T) {
	livetest.SkipShort(t, "runs hook commands")
	r, _ := runner(`printf '{"dir":"%s","event":"%s"}' "$CLAUDE_PROJECT_DIR" "$AGENTJQ_HOOK_EVENT"`)
	r.Dir = t.TempDir()
	got := r.Run(context.Background(), r.Hooks[0], json.RawMessage(preToolUse))
	if want := `{"dir":"` + r.Dir + `","event":"PreToolUse"}`; string(got) != want {
		t.Errorf("got %s want %s", got, want)
	}
}

func TestUnknownCallback(t *testing.T) {
	r, _ := runner(`true`)
	for _, id := range []string{"hook_1", "hook_-1", "other", ""} {
		if _, err := r.Handle(context.Background(), "x", json.RawMessage(`{"subtype":"hook_callback","callback_id":"`+id+`","input":{}}`)); err == nil {
			t.Errorf("%q: no error", id)
		}
	}
}

func TestParseHook(t *testing.T) {
	good := map[string]Hook{
		"PreToolUse:Bash=./guard.sh":      {"PreToolUse", "Bash", "./guard.sh"},
		"Stop=echo a=b":                   {"Stop", "", "echo a=b"},
		"PostToolUse:Edit|Write=fmt $x":   {"PostToolUse", "Edit|Write", "fmt $x"},
		"PreToolUse:mcp__agentjq__.*=cat": {"PreToolUse", "mcp__agentjq__.*", "cat"},
	}
	for in, want := range good {
		got, err := ParseHook(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v", in, got, err)
		}
	}
	for _, in := range []string{"PreToolUse", "PreToolUse=", "pretooluse=x", "Nope:Bash=x", "=x"} {
		if _, err := ParseHook(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestRegistration(t *testing.T) {
	r := &Runner{Hooks: []Hook{
		{Event: "PreToolUse", Matcher: "Bash", Command: "a"},
		{Event: "Stop", Command: "b"},
		{Event: "PreToolUse", Matcher: "Write", Command: "c"},
	}, Timeout: 10 * time.Second}
	b, _ := json.Marshal(r.Registration())
	want := `{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"],"timeout":15},{"matcher":"Write","hookCallbackIds":["hook_2"],"timeout":15}],"Stop":[{"hookCallbackIds":["hook_1"],"timeout":15}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
