package approve

import (
	"context"

	"github.com/agentjq/agentjq/internal/protocol"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestChainSandbox: path and domain rules become what the sandbox holds,
// with the policy's own sandbox key beside them.
func TestChainSandbox(t *testing.T) {
	p := t.TempDir()
	home := t.TempDir()
	for _, f := range []string{"keys/a.pem", "src/b.pem", "src/main.go", "sub/.env"} {
		os.MkdirAll(filepath.Dir(filepath.Join(p, f)), 0o755)
		os.WriteFile(filepath.Join(p, f), nil, 0o644)
	}
	rules := writePolicy(t, "p.json", `{
  "allow": ["Bash(go:*)", "Edit(./**)", "Edit(//tmp/build/**)", "Write(~/notes/*.md)", "Read(~/.npmrc)", "WebFetch(domain:proxy.golang.org)"],
  "deny": ["Read(./.env)", "Read(.env)", "Edit(./secrets/**)", "Edit(**/*.pem)", "Read(~/.config/app/token)"],
  "sandbox": {"network": {"allowedDomains": ["registry.npmjs.org"]},
              "filesystem": {"allowWrite": ["~/.cache/bazel"], "denyRead": ["./private"]},
              "credentials": {"envVars": ["MY_TOKEN"]}}
}`)
	c, err := NewChain(ChainOptions{Policies: []string{rules}, Cwd: p, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sp := c.Sandbox()
	check := func(name string, got []string, want, not []string) {
		t.Helper()
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s lacks %s: %v", name, w, got)
			}
		}
		for _, n := range not {
			if slices.Contains(got, n) {
				t.Errorf("%s holds %s: %v", name, n, got)
			}
		}
	}
	check("AllowWrite", sp.AllowWrite, []string{"/tmp/build", home + "/notes", home + "/.cache/bazel"}, []string{p})
	check("DenyWrite", sp.DenyWrite, []string{p + "/secrets", p + "/keys/a.pem", p + "/src/b.pem"}, []string{p + "/src/main.go", p})
	check("DenyRead", sp.DenyRead, []string{p + "/.env", p + "/sub/.env", home + "/.config/app/token", p + "/private"}, nil)
	check("AllowRead", sp.AllowRead, []string{home + "/.npmrc"}, nil)
	check("Domains", sp.Domains, []string{"proxy.golang.org", "registry.npmjs.org"}, nil)
	check("HideEnv", sp.HideEnv, []string{"MY_TOKEN"}, nil)
	if sp.Off != "" {
		t.Errorf("Off %q", sp.Off)
	}
}

func TestSandboxKey(t *testing.T) {
	off := writePolicy(t, "off.json", `{"allow": ["Bash"],
  "sandbox": {"enabled": false}}`)
	c, err := NewChain(ChainOptions{Policies: []string{off}, Cwd: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Sandbox().Off; !strings.HasSuffix(got, "off.json:2:14") {
		t.Errorf("Off = %q, want the file and place", got)
	}
	c.Close()
	// A Claude Code settings.json: the sandbox block beside permissions.
	settings := writePolicy(t, "settings.json", `{"permissions": {"allow": ["Bash"]}, "sandbox": {"network": {"allowedDomains": ["x.example"]}}}`)
	c, err = NewChain(ChainOptions{Policies: []string{settings}, Cwd: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Sandbox().Domains; !slices.Equal(d, []string{"x.example"}) {
		t.Errorf("settings.json domains %v", d)
	}
	c.Close()
	for _, tc := range []struct{ src, want string }{
		{`{"sandbox": {"excludedCommands": ["docker:*"]}}`, "bad.json:1:14: agentjq does not take sandbox.excludedCommands"},
		{`{"sandbox": {"allowUnsandboxedCommands": true}}`, "sandbox.allowUnsandboxedCommands"},
		{"{\"sandbox\": {\"network\": {\n  \"httpProxyPort\": 8080}}}", "bad.json:2:3: agentjq does not take sandbox.network.httpProxyPort"},
		{`{"sandbox": {"filesystem": {"allowWrite": "/tmp"}}}`, "must be an array of strings"},
		{`{"sandbox": {"enabled": "no"}}`, "sandbox.enabled must be true or false"},
		{`{"sandbox": 3}`, "sandbox must be an object"},
	} {
		bad := writePolicy(t, "bad.json", tc.src)
		_, err := NewChain(ChainOptions{Policies: []string{bad}, Cwd: "/p"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.src, err, tc.want)
		}
	}
}

// TestHeldPathsHoldTheFileTools: what the sandbox holds beyond protect's
// names (a hook's link target) the file tools may not write either.
func TestHeldPathsHoldTheFileTools(t *testing.T) {
	p := t.TempDir()
	rules := writePolicy(t, "p.json", `{"allow": ["Edit(./**)", "Write(./**)"]}`)
	c, err := NewChain(ChainOptions{Policies: []string{rules}, Cwd: p})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetHeld([]string{p + "/scripts/pre-commit"})
	edit := func(file string) Verdict {
		v, _ := c.Decide(context.Background(), &Request{CanUseTool: protocol.CanUseTool{ToolName: "Edit",
			Input: []byte(`{"file_path":"` + file + `","old_string":"a","new_string":"b"}`)}, Cwd: p})
		return v
	}
	if v := edit(p + "/scripts/pre-commit"); v.Behavior != protocol.Deny {
		t.Errorf("an Edit of a held path: %+v", v)
	}
	if v := edit(p + "/scripts/build.sh"); v.Behavior != protocol.Allow {
		t.Errorf("an Edit beside it: %+v", v)
	}
}

// TestReadDenyHoldsEdits: a file one may not read one may not edit: an
// Edit of it read it back (the transcript kept the original; a failed
// old_string told what is there).
func TestReadDenyHoldsEdits(t *testing.T) {
	p := t.TempDir()
	rules := writePolicy(t, "p.json", `{"allow": ["Edit(./**)", "Write(./**)", "Read(./**)"], "deny": ["Read(./.env)"]}`)
	c, err := NewChain(ChainOptions{Policies: []string{rules}, Cwd: p})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tool := range []string{"Edit", "MultiEdit", "Write"} {
		v, _ := c.Decide(context.Background(), &Request{CanUseTool: protocol.CanUseTool{ToolName: tool,
			Input: []byte(`{"file_path":"` + p + `/.env","old_string":"SECRET=","new_string":"SECRET =","content":"x"}`)}, Cwd: p})
		if v.Behavior != protocol.Deny {
			t.Errorf("%s of a Read-denied file: %+v", tool, v)
		}
	}
	v, _ := c.Decide(context.Background(), &Request{CanUseTool: protocol.CanUseTool{ToolName: "Edit",
		Input: []byte(`{"file_path":"` + p + `/main.go","old_string":"a","new_string":"b"}`)}, Cwd: p})
	if v.Behavior != protocol.Allow {
		t.Errorf("an Edit beside it: %+v", v)
	}
}
