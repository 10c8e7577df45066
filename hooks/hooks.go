// Package hooks runs shell commands as the agent's hooks, registered over
// the control channel: each hook gets a callback id in the initialize
// request, and each hook_callback the agent sends runs its command with the
// hook input on stdin. The command's result is turned into hook output with
// Claude Code's command-hook semantics:
//
//	exit 0, stdout a JSON object   that object
//	exit 0, other stdout           {} (no opinion)
//	exit 2                         block, with stderr as the reason
//	any other status, a timeout    a non-blocking error: {} with a systemMessage
//
// A block is spelled per event: PreToolUse denies the call
// (hookSpecificOutput.permissionDecision "deny"), PermissionRequest denies
// the permission, every other event gets decision "block".
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentjq/agentjq/internal/proc"
	"github.com/agentjq/agentjq/internal/protocol"
)

// Events are the hook events claude 2.1.328 accepts in initialize.
var Events = []string{
	"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch",
	"Notification", "UserPromptSubmit", "UserPromptExpansion",
	"SessionStart", "SessionEnd", "Stop", "StopFailure",
	"SubagentStart", "SubagentStop", "PreCompact", "PostCompact",
	"PreModelSwitch", "PostModelSwitch", "PermissionRequest", "PermissionDenied",
	"Setup", "TeammateIdle", "TaskCreated", "TaskCompleted",
	"Elicitation", "ElicitationResult", "ConfigChange",
	"WorktreeCreate", "WorktreeRemove", "InstructionsLoaded",
	"CwdChanged", "FileChanged", "DirectoryAdded", "MessageDisplay",
}

// Hook is one hook command.
type Hook struct {
	Event   string
	Matcher string // "" matches everything
	Command string
}

// String is the hook as written on the command line, without the command.
func (h Hook) String() string {
	if h.Matcher == "" {
		return h.Event
	}
	return h.Event + ":" + h.Matcher
}

// ParseHook reads EVENT[:MATCHER]=CMD. The command is everything after the
// first '='.
func ParseHook(s string) (Hook, error) {
	spec, cmd, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(cmd) == "" {
		return Hook{}, fmt.Errorf("%q: want EVENT[:MATCHER]=COMMAND", s)
	}
	event, matcher, _ := strings.Cut(spec, ":")
	if !slices.Contains(Events, event) {
		return Hook{}, fmt.Errorf("%q: unknown hook event %q (one of: %s)", s, event, strings.Join(Events, ", "))
	}
	return Hook{Event: event, Matcher: matcher, Command: cmd}, nil
}

// Runner answers hook_callback requests for a set of hooks.
type Runner struct {
	Hooks []Hook
	// Timeout limits each run of a hook command (default DefaultTimeout).
	Timeout time.Duration
	// Dir and Env are the commands' working directory and environment.
	Dir string
	Env []string
	// Stderr receives a line for each hook that failed or timed out.
	Stderr io.Writer

	mu sync.Mutex
}

// DefaultTimeout is Claude Code's own limit for a command hook.
const DefaultTimeout = 60 * time.Second

// CallbackID is the id hook i is registered under.
func CallbackID(i int) string { return "hook_" + strconv.Itoa(i) }

// Registration is the "hooks" field of the initialize request:
// {"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"],"timeout":65}]}.
// The agent is given a little longer than agentjq's own limit, so that a
// hook that times out is answered by agentjq rather than abandoned.
func (r *Runner) Registration() map[string][]Matcher {
	reg := map[string][]Matcher{}
	secs := int((r.timeout() + 5*time.Second + time.Second - 1) / time.Second)
	for i, h := range r.Hooks {
		reg[h.Event] = append(reg[h.Event], Matcher{Matcher: h.Matcher, HookCallbackIDs: []string{CallbackID(i)}, Timeout: secs})
	}
	return reg
}

// Matcher is one entry of the initialize request's hooks.
type Matcher struct {
	Matcher         string   `json:"matcher,omitempty"`
	HookCallbackIDs []string `json:"hookCallbackIds"`
	Timeout         int      `json:"timeout,omitempty"`
}

func (r *Runner) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

// Handle answers one hook_callback control request; it has the signature
// of a bridge control handler. An unknown callback id is an error.
func (r *Runner) Handle(ctx context.Context, _ string, request json.RawMessage) (any, error) {
	var req protocol.HookCallback
	if err := json.Unmarshal(request, &req); err != nil {
		return nil, fmt.Errorf("agentjq: unreadable hook_callback: %v", err)
	}
	i, ok := strings.CutPrefix(req.CallbackID, "hook_")
	n, err := strconv.Atoi(i)
	if !ok || err != nil || n < 0 || n >= len(r.Hooks) {
		return nil, fmt.Errorf("agentjq: no hook is registered as %q", req.CallbackID)
	}
	return r.Run(ctx, r.Hooks[n], req.Input), nil
}

// Run runs hook h with input (the hook input JSON) and returns its output.
func (r *Runner) Run(ctx context.Context, h Hook, input json.RawMessage) json.RawMessage {
	event := eventOf(input, h.Event)
	res := proc.Run(ctx, proc.Spec{
		Command: h.Command, Dir: r.Dir, Env: r.env(event),
		Stdin: append(bytes.TrimSpace(input), '\n'), Timeout: r.timeout(),
	})
	out, problem := Output(event, res)
	if problem != "" && ctx.Err() == nil {
		r.report(h, problem)
	}
	return out
}

func (r *Runner) env(event string) []string {
	env := slices.Clone(r.Env)
	if r.Dir != "" {
		env = append(env, "CLAUDE_PROJECT_DIR="+r.Dir)
	}
	return append(env, "AGENTJQ_HOOK_EVENT="+event)
}

func (r *Runner) report(h Hook, problem string) {
	if r.Stderr == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.Stderr, "agentjq: hook %s: %s\n", h, problem)
}

// eventOf is the event named in the hook input, else the registered one.
func eventOf(input json.RawMessage, registered string) string {
	var in struct {
		Event string `json:"hook_event_name"`
	}
	if json.Unmarshal(input, &in) == nil && in.Event != "" {
		return in.Event
	}
	return registered
}

// Output turns a hook command's result into hook output for event, with
// Claude Code's command-hook semantics. problem, when not empty, says why
// the hook did not give an answer of its own (a failure or a timeout).
func Output(event string, res proc.Result) (out json.RawMessage, problem string) {
	switch {
	case res.Err != nil:
		problem = "could not run: " + res.Err.Error()
	case res.TimedOut:
		problem = "timed out and was killed; treated as no opinion"
	case res.Cancelled:
		problem = "cancelled"
	case res.ExitCode == 0:
		if obj := jsonObject(res.Stdout); obj != nil {
			return obj, ""
		}
		return json.RawMessage(`{}`), ""
	case res.ExitCode == 2:
		return Block(event, reason(res.Stderr)), ""
	default:
		problem = fmt.Sprintf("exit status %d (a non-blocking error)", res.ExitCode)
		if msg := strings.TrimSpace(string(res.Stderr)); msg != "" {
			problem += ": " + firstLine(msg)
		}
	}
	return protocol.Marshal(map[string]string{"systemMessage": "agentjq: hook " + problem}), problem
}

// Block is the hook output that blocks event with reason.
func Block(event, reason string) json.RawMessage { return protocol.HookBlock(event, reason) }

func reason(stderr []byte) string {
	if msg := strings.TrimSpace(string(stderr)); msg != "" {
		return msg
	}
	return "Blocked by a hook (exit status 2)."
}

// jsonObject returns stdout when it holds exactly one JSON object.
func jsonObject(stdout []byte) json.RawMessage {
	t := bytes.TrimSpace(stdout)
	if len(t) < 2 || t[0] != '{' {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil
	}
	return json.RawMessage(t)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 300 {
		line = line[:300] + "..."
	}
	return line
}
