package bridge

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Profile is what one agent CLI needs: the flags that put it in stream-json
// mode, and how its user envelope looks.
type Profile struct {
	Name string
	// BaseArgs are always passed, before anything else.
	BaseArgs []string
	// SessionInEnvelope: the user envelope carries the current session_id
	// (the legacy context CLI reads it).
	SessionInEnvelope bool
	// TurnIDs: the agent names the turns each result answers (the
	// envelope's uuid, echoed in user_message_uuids and command_lifecycle),
	// so turns it folds together are still counted right.
	TurnIDs bool
}

// Profiles are the agent CLIs agentjq knows.
var Profiles = map[string]Profile{
	"claude": {
		Name:     "claude",
		TurnIDs:  true,
		BaseArgs: []string{"--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--permission-prompt-tool", "stdio"},
	},
	// The context CLI's legacy v1 contract, exactly as its document spells
	// it: -p with stream-json both ways, and session_id in the envelope.
	// The contract has no permission prompt tool: the CLI decides itself.
	"context": {
		Name:              "context",
		BaseArgs:          []string{"-p", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"},
		SessionInEnvelope: true,
	},
}

// PassFlags are spawn's flags that go to the agent.
type PassFlags struct {
	Model, PermissionMode, AllowedTools, DisallowedTools string
	SystemPrompt, AppendSystemPrompt, Resume, SessionID  string
	MaxTurns                                             int
	Partial                                              bool
}

// args renders the pass-through flags in the agent's own spelling.
func (f PassFlags) args() []string {
	var a []string
	add := func(flag, v string) {
		if v != "" {
			a = append(a, flag, v)
		}
	}
	add("--model", f.Model)
	add("--permission-mode", f.PermissionMode)
	add("--allowed-tools", f.AllowedTools)
	add("--disallowed-tools", f.DisallowedTools)
	add("--system-prompt", f.SystemPrompt)
	add("--append-system-prompt", f.AppendSystemPrompt)
	if f.MaxTurns > 0 {
		a = append(a, "--max-turns", fmt.Sprint(f.MaxTurns))
	}
	add("--resume", f.Resume)
	add("--session-id", f.SessionID)
	if f.Partial {
		a = append(a, "--include-partial-messages")
	}
	return a
}

// UsageError is a flag combination that cannot work; it is reported before
// anything is spawned.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// CheckAgentArgs refuses agent arguments that would break the session:
// another output or input format, a permission prompt tool other than
// stdio, or print mode with a prompt on argv.
func CheckAgentArgs(p Profile, extra []string) error {
	for i := 0; i < len(extra); i++ {
		a := extra[i]
		name, val, hasVal := strings.Cut(a, "=")
		next := func() (string, bool) {
			if hasVal {
				return val, true
			}
			if i+1 < len(extra) {
				return extra[i+1], true
			}
			return "", false
		}
		switch name {
		case "--output-format", "--input-format":
			if v, ok := next(); ok && v != "stream-json" {
				return &UsageError{fmt.Sprintf("%s %s after --: agentjq speaks stream-json with the agent; filter its output instead (agentjq filter)", name, v)}
			}
		case "--permission-prompt-tool":
			if v, ok := next(); ok && v != "stdio" {
				return &UsageError{fmt.Sprintf("--permission-prompt-tool %s after --: agentjq answers permission requests itself over stdio; use --policy or --approver", v)}
			}
		case "-p", "--print":
			if p.Name == "claude" {
				return &UsageError{name + " after --: agentjq never puts a prompt on the agent's argv; use --prompt TEXT or write the turn on stdin"}
			}
		case "--sdk-url":
			return &UsageError{"--sdk-url after --: agentjq owns the agent's stdio"}
		}
	}
	return nil
}

// Command builds the agent's argv. On Windows a .cmd or .bat shim cannot
// be executed directly and runs through cmd /C.
func Command(p Profile, bin, goos string, flags PassFlags, extra []string) (path string, args []string) {
	args = append(append(append([]string{}, p.BaseArgs...), flags.args()...), extra...)
	if goos == "windows" {
		ext := strings.ToLower(filepath.Ext(bin))
		if ext == ".cmd" || ext == ".bat" {
			return "cmd", append([]string{"/C", bin}, args...)
		}
	}
	return bin, args
}

// sessionScoped are variables a running Claude Code sets for its own
// children. A child that inherits them believes it is nested inside that
// session and refuses to start, or reports to the wrong parent.
var sessionScoped = []string{
	"CLAUDECODE=",
	"CLAUDE_CODE_ENTRYPOINT=",
	"CLAUDE_CODE_SSE_PORT=",
	"CLAUDE_CODE_SESSION",
	"CLAUDE_CODE_PARENT",
	"CLAUDE_CODE_EXECPATH=",
	"CLAUDE_CODE_IDE",
	"CLAUDE_CODE_AGENT",
	"CLAUDE_CODE_TASK",
	"CLAUDE_CODE_SDK_",
}

// ChildEnv returns environ without the session-scoped variables of an
// enclosing Claude Code session. User settings such as
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC or CLAUDE_CODE_MAX_RETRIES stay.
func ChildEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
next:
	for _, kv := range environ {
		for _, p := range sessionScoped {
			if strings.HasPrefix(kv, p) {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
