package approve

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/agentjq/agentjq/internal/protocol"
)

// agentjq runs every Bash command in the sandbox, so a Bash call asking to
// run outside it (dangerouslyDisableSandbox, which claude may add when a
// command failed in the sandbox) is denied whatever the policies say.
const unsandboxedRule = "sandbox"

const unsandboxedMessage = "agentjq: agentjq runs every command in the sandbox; a Bash call with dangerouslyDisableSandbox is denied. Run the command without it (it stays in the sandbox), or change the policy if it needs more than the sandbox allows."

// unsandboxed reports a Bash input that asks to leave the sandbox: a
// dangerouslyDisableSandbox key in any case whose value is anything but
// false. An input that is not an object is no such request (the rules
// deny it as unreadable).
func unsandboxed(tool string, input json.RawMessage) bool {
	if tool != "Bash" {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(input, &m) != nil {
		return false
	}
	for k, v := range m {
		if strings.EqualFold(k, "dangerouslyDisableSandbox") && !bytes.Equal(bytes.TrimSpace(v), []byte("false")) {
			return true
		}
	}
	return false
}

// denyUnsandboxed is the chain's verdict for such a call.
func (c *Chain) denyUnsandboxed(req *Request) (Verdict, bool) {
	if !unsandboxed(req.ToolName, req.Input) {
		return Verdict{}, false
	}
	return Verdict{Behavior: protocol.Deny, Source: protocol.ByRules, Rule: unsandboxedRule, Message: unsandboxedMessage}, true
}
