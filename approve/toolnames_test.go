package approve

import (
	"errors"
	"strings"
	"testing"
)

// A rule about a tool claude does not have is an error naming the file,
// line and column, with the nearest known name; MCP tools and the tools
// the file lists under "tools" are accepted.
func TestRulesFileUnknownToolName(t *testing.T) {
	for _, c := range []struct {
		name, text, want string
	}{
		{"misspelt", "{\n  \"allow\": [\n    \"Bassh(rm:*)\"\n  ]\n}\n",
			`p.json:3:5: rule "Bassh(rm:*)": unknown tool "Bassh"; did you mean Bash?`},
		{"lower-case neighbour", `{"deny": ["Read(.env)", "WebFecth"]}`,
			`p.json:1:25: rule "WebFecth": unknown tool "WebFecth"; did you mean WebFetch?`},
		{"nothing near", `{"ask": ["Deploy"]}`,
			`p.json:1:10: rule "Deploy": unknown tool "Deploy" (a tool of your own: list it in "tools": ["Deploy"])`},
		{"near a custom one", `{"tools": ["MyTool"], "allow": ["MyTol"]}`,
			`did you mean MyTool?`},
		{"settings.json", `{"permissions": {"allow": ["Raed(src/**)"]}}`,
			`p.json:1:28: rule "Raed(src/**)": unknown tool "Raed"; did you mean Read?`},
		{"tools not names", `{"tools": ["my tool"]}`,
			`p.json:1:12: "my tool" is not a tool name`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseRulesFile("p.json", []byte(c.text), "/home/u")
			var pe *PolicyError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want a PolicyError with %q", err, c.want)
			}
		})
	}
	for _, ok := range []string{
		`{"allow": ["Bash(ls)", "Read", "mcp__probe", "mcp__probe__ping", "SandboxNetworkAccess(domain:example.com)"]}`,
		`{"tools": ["MyTool", "Deploy"], "allow": ["MyTool"], "deny": ["Deploy(prod)"]}`,
		`{"allow": ["MyTool"], "tools": ["MyTool"]}`,
	} {
		if _, err := ParseRulesFile("p.json", []byte(ok), "/home/u"); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}
