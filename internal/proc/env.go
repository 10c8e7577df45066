package proc

import "strings"

// AgentCredentials are the environment variables that carry the agent's
// own credentials (Anthropic API keys and tokens, Claude Code's OAuth
// token, the Bedrock, Vertex and Foundry credentials). Entries ending in
// '_' are prefixes (every AWS_ variable: Bedrock reads them).
var AgentCredentials = []string{
	"ANTHROPIC_API_KEY",
	"ANTHROPIC_AUTH_TOKEN",
	"ANTHROPIC_CUSTOM_HEADERS",
	"ANTHROPIC_FOUNDRY_API_KEY",
	"CLAUDE_CODE_OAUTH_TOKEN",
	"CLAUDE_CODE_OAUTH_REFRESH_TOKEN",
	"CLAUDE_CODE_CLIENT_KEY_PASSPHRASE",
	"GOOGLE_APPLICATION_CREDENTIALS",
	"AWS_",
}

// WithoutAgentCredentials is env without AgentCredentials: the
// environment of the commands agentjq hosts for a session (hooks, tool
// commands, MCP servers, approvers), which have no business holding the
// agent's keys.
func WithoutAgentCredentials(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !isAgentCredential(kv) {
			out = append(out, kv)
		}
	}
	return out
}

func isAgentCredential(kv string) bool {
	name, _, _ := strings.Cut(kv, "=")
	for _, c := range AgentCredentials {
		if name == c || strings.HasSuffix(c, "_") && strings.HasPrefix(name, c) {
			return true
		}
	}
	return false
}
