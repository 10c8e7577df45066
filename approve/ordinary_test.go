package approve

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// TestOrdinaryCallsAllowed: what a developer's agent does every day is
// allowed by the typical policy's rules, before it runs (the guard) and
// when claude asks, so nobody is asked about it; the sandbox holds what
// the programs do.
func TestOrdinaryCallsAllowed(t *testing.T) {
	project := t.TempDir()
	home := t.TempDir()
	for _, d := range []string{"src", "tests", "docs", "frontend"} {
		os.MkdirAll(filepath.Join(project, d), 0o755)
	}
	// The typical allow-list policy a user writes for a project (cmd's
	// live sandbox tests run the same).
	rules := "testdata/typical-policy.json"
	c, err := NewChain(ChainOptions{Policies: []string{rules}, Cwd: project, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f, err := os.Open("testdata/ordinary-calls.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for line := 0; sc.Scan(); {
		line++
		text := strings.ReplaceAll(sc.Text(), "{p}", project)
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		tool, input := "Bash", ""
		switch {
		case strings.HasPrefix(text, "TOOL "):
			rest := strings.TrimPrefix(text, "TOOL ")
			name, in, _ := strings.Cut(rest, " ")
			tool, input = name, in
		case strings.HasPrefix(text, `"`):
			var cmd string
			if err := json.Unmarshal([]byte(text), &cmd); err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			input = jsonString("command", cmd)
		default:
			input = jsonString("command", text)
		}
		n++
		req := func() *Request {
			return &Request{RequestID: "r", CanUseTool: protocol.CanUseTool{Subtype: protocol.SubCanUseTool, ToolName: tool, Input: []byte(input), ToolUseID: "toolu_" + itoa(line)}, Cwd: project, ShellCwd: project}
		}
		if v := c.Screen(context.Background(), req()); v.Behavior != protocol.Allow {
			t.Errorf("line %d %s %s: the hook said %s (%s): %s", line, tool, clip(input, 100), v.Behavior, v.Rule, v.Message)
		}
		if v, _ := c.Decide(context.Background(), req()); v.Behavior != protocol.Allow || v.Source != protocol.ByRules {
			t.Errorf("line %d %s %s: the permission path said %s by %s (%s): %s", line, tool, clip(input, 100), v.Behavior, v.Source, v.Rule, v.Message)
		}
	}
	if n < 150 {
		t.Errorf("%d ordinary calls, want at least 150", n)
	}
}
