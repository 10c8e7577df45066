package manpages

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentjq/agentjq/internal/roff"
	"github.com/agentjq/agentjq/redact"
)

// redactionSections is what agentjq-record(1) says of the built-in
// redaction: what it detects, by class, with the gitleaks version whose
// rules it runs, and what it cannot detect without context.
func redactionSections(p *roff.Page) {
	p.Section("SECRETS DETECTED")
	ids := redact.GitleaksRuleIDs()
	p.Para(fmt.Sprintf("Redaction is on by default (--no-redact turns it off): before a line reaches the file, what follows is replaced by [REDACTED:KIND], where KIND names the rule (a gitleaks rule id such as npm-access-token, or agentjq's: secret, url-password, private-key, netrc-password...). It runs %d rules of gitleaks %s (github.com/zricethezav/gitleaks/v8, the version go.mod pins) and agentjq's own, inside JSON strings with their escapes decoded and on lines that are not JSON. agentjq-recording(5) says how the file keeps its JSON valid.", len(ids), redact.GitleaksVersion))
	for _, c := range redact.Detected {
		p.Item(roff.Bold(c.Class), c.What)
	}
	skipped := redact.GitleaksSkipped()
	var names []string
	for id := range skipped {
		names = append(names, id)
	}
	sort.Strings(names)
	var why []string
	for _, id := range names {
		why = append(why, id+" ("+skipped[id]+")")
	}
	p.Para("Of gitleaks' rules, these are not run: " + strings.Join(why, "; ") + ".")
	p.Section("UNDETECTABLE WITHOUT CONTEXT")
	p.Para("These have no shape of their own: on their own, with no name before them, they cannot be told from ordinary text, and the recording keeps them. Under a name that says what they are (TWILIO_AUTH_TOKEN=..., \"token\": \"...\") they go like any other value; --redact-env NAME and --redact REGEX remove them wherever they stand.")
	for _, u := range redact.Undetectable {
		p.Item(roff.Bold(u.What), u.Why+".")
	}
	p.Para("Nor can any detector know a password of no particular shape written where nothing names it (a bare word on a line of its own), or a secret split across two lines written separately, except a PEM key's and a PuTTY key's body.")
}
