package approve

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

func screenChain(t *testing.T, rules string, opts ChainOptions) *Chain {
	t.Helper()
	opts.Policies = append(opts.Policies, writePolicy(t, "rules.json", rules))
	c, err := NewChain(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestScreenVerdicts(t *testing.T) {
	c := screenChain(t, `{"allow":["Bash(echo:*)","Bash(sed:*)"],"ask":["Bash(git push:*)"],"deny":["Bash(rm:*)"],"default":"ask"}`, ChainOptions{Cwd: "/p"})
	jq := writePolicy(t, "rewrite.jq", `if .input.command == "sed x" then {behavior: "allow", updatedInput: {command: "sed y"}} else empty end`)
	cj, err := NewChain(ChainOptions{Cwd: "/p", Policies: []string{jq}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		chain *Chain
		cmd   string
		want  string
	}{
		{c, "rm -rf /", protocol.Deny},
		{c, "echo hi", protocol.Allow},
		{c, "git push origin", protocol.Ask},
		{c, "ls", protocol.Ask},     // unmatched, default ask: the approver or terminal decides
		{cj, "sed x", protocol.Ask}, // allowed only rewritten: only a permission answer carries the rewrite
		{cj, "ls", protocol.Ask},
	}
	for _, tc := range cases {
		if v := tc.chain.Screen(context.Background(), bashReq(tc.cmd)); v.Behavior != tc.want {
			t.Errorf("Screen(%q) = %+v, want %s", tc.cmd, v, tc.want)
		}
	}
	// With the rules' own default (deny) an unmatched call is denied
	// before it runs, read-only or not.
	d := screenChain(t, `{"allow":["Bash(echo:*)"]}`, ChainOptions{Cwd: "/p"})
	if v := d.Screen(context.Background(), bashReq("cat .env")); v.Behavior != protocol.Deny || v.Message == "" {
		t.Errorf("unmatched under default deny: %+v", v)
	}
}

// TestScreenThenPermissionDecidesOnce: a call the policies passed on at the
// hook goes to the approver and the terminal when its permission request
// comes, without asking the policies again (which could contradict).
func TestScreenThenPermissionDecidesOnce(t *testing.T) {
	c := screenChain(t, `{"ask":["Bash(git push:*)"],"allow":["Bash(echo:*)"]}`, ChainOptions{Cwd: "/p"})
	req := bashReq("git push")
	if v := c.Screen(context.Background(), req); v.Behavior != protocol.Ask {
		t.Fatalf("Screen = %+v", v)
	}
	var steps []string
	v, _ := c.Explain(context.Background(), req, func(s string) { steps = append(steps, s) })
	if v.Behavior != protocol.Deny || !strings.Contains(v.Message, "No approver or terminal") {
		t.Errorf("verdict %+v", v)
	}
	if len(steps) != 2 || !strings.HasPrefix(steps[0], "hook: ask") || !strings.HasPrefix(steps[1], "default") {
		t.Errorf("steps %q, want the hook's ask then the default", steps)
	}
	// One decision per call: a second request for the id repeats it.
	steps = nil
	if again, _ := c.Explain(context.Background(), req, func(s string) { steps = append(steps, s) }); !again.Again || again.Behavior != v.Behavior || len(steps) != 1 || !strings.HasPrefix(steps[0], "decided") {
		t.Errorf("second request: %+v, steps %q", again, steps)
	}
	// An input that differs from the screened one is decided afresh.
	c.Screen(context.Background(), req)
	other := bashReq("echo changed")
	steps = nil
	if v, _ := c.Explain(context.Background(), other, func(s string) { steps = append(steps, s) }); v.Behavior != protocol.Allow || !strings.HasPrefix(steps[0], "rules") {
		t.Errorf("changed input: %+v %q", v, steps)
	}
	// An allow at the hook is the answer: the policies are not asked again.
	echo := bashReq("echo hi")
	echo.ToolUseID = "toolu_2"
	c.Screen(context.Background(), echo)
	steps = nil
	if v, _ := c.Explain(context.Background(), echo, func(s string) { steps = append(steps, s) }); v.Behavior != protocol.Allow || len(steps) != 1 || !strings.HasPrefix(steps[0], "hook: allow") {
		t.Errorf("after an allow: %+v %q", v, steps)
	}
}

func TestCallMemoryIsBounded(t *testing.T) {
	c := screenChain(t, `{"default":"ask"}`, ChainOptions{Cwd: "/p"})
	for i := range maxCalls + 10 {
		r := bashReq("ls")
		r.ToolUseID = "toolu_" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		c.Screen(context.Background(), r)
	}
	if n := len(c.calls.byID); n != maxCalls || len(c.calls.order) != maxCalls {
		t.Errorf("%d calls, %d in order, want %d", n, len(c.calls.order), maxCalls)
	}
}

// TestShellCwdResolvesRelativeWrites: claude's shell keeps its directory
// between calls; the hook reports it. The file tools' relative paths
// resolve there, while rules stay anchored at the session's root, so that
// neither a deny is dodged nor an allow widened by cd. (A Bash command's
// own writes are the sandbox's.)
func TestShellCwdResolvesRelativeWrites(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"src/secret", "docs", "src/docs"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	root, _ = filepath.EvalSymlinks(root)
	c := screenChain(t, `{"allow":["Bash(echo:*)","Bash(cd:*)","Edit(/docs/**)","Edit(src/**)"],"deny":["Edit(src/secret/**)"]}`, ChainOptions{Cwd: root})
	in := func(shell, path string) *Request {
		in, _ := json.Marshal(map[string]string{"file_path": path, "content": "x"})
		r := &Request{CanUseTool: protocol.CanUseTool{ToolName: "Write", Input: in}}
		r.ShellCwd = filepath.Join(root, shell)
		return r
	}
	cases := []struct {
		shell, cmd, want string
	}{
		{"src/secret", "key.pem", protocol.Deny},
		{"src", "secret/key.pem", protocol.Deny},
		{"", "src/secret/key.pem", protocol.Deny},
		{"src", "ok.txt", protocol.Allow},
		{"", "docs/a.md", protocol.Allow},
		// /docs is the root's docs: from src, docs/a.md is src/docs/a.md,
		// which Edit(src/**) allows; from src/secret it is denied.
		{"src/secret", "docs/a.md", protocol.Deny},
		// Outside the root nothing relative matches: denied by default.
		{"..", "docs/a.md", protocol.Deny},
	}
	for _, tc := range cases {
		v := c.Screen(context.Background(), in(tc.shell, tc.cmd))
		if v.Behavior != tc.want {
			t.Errorf("in %q: %q = %s (%s), want %s", tc.shell, tc.cmd, v.Behavior, v.Message, tc.want)
		}
	}
	// The Write tool's relative path too, and the permission request that
	// follows a screened call uses the shell's directory the hook saw.
	w := &Request{CanUseTool: protocol.CanUseTool{ToolName: "Write", ToolUseID: "toolu_w", Input: json.RawMessage(`{"file_path":"key.pem","content":"x"}`)}, ShellCwd: filepath.Join(root, "src/secret")}
	if v := c.Screen(context.Background(), w); v.Behavior != protocol.Deny {
		t.Errorf("relative Write from src/secret: %+v", v)
	}
	ask := screenChain(t, `{"allow":["Edit(src/**)"],"deny":["Edit(src/secret/**)"],"default":"ask"}`, ChainOptions{Cwd: root})
	perm := &Request{CanUseTool: protocol.CanUseTool{ToolName: "Write", ToolUseID: "toolu_p", Input: json.RawMessage(`{"file_path":"key.pem","content":"x"}`)}}
	screen := &Request{CanUseTool: perm.CanUseTool, ShellCwd: filepath.Join(root, "src/secret")}
	screen.Input = json.RawMessage(`{"file_path":"key.pem","content":"y"}`) // another input: the permission request is judged afresh
	ask.Screen(context.Background(), screen)
	var steps []string
	if v, _ := ask.Explain(context.Background(), perm, func(s string) { steps = append(steps, s) }); v.Behavior != protocol.Deny {
		t.Errorf("permission after screen: %+v %q", v, steps)
	}
	if !slices.ContainsFunc(steps, func(s string) bool { return strings.Contains(s, "src/secret/**") }) {
		t.Errorf("steps %q do not name the deny rule", steps)
	}
}

func TestGuards(t *testing.T) {
	if c, _ := NewChain(ChainOptions{}); c.Guards() {
		t.Errorf("the default alone guards")
	}
	if c, _ := NewChain(ChainOptions{TTY: func() (rw io.ReadWriteCloser, err error) { return nil, os.ErrNotExist }}); c.Guards() {
		t.Errorf("a terminal that does not open guards")
	}
	if c := screenChain(t, `{}`, ChainOptions{}); !c.Guards() {
		t.Errorf("a rules file does not guard")
	}
}

func TestPermissionUpdatesStayInSession(t *testing.T) {
	jq := writePolicy(t, "perms.jq", `{behavior: "allow", updatedPermissions: [
  {type: "addRules", rules: [{toolName: "Bash", ruleContent: "rm:*"}], behavior: "allow", destination: "localSettings"},
  {type: "addRules", rules: [{toolName: "Bash", ruleContent: "ls:*"}], behavior: "allow", destination: "session"},
  {type: "setMode", mode: "bypassPermissions", destination: "userSettings"}]}`)
	var errb strings.Builder
	c, err := NewChain(ChainOptions{Policies: []string{jq}, Cwd: "/p", Stderr: &errb})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := c.Decide(context.Background(), bashReq("ls"))
	if v.Behavior != protocol.Allow || len(v.UpdatedPermissions) != 1 || !strings.Contains(string(v.UpdatedPermissions[0]), `"session"`) {
		t.Errorf("verdict %+v", v)
	}
	if strings.Count(errb.String(), "dropped a permission update") != 2 {
		t.Errorf("stderr %q", errb.String())
	}
}
