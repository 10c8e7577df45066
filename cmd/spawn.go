package cmd

import (
	"errors"
	"time"
)

// SpawnFlags are the flags of a session; spawn and record share them.
type SpawnFlags struct {
	Agent           string        `enum:"claude,context" default:"claude" help:"CLI profile: which flags and envelope the agent needs (${enum})."`
	Bin             string        `placeholder:"PATH" help:"The agent binary (default: $$AGENTJQ_AGENT_BIN, else the profile's name on PATH)."`
	Prompt          string        `short:"p" placeholder:"TEXT" help:"One-shot: send TEXT as the only turn and end after its result (stdin unused)."`
	Cwd             string        `short:"C" placeholder:"DIR" help:"The agent's working directory."`
	Model           string        `help:"Passed through to the agent."`
	PermissionMode  string        `help:"Passed through: default, acceptEdits, plan, bypassPermissions, dontAsk."`
	AllowedTools    string        `help:"Passed through: permission rules the agent allows without asking."`
	DisallowedTools string        `help:"Passed through: permission rules the agent denies."`
	SystemPrompt    string        `help:"Passed through to the agent."`
	AppendSystem    string        `name:"append-system-prompt" help:"Passed through to the agent."`
	MaxTurns        int           `help:"Passed through: limit the model round trips of a turn."`
	Resume          string        `help:"Passed through: resume a session by id."`
	SessionID       string        `help:"Passed through: the session's id (a UUID)."`
	Partial         bool          `help:"Ask for partial messages (--include-partial-messages)."`
	Echo            bool          `help:"Also write each turn agentjq sends to stdout (the CLI does not echo)."`
	ApprovalTimeout time.Duration `default:"10m" help:"Deny a pending permission request after this long."`
	IdleTimeout     time.Duration `help:"No output from the agent for this long: staged shutdown, outcome stalled."`
	Timeout         time.Duration `help:"Wall-clock limit for the whole session."`
	NoEvents        bool          `help:"Do not write agentjq's own events to stdout."`

	Policy         []string `type:"path" placeholder:"FILE" help:"Approval policy files: rules (.json) or jq programs (.jq); repeatable."`
	Approver       string   `placeholder:"CMD" help:"An approver command: a co-process that answers permission requests."`
	ApproverFormat string   `enum:"control,hook" default:"control" help:"How the approver speaks: control (a control_response per request) or hook (a PreToolUse hook, one process per request)."`
}

// SpawnCmd is the spawn subcommand.
type SpawnCmd struct {
	SpawnFlags
	Record    string   `placeholder:"FILE" help:"Also record the session to FILE (see agentjq record)."`
	AgentArgs []string `arg:"" optional:"" passthrough:"" help:"Arguments after -- go to the agent verbatim."`
}

// Run runs spawn.
func (c *SpawnCmd) Run() error { return errors.New("spawn: coming in a later commit") }
