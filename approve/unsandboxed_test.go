package approve

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// A Bash call asking to leave the sandbox is denied on both paths (the
// PreToolUse guard and the permission request), whatever the policies
// allow; the same command without it is allowed.
func TestDangerouslyDisableSandboxDenied(t *testing.T) {
	allowAll, err := ParseJQPolicy("all.jq", []byte(`"allow"`))
	if err != nil {
		t.Fatal(err)
	}
	chains := map[string]*Chain{
		"Bash":      screenChain(t, `{"allow":["Bash"]}`, ChainOptions{Cwd: "/p"}),
		"Bash(*)":   screenChain(t, `{"allow":["Bash(*)"]}`, ChainOptions{Cwd: "/p"}),
		"Bash(ls*)": screenChain(t, `{"allow":["Bash(ls:*)"],"default":"ask"}`, ChainOptions{Cwd: "/p"}),
		"jq allow":  {jq: []*JQPolicy{allowAll}},
	}
	for name, c := range chains {
		for _, in := range []string{
			`{"command":"ls","dangerouslyDisableSandbox":true}`,
			`{"command":"ls","DangerouslyDisableSandbox":true}`,
			`{"command":"ls","dangerouslyDisableSandbox":"true"}`,
		} {
			req := bashReq("ls")
			req.Input = json.RawMessage(in)
			for path, v := range map[string]Verdict{"screen": c.Screen(context.Background(), req), "decide": mustDecide(t, c, req)} {
				if v.Behavior != protocol.Deny || !strings.Contains(v.Message, "runs every command in the sandbox") {
					t.Errorf("%s, %s %s: %+v, want a deny saying agentjq sandboxes every command", name, path, in, v)
				}
			}
		}
		req := bashReq("ls")
		req.Input = json.RawMessage(`{"command":"ls","dangerouslyDisableSandbox":false}`)
		if v := mustDecide(t, c, req); v.Behavior != protocol.Allow {
			t.Errorf("%s: dangerouslyDisableSandbox false: %+v, want allow", name, v)
		}
	}
	// A policy's rewrite cannot add it either.
	p, err := ParseJQPolicy("p.jq", []byte(`{behavior: "allow", updatedInput: (.input + {dangerouslyDisableSandbox: true})}`))
	if err != nil {
		t.Fatal(err)
	}
	c := &Chain{jq: []*JQPolicy{p}}
	if v := mustDecide(t, c, bashReq("ls")); v.Behavior != protocol.Deny {
		t.Errorf("a rewrite adding dangerouslyDisableSandbox: %+v", v)
	}
}

func mustDecide(t *testing.T, c *Chain, req *Request) Verdict {
	t.Helper()
	v, err := c.Decide(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
