package manpages

import (
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/roff"
)

// Every entry of the protocol tables is on the protocol page.
func TestProtocolPageCoversTables(t *testing.T) {
	page := roff.Text(protocolPage().String(), 10000)
	for _, td := range protocol.MessageTypes {
		if !strings.Contains(page, td.Type+" ("+string(td.Sender)+")") {
			t.Errorf("no subsection for %s (%s)", td.Type, td.Sender)
		}
		for _, s := range td.Subtypes {
			if !strings.Contains(page, "\n       "+s.Name+"\n") && !strings.Contains(page, "\n       "+s.Name+" ") {
				t.Errorf("%s subtype %s is not listed", td.Type, s.Name)
			}
			if s.Answer != "" && !strings.Contains(page, "Response: "+s.Answer) {
				t.Errorf("%s subtype %s: response shape missing", td.Type, s.Name)
			}
		}
	}
	for _, v := range protocol.CheckedVersions {
		if !strings.Contains(page, v) {
			t.Errorf("checked version %s missing", v)
		}
	}
}

func TestPolicyManualConverts(t *testing.T) {
	p, err := roff.FromMarkdown(policyManual)
	if err != nil {
		t.Fatal(err)
	}
	text := roff.Text(p.String(), 80)
	for _, want := range []string{"RULES FILES", "JQ POLICIES", "APPROVER PROTOCOL", "HOOK PROTOCOL", "git diff:* these words", "Bash(pattern)"} {
		if !strings.Contains(text, want) {
			t.Errorf("policy page lacks %q", want)
		}
	}
}

// TestACPFeatureTable: agentjq-acp(1)'s feature table has a row for each
// feature an editor asks about (issue 25), every cell filled, and the
// page shows them.
func TestACPFeatureTable(t *testing.T) {
	want := []string{"session/new", "session/load", "session/list", "session/resume", "session/fork", "session/close",
		"image prompts", "MCP servers over http and sse", "slash-command descriptions", "usage_update"}
	rows := map[string]bool{}
	for _, f := range acpFeatures {
		if f[0] == "" || f[1] == "" || f[2] == "" {
			t.Errorf("an empty cell: %q", f)
		}
		rows[f[0]] = true
	}
	for _, w := range want {
		if !rows[w] {
			t.Errorf("no row for %s", w)
		}
	}
	p := roff.NewPage("agentjq-acp", "1", "agentjq", "agentjq manual")
	acpSections(p)
	text := roff.Text(p.String(), 10000)
	for _, w := range append(want, "ACP features") {
		if !strings.Contains(text, w) {
			t.Errorf("the acp page's sections lack %q", w)
		}
	}
}
