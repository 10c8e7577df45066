// Package sandbox derives the OS sandbox every Bash command of a claude
// session runs in from agentjq's policy, and reads back what it stopped.
//
// agentjq does not sandbox commands itself: it turns on Claude Code's own
// sandbox (bubblewrap on Linux, Seatbelt on macOS) with settings derived
// from the policy, passed to claude with --settings. Rules say what the
// user wants; the sandbox enforces files, reads and network for every
// command and every program it starts, whatever its spelling. The file
// tools (Read, Edit, Write) run inside claude and are not sandboxed: path
// rules hold those.
//
// In the session core's flow (internal/bridge's map) this package stands
// beside approve: cmd builds the sandbox block when it builds the agent's
// arguments, and a Watcher reads the agent's lines for what the sandbox
// blocked.
package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentjq/agentjq/protect"
)

// Policy is what the sandbox of one session is made from. Paths are
// absolute.
type Policy struct {
	Project string // the agent's working directory: writable
	Home    string

	// AllowWrite are paths outside the project that commands may write:
	// the directories of Edit and Write allow rules, the policy's own
	// sandbox.filesystem.allowWrite, and the build caches (Caches).
	AllowWrite []string
	// DenyWrite are Edit and Write deny rules and the policy's own list;
	// the control files of package protect are added to them.
	DenyWrite []string
	// DenyRead are Read deny rules and the policy's own list; the
	// credential files (Credentials) are added unless AllowRead names
	// them.
	DenyRead  []string
	AllowRead []string
	// Domains are the hosts commands may reach: WebFetch(domain:...)
	// allow rules and the policy's sandbox.network.allowedDomains.
	// Anything else is asked about (SandboxNetworkAccess), through the
	// approval chain.
	Domains []string
	// HideEnv are environment variables commands do not see, beside the
	// agent's own credentials (AgentCredentials).
	HideEnv []string
}

// AgentCredentials are the agent's own credentials: no command it runs
// sees them.
var AgentCredentials = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
	"AWS_BEARER_TOKEN_BEDROCK", "ANTHROPIC_FOUNDRY_API_KEY", "CLAUDE_CODE_SESSION_ACCESS_TOKEN",
}

// Credentials are the files below HOME that hold credentials: commands do
// not read those that exist unless a Read allow rule names them.
var Credentials = []string{
	".ssh", ".aws", ".azure", ".config/gcloud", ".gnupg", ".netrc", ".git-credentials",
	".docker/config.json", ".kube/config", ".npmrc", ".pypirc", ".config/gh/hosts.yml",
	".cargo/credentials", ".cargo/credentials.toml", ".terraform.d/credentials.tfrc.json",
	".vault-token", ".claude/.credentials.json", ".config/hub", ".pgpass", ".my.cnf",
	".config/git/credentials", ".config/glab-cli", ".gem/credentials", ".m2/settings.xml",
	".gradle/gradle.properties", ".config/rclone", ".s3cfg", ".boto", ".config/containers/auth.json",
	".config/sops", ".age", ".composer/auth.json", ".vercel", ".netlify", ".config/fly", ".wrangler",
	".config/doctl", ".oci", ".terraformrc", ".password-store", ".local/share/keyrings",
	".bash_history", ".zsh_history", ".python_history", ".psql_history", ".mysql_history",
	// claude's own history and transcripts: other sessions' files and
	// what the file tools read (a Read-denied file an Edit was refused
	// before this rule, a pasted secret).
	".claude/projects", ".claude/history.jsonl",
}

// Settings returns the "sandbox" block of claude's settings for p: on,
// failing when it cannot run, never retrying a command outside it, and
// never allowing Bash for being sandboxed (agentjq's rules decide every
// call).
func Settings(p Policy) map[string]any {
	denyWrite := append(slices.Clone(p.DenyWrite), protect.Paths(p.Project)...)
	if p.Home != "" && within(p.Home, append([]string{p.Project}, p.AllowWrite...)) {
		// HOME is writable here (a session in HOME, a rule allowing it):
		// its rc files and configuration are held too.
		denyWrite = append(denyWrite, protect.HomePaths(p.Home)...)
	}
	denyRead := slices.Clone(p.DenyRead)
	if p.Home != "" {
		for _, c := range Credentials {
			// One that does not exist holds nothing to read, and cannot
			// be made: HOME is not writable to commands.
			abs := filepath.Join(p.Home, c)
			if _, err := os.Lstat(abs); err == nil && !within(abs, p.AllowRead) {
				denyRead = append(denyRead, abs)
			}
		}
	}
	var env []any
	for _, name := range unique(append(slices.Clone(AgentCredentials), p.HideEnv...)) {
		env = append(env, map[string]any{"name": name, "mode": "deny"})
	}
	fs := map[string]any{
		"allowWrite": nonNil(unique(p.AllowWrite)),
		"denyWrite":  nonNil(unique(denyWrite)),
		"denyRead":   nonNil(unique(denyRead)),
	}
	if len(p.AllowRead) > 0 {
		fs["allowRead"] = unique(p.AllowRead)
	}
	return map[string]any{
		"enabled":                  true,
		"failIfUnavailable":        true,
		"allowUnsandboxedCommands": false,
		"autoAllowBashIfSandboxed": false,
		"filesystem":               fs,
		"network":                  map[string]any{"allowedDomains": nonNil(unique(p.Domains))},
		"credentials":              map[string]any{"envVars": env},
	}
}

// within reports whether abs is one of dirs or below one.
func within(abs string, dirs []string) bool {
	for _, d := range dirs {
		if abs == d || strings.HasPrefix(abs, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

func unique(list []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range list {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// nonNil keeps an empty list an empty JSON array, not null.
func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}
