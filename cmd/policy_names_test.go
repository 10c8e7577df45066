package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/iostreams"
)

// A misspelt tool name in a policy fails approve test and spawn --policy
// before anything runs: exit 2, the file and line, and the name meant.
func TestPolicyUnknownToolName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\n  \"allow\": [\n    \"Bassh(rm:*)\"\n  ]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(fixtures.RecordingsDir(protocol.CheckedVersions[len(protocol.CheckedVersions)-1]), "write-deny.rec")
	want := bad + `:3:5: rule "Bassh(rm:*)": unknown tool "Bassh"; did you mean Bash?`
	for _, args := range [][]string{
		{"approve", "test", "--policy", bad, rec},
		{"spawn", "--bin", "/bin/true", "--policy", bad, "-p", "hi"},
	} {
		ios, _, out, errb := iostreams.Test()
		if code := Main(args, ios); code != protocol.ExitUsage || !strings.Contains(errb.String(), want) {
			t.Errorf("agentjq %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(args[:2], " "), code, errb, want)
		}
		if out.Len() != 0 {
			t.Errorf("agentjq %s: wrote %q", strings.Join(args[:2], " "), out)
		}
	}
	// Marked as the policy's own, the name is accepted.
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`{"tools": ["Bassh"], "allow": ["Bassh(rm:*)", "mcp__probe__ping"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ios, _, _, errb := iostreams.Test()
	if code := Main([]string{"approve", "test", "--policy", good, rec}, ios); code != 0 {
		t.Errorf("approve test with the tool marked: exit %d\n%s", code, errb)
	}
}
