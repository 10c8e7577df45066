package approve

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// TestChainPersonIsLast: ChainOptions.Person (acp's editor) is asked only
// what the policies leave undecided, and a policy deny or a protected file
// never reaches it.
func TestChainPersonIsLast(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.json")
	os.WriteFile(rules, []byte(`{"allow":["Bash(echo:*)"],"deny":["Bash(rm:*)"],"default":"ask"}`), 0o644)
	asked := 0
	person := DeciderFunc(func(context.Context, *Request) (Verdict, error) {
		asked++
		return Verdict{Behavior: protocol.Allow, Source: protocol.ByTTY, Rule: "editor"}, nil
	})
	c, err := NewChain(ChainOptions{Policies: []string{rules}, Cwd: "/p", Person: person})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		cmd, want string
		asked     int
	}{
		{"echo hi", protocol.Allow, 0},
		{"rm -rf x", protocol.Deny, 0},
		{"ls", protocol.Allow, 1},
	} {
		asked = 0
		v, _ := c.Decide(context.Background(), bashReq(tc.cmd))
		if v.Behavior != tc.want || asked != tc.asked {
			t.Errorf("%s: %s (asked %d), want %s (asked %d)", tc.cmd, v.Behavior, asked, tc.want, tc.asked)
		}
	}
}
