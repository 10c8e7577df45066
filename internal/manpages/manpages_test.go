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
