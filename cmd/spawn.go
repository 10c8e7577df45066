package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/hooks"
	"github.com/agentjq/agentjq/internal/bridge"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/iostreams"
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

	Policy         []string `placeholder:"FILE" help:"Approval policy files: rules (.json) or jq programs (.jq); repeatable."`
	Approver       string   `placeholder:"CMD" help:"An approver command: a co-process that answers permission requests."`
	ApproverFormat string   `enum:"control,hook" default:"control" help:"How the approver speaks: control (a control_response per request) or hook (a PreToolUse hook, one process per request)."`
	NoPrompt       bool     `help:"Never prompt on the terminal: what no policy or approver decides is denied."`
	NoSandbox      bool     `help:"Run the agent's commands without the OS sandbox: file, read and network limits are then not enforced (warns once)."`

	HostFlags

	// proxied is set by agentjq proxy (not a flag): what the chain does
	// not deny is the client's to decide (hooks.Guard.ClientDecides).
	proxied bool
}

// SpawnCmd is the spawn subcommand.
type SpawnCmd struct {
	SpawnFlags
	Record string `placeholder:"FILE" help:"Also record the session to FILE (see agentjq record)."`
	RedactFlags
	AgentArgs []string `arg:"" optional:"" passthrough:"" help:"Arguments after -- go to the agent verbatim."`
}

// Run runs spawn.
func (c *SpawnCmd) Run(ctx context.Context, ios *iostreams.IO, kctx *kong.Context) error {
	agentArgs, err := splitAgentArgs(c.AgentArgs)
	if err != nil {
		return err
	}
	if c.Record == "" {
		return runSpawn(ctx, ios, c.SpawnFlags, agentArgs, nil)
	}
	rec, err := openRecording(ios, c.Record, c.RedactFlags, sessionOf(c.SpawnFlags, agentArgs), append([]string{"agentjq"}, kctx.Args...), c.Cwd)
	if err != nil {
		return err
	}
	return closeRecording(ios, rec, runSpawn(ctx, ios, c.SpawnFlags, agentArgs, rec))
}

// splitAgentArgs returns the arguments after --, which kong passes
// through with the -- itself. Anything else there is an unknown flag or a
// stray argument: kong's passthrough would otherwise hand it to the agent.
func splitAgentArgs(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	if args[0] != "--" {
		if strings.HasPrefix(args[0], "-") {
			return nil, usageError("unknown flag %s (arguments for the agent go after --)", args[0])
		}
		return nil, usageError("unexpected argument %q (send prompts with -p or on stdin; arguments for the agent go after --)", args[0])
	}
	return args[1:], nil
}

// A tapper sees every line of a session: a recording (*recording.Writer)
// or a probe (tapFunc).
type tapper interface {
	Tap(dir protocol.Direction, line []byte, known protocol.Known)
}

// tapFunc makes a function a tapper.
type tapFunc func(dir protocol.Direction, line []byte, known protocol.Known)

func (f tapFunc) Tap(dir protocol.Direction, line []byte, known protocol.Known) { f(dir, line, known) }

// runSpawn runs one session; record and spawn --record pass a tap.
func runSpawn(ctx context.Context, ios *iostreams.IO, f SpawnFlags, agentArgs []string, tap tapper) error {
	return runSpawnWith(ctx, ios, f, agentArgs, tap, nil)
}

// runSpawnWith is runSpawn with the permission decider replaced when
// approver is not nil (replay --check answers as the recording did).
func runSpawnWith(ctx context.Context, ios *iostreams.IO, f SpawnFlags, agentArgs []string, tap tapper, approver approve.Decider) error {
	// The agent's stderr, the approval chain and hosted commands all write
	// to stderr from their own goroutines: one write at a time.
	shared := *ios
	shared.Err = &syncio.Writer{W: ios.Err}
	ios = &shared
	opts, chain, err := sessionOptions(ios, f, agentArgs)
	if err != nil {
		return err
	}
	defer chain.Close()
	if tap != nil {
		opts.Tap = tap.Tap
		if e, ok := tap.(interface{ Flush() error }); ok {
			// A recording that failed (disk full) is the session's error.
			opts.TapErr = e.Flush
		}
		if e, ok := tap.(interface{ Echo() func([]byte) []byte }); ok {
			if echo := e.Echo(); echo != nil {
				opts.RedactEcho = echo
			}
		}
	}
	if approver != nil {
		opts.Approver = approver
	}

	sigs, stop := sessionSignals()
	defer stop()
	opts.Signals = sigs

	rep, err := bridge.Run(ctx, opts)
	if err != nil {
		return err
	}
	if rep.Err != "" && rep.Outcome != protocol.OutcomeClosed {
		fmt.Fprintf(ios.Err, "agentjq: %s: %s\n", rep.Outcome, rep.Err)
	}
	return silentExit(rep.ExitCode)
}

// sessionOptions turns spawn's flags into bridge options, refusing what
// cannot work before anything starts.
func sessionOptions(ios *iostreams.IO, f SpawnFlags, agentArgs []string) (bridge.Options, *approve.Chain, error) {
	return sessionOptionsWith(ios, f, agentArgs, nil)
}

// sessionOptionsWith is sessionOptions with person, when not nil, as the
// last stage of the approval chain in place of the terminal (acp's editor).
func sessionOptionsWith(ios *iostreams.IO, f SpawnFlags, agentArgs []string, person approve.Decider) (bridge.Options, *approve.Chain, error) {
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--timeout", f.Timeout}, {"--idle-timeout", f.IdleTimeout}, {"--approval-timeout", f.ApprovalTimeout}} {
		if d.v < 0 {
			return bridge.Options{}, nil, usageError("%s %s: a duration cannot be negative (0 means no limit)", d.flag, d.v)
		}
	}
	profile, ok := bridge.Profiles[f.Agent]
	if !ok {
		return bridge.Options{}, nil, usageError("unknown --agent %q", f.Agent)
	}
	if err := bridge.CheckAgentArgs(profile, agentArgs); err != nil {
		return bridge.Options{}, nil, usageError("%v", err)
	}
	bin, err := agentBinary(ios, f, profile)
	if err != nil {
		return bridge.Options{}, nil, err
	}
	dir := f.Cwd
	if dir == "" {
		dir = ios.Dir
	}
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return bridge.Options{}, nil, err
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return bridge.Options{}, nil, usageError("--cwd %s: not a directory", dir)
	}
	dir, _ = filepath.Abs(dir)
	if profile.Name == "claude" && !namesFlag(agentArgs, "--setting-sources") {
		agentArgs = append([]string{"--setting-sources", agentSettingSources}, agentArgs...)
	}
	// The terminal is the person's: when stdin is the terminal prompts
	// are answered on, one reader serves both, and a line typed while a
	// prompt is open is its answer, never a turn. While a prompt is open
	// stdout is held, so a viewer on that terminal does not draw into it.
	var tin *approve.TerminalInput
	stdin := ios.In
	if ios.InTTY && f.Prompt == "" && !f.NoPrompt {
		tin = approve.NewTerminalInput(ios.In, true)
		stdin = tin.Turns()
	}
	gate := bridge.NewOutputGate()
	chain, err := approvalChain(ios, f, dir, tin, gate.Hold, person)
	if err != nil {
		return bridge.Options{}, nil, err
	}
	sb := sandboxed{args: agentArgs, done: func() {}}
	if !f.proxied {
		// The proxy runs the client's arguments: it turns the sandbox on
		// over those itself.
		if sb, err = sessionSandbox(ios, f, dir, chain, agentArgs); err != nil {
			chain.Close()
			return bridge.Options{}, nil, err
		}
		agentArgs = sb.args
	}
	path, args := bridge.Command(profile, bin, runtime.GOOS, bridge.PassFlags{
		Model: f.Model, PermissionMode: f.PermissionMode,
		AllowedTools: f.AllowedTools, DisallowedTools: f.DisallowedTools,
		SystemPrompt: f.SystemPrompt, AppendSystemPrompt: f.AppendSystem,
		Resume: f.Resume, SessionID: f.SessionID, MaxTurns: f.MaxTurns,
		Partial: f.Partial,
	}, agentArgs)
	opts := bridge.Options{
		Profile: profile, Path: path, Args: args, Dir: dir,
		Env:             append(bridge.ChildEnv(ios.Environ), sb.env...),
		Echo:            f.Echo,
		NoEvents:        f.NoEvents,
		ApprovalTimeout: f.ApprovalTimeout,
		IdleTimeout:     f.IdleTimeout,
		Timeout:         f.Timeout,
		Approver:        chain,
		Stdin:           stdin,
		Stdout:          ios.Out,
		Gate:            gate,
		Stderr:          ios.Err,
		RedactEcho:      echoRedactor(ios),
		Watch:           sb.watch,
		AtEnd:           []func(){sb.done},
	}
	if f.Prompt != "" {
		opts.Prompt, opts.HasPrompt, opts.Stdin = f.Prompt, true, nil
	}
	var guard *hooks.Guard
	if profile.Name == "claude" && screenEveryCall && chain.Guards() {
		// The agent runs many calls without asking: have it ask agentjq's
		// PreToolUse hook about every one.
		// What the chain leaves undecided is the proxy's client's to
		// decide, or, when the chain screens only for the person's session
		// deny rules (acp without policies), claude's own permission flow's:
		// the editor is asked what claude asks.
		guard = &hooks.Guard{Screen: chain.Screen, ClientDecides: f.proxied || chain.PassesUndecided()}
	}
	if err := hostSession(ios, f.HostFlags, &opts, guard); err != nil {
		chain.Close()
		return bridge.Options{}, nil, err
	}
	if g := ios.Getenv("AGENTJQ_GRACE"); g != "" {
		if d, err := time.ParseDuration(g); err == nil {
			opts.Grace = d
		}
	}
	return opts, chain, nil
}

// screenEveryCall registers the guard hook whenever the chain decides. Only
// tests turn it off: those that replay recordings made before the guard
// existed (raw captures, older fixtures), whose agent side knows no
// initialize request.
var screenEveryCall = true

// agentSettingSources are the settings files the spawned claude loads
// unless the agent arguments name --setting-sources themselves: the
// user's own (~/.claude/settings.json), not the project's
// (.claude/settings.json) or the local ones (.claude/settings.local.json).
// Those live in the agent's working directory, which the agent (or the
// repository it was given) can write, and the agent reloads them as they
// change: a command hook, an "env" (BASH_ENV) or an allow rule there would
// run code or widen permissions around the policy. The price: the
// project's CLAUDE.md is not loaded either (checked live, 2.1.328 and
// 2.1.332).
const agentSettingSources = "user"

// namesFlag reports whether args hold flag, as "--flag" or "--flag=value".
func namesFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// agentBinary finds the agent: --bin, $AGENTJQ_AGENT_BIN, the profile's
// name on PATH.
func agentBinary(ios *iostreams.IO, f SpawnFlags, p bridge.Profile) (string, error) {
	bin := f.Bin
	if bin == "" {
		bin = ios.Getenv("AGENTJQ_AGENT_BIN")
	}
	if bin == "" {
		bin = p.Name
	}
	if strings.ContainsRune(bin, filepath.Separator) {
		return bin, nil
	}
	found, err := lookPath(bin, ios.Getenv("PATH"))
	if err != nil {
		return "", &exitError{code: protocol.ExitNotFound,
			err: fmt.Errorf("agent %q not found on PATH; install it, or point --bin or $AGENTJQ_AGENT_BIN at it", bin)}
	}
	return found, nil
}

// lookPath is exec.LookPath over the given PATH rather than the process's.
func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// approvalChain builds the deciders for can_use_tool: policies, approver,
// the terminal, and the fail-closed default. A policy that does not parse
// fails here, before the agent starts.
func approvalChain(ios *iostreams.IO, f SpawnFlags, cwd string, tin *approve.TerminalInput, quiet func() func(), person approve.Decider) (*approve.Chain, error) {
	var tty func() (io.ReadWriteCloser, error)
	if !f.NoPrompt {
		tty = ios.OpenTTY
	}
	return approve.NewChain(approve.ChainOptions{
		Policies:       f.Policy,
		Approver:       f.Approver,
		ApproverFormat: f.ApproverFormat,
		TTY:            tty,
		TerminalInput:  tin,
		Quiet:          quiet,
		Person:         person,
		Cwd:            cwd,
		Home:           ios.Getenv("HOME"),
		Env:            ios.Environ,
		Stderr:         ios.Err,
		// --pass-credentials: see HostFlags.
		PassCredentials: f.PassCredentials,
	})
}

// Help is shown after the flags in spawn --help.
func (c *SpawnCmd) Help() string {
	return `Stdin: a line holding a JSON object goes to the agent as it is; any other
non-blank line is a user turn. EOF ends the session once nothing is in
flight. Stdout: the agent's lines byte for byte, plus agentjq's own events
({"type":"agentjq","subtype":"decision"|"warning"|"exit",...}).

Signals: the first SIGINT interrupts the turn, a second within 5s closes the
agent's stdin and terminates its process group, a third kills it. SIGTERM
and SIGHUP count as presses too (a second SIGTERM terminates, a third
kills): acp, proxy and serve share this lifecycle. Each stage (interrupt, close stdin, SIGTERM,
SIGKILL) waits at most the grace period ($AGENTJQ_GRACE, default 5s) before
the next, whatever the peers do. After the agent exits, agentjq passes on
every line it wrote: it cuts the agent's stdout off only once the pipe has
yielded nothing for a grace (a grandchild holds it open) or after four
graces, then waits at most one more grace for stdout and stderr to take
what is left, gives it up (saying so on stderr) and exits. No reader that stops reading and no
agent that stops reading its stdin can hold this up.

The terminal: when stdin is the terminal that prompts are answered on, a
line typed while a permission prompt is open answers the prompt; any other
line is a turn. Ctrl-D ends the turns (prompts still work until the session
ends). While a prompt is open agentjq holds its stdout, and the prompt holds a
lock on the terminal (flock(2) on its device node, Linux) that filter
--view takes for each line it draws, so a viewer on the same terminal
(spawn | agentjq filter --view) prints nothing into the prompt even when
it lags behind; the held lines follow the answer.

` + exitTable(protocol.SpawnExitTable) + `
Examples:
  agentjq spawn -p 'Summarise README.md' | agentjq filter --view
  printf 'fix the failing test\n' | agentjq spawn --policy policy.json --timeout 30m
  agentjq spawn --idle-timeout 2m -- --add-dir ../lib < turns.txt > session.ndjson`
}

// exitTable renders an exit status table for help and man pages.
func exitTable(rows []protocol.ExitRow) string {
	var b strings.Builder
	b.WriteString("Exit status:\n")
	for _, r := range rows {
		name := string(r.Outcome)
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(&b, "  %3d  %-12s %s\n", r.Code, name, r.Meaning)
	}
	return b.String()
}

// sessionSignals routes the signals that end a session (SIGPIPE: our
// reader went away) to bridge.Run, which stops the agent in stages and
// reports, instead of letting them kill agentjq under it.
func sessionSignals() (sigs chan os.Signal, stop func()) {
	sigs = make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	return sigs, func() { signal.Stop(sigs) }
}
