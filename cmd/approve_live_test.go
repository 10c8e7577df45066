package cmd

// Live tests of the approval chain inside spawn, against the real CLI.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// writeFile is os.WriteFile with no fork while the file is open. A
// script written and then run at once is otherwise "text file busy" now
// and then: a child that a test running in parallel forked meanwhile
// holds the file open until it execs.
func writeFile(p string, data []byte, mode os.FileMode) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return os.WriteFile(p, data, mode)
}

func writePolicy(t testing.TB, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := writeFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLiveRulesAllowWriteDenyRm(t *testing.T) {
	t.Parallel()
	rules := writePolicy(t, "rules.json", `{"allow": ["Edit(**)"], "deny": ["Bash(rm:*)"]}`)
	r := spawnLive(t, "", "--policy", rules, "-p", "please WRITE banana")
	if r.code != 0 {
		t.Fatalf("write: exit %d", r.code)
	}
	if b, err := os.ReadFile(filepath.Join(r.dir, "banana.txt")); err != nil || string(b) != "banana\n" {
		t.Errorf("banana.txt = %q, %v", b, err)
	}
	// The guard allows the Write before it runs; the CLI then asks for it
	// anyway, and the chain allows it again.
	if len(r.decisions) != 2 || r.decisions[0].Via != protocol.ViaHook || r.decisions[1].Via != protocol.ViaPermission {
		t.Fatalf("write decisions %+v", r.decisions)
	}
	for _, d := range r.decisions {
		if d.Behavior != "allow" || d.DecidedBy != protocol.ByRules || d.Rule == "" || d.ToolUseID != r.decisions[0].ToolUseID {
			t.Errorf("write decision %+v", d)
		}
	}
	r = spawnLive(t, "", "--policy", rules, "-p", "RMRF")
	if r.code != protocol.ExitDenied {
		t.Fatalf("rm: exit %d, want denied", r.code)
	}
	if len(r.decisions) != 1 || r.decisions[0].Behavior != "deny" || r.decisions[0].Via != protocol.ViaHook || !strings.Contains(r.decisions[0].Rule, "Bash(rm:*)") {
		t.Errorf("rm decision %+v", r.decisions)
	}
	if r.exit.Denials != 1 {
		t.Errorf("exit event counts %d denials, want 1 (the guard's deny and the CLI's permission_denials name one call)", r.exit.Denials)
	}
}

func TestLiveJQPolicyRewritesCommand(t *testing.T) {
	t.Parallel()
	policy := writePolicy(t, "rewrite.jq", `if .tool_name == "Bash" then {behavior: "allow", updatedInput: (.input | .command |= sub("a[.]txt"; "b.txt"))} else empty end`)
	r := spawnLive(t, "", "--policy", policy, "-p", `TOOL Bash {"command":"touch {{cwd}}/a.txt","description":"make a file"}`)
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "b.txt")); err != nil {
		t.Errorf("the rewritten command did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "a.txt")); err == nil {
		t.Errorf("the original command ran")
	}
	if len(r.decisions) != 1 || r.decisions[0].DecidedBy != protocol.ByJQ {
		t.Errorf("decisions %+v", r.decisions)
	}
}

func TestLiveApproverCoProcess(t *testing.T) {
	t.Parallel()
	// A co-process that allows everything with a bare decision object.
	approver := writePolicy(t, "approver.sh", "#!/bin/sh\nwhile read -r line; do id=$(printf %s \"$line\" | sed -n 's/.*\"request_id\":\"\\([^\"]*\\)\".*/\\1/p'); printf '{\"request_id\":\"%s\",\"behavior\":\"allow\"}\\n' \"$id\"; done\n")
	os.Chmod(approver, 0o755)
	r := spawnLive(t, "", "--approver", approver, "-p", "please WRITE banana")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "banana.txt")); err != nil {
		t.Errorf("banana.txt: %v", err)
	}
	if len(r.decisions) != 1 || r.decisions[0].DecidedBy != protocol.ByApprover || r.decisions[0].Behavior != "allow" {
		t.Errorf("decisions %+v", r.decisions)
	}
}

func TestLiveHookScriptApprover(t *testing.T) {
	t.Parallel()
	// An existing PreToolUse hook script, used unchanged: it blocks rm -rf
	// with exit 2 and allows Writes.
	hook := writePolicy(t, "hook.sh", `#!/bin/sh
input=$(cat)
case "$input" in
  *'rm -rf'*) echo "rm -rf is blocked by hook.sh" >&2; exit 2 ;;
  *'"tool_name":"Write"'*) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"writes are fine"}}\n' ;;
esac
`)
	os.Chmod(hook, 0o755)
	r := spawnLive(t, "", "--approver", hook, "--approver-format", "hook", "-p", "please WRITE banana")
	if r.code != 0 {
		t.Fatalf("write: exit %d", r.code)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "banana.txt")); err != nil {
		t.Errorf("banana.txt: %v", err)
	}
	r = spawnLive(t, "", "--approver", hook, "--approver-format", "hook", "-p", "RMRF")
	if r.code != protocol.ExitDenied {
		t.Fatalf("rm: exit %d", r.code)
	}
	seen := false
	for _, tr := range r.api.ToolResults() {
		seen = seen || (tr.IsError && strings.Contains(tr.Text, "rm -rf is blocked by hook.sh"))
	}
	if !seen {
		t.Errorf("the model did not get the hook's reason: %+v", r.api.ToolResults())
	}
}

func TestLiveAskAnsweredFromRules(t *testing.T) {
	t.Parallel()
	rules := writePolicy(t, "rules.json", `{"answers": {"Do you prefer cats or dogs?": "Dogs"}}`)
	r := spawnLive(t, "", "--policy", rules, "-p", "ASK me")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	seen := false
	for _, tr := range r.api.ToolResults() {
		seen = seen || (!tr.IsError && strings.Contains(tr.Text, "Dogs"))
	}
	if !seen {
		t.Errorf("the model never got the answer Dogs: %+v", r.api.ToolResults())
	}
}

func TestLiveAskWithoutAnswerIsDenied(t *testing.T) {
	t.Parallel()
	r := spawnLive(t, "", "-p", "ASK me")
	if r.code != protocol.ExitDenied {
		t.Fatalf("exit %d", r.code)
	}
	seen := false
	for _, tr := range r.api.ToolResults() {
		seen = seen || (tr.IsError && strings.Contains(tr.Text, "no person is available"))
	}
	if !seen {
		t.Errorf("the model was not told no one can answer: %+v", r.api.ToolResults())
	}
}

func TestLiveBrokenPolicyStopsBeforeStart(t *testing.T) {
	t.Parallel()
	rules := writePolicy(t, "broken.json", "{\n  \"allow\": [\"Write(\"]\n}\n")
	r := spawnLive(t, "", "--policy", rules, "-p", "HELLO")
	if r.code != protocol.ExitUsage {
		t.Fatalf("exit %d, want 2", r.code)
	}
	if !strings.Contains(r.stderr, "broken.json:2:") {
		t.Errorf("stderr does not name file:line: %q", r.stderr)
	}
	if n := len(r.api.MessagesRequests()); n != 0 {
		t.Errorf("the agent ran (%d model requests)", n)
	}
}
