package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/buildinfo"
	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/protocol"
	"github.com/agentjq/agentjq/recording"
	"github.com/agentjq/agentjq/replay"
)

// The live drift check is replay.LiveCheck; this file maps spawn's flags
// to and from the session settings that a recording's header stores.

// Defaults of the flags whose value "not given" replay --check must tell
// from a value given (see SpawnFlags and HostFlags).
const (
	defaultAgent          = "claude"
	defaultHookTimeout    = 60 * time.Second
	defaultMCPToolTimeout = 2 * time.Minute
)

// sessionOf is the settings of a spawn or record session, for its
// recording's header.
func sessionOf(f SpawnFlags, agentArgs []string) recording.Session {
	s := recording.Session{
		Agent: f.Agent, AgentArgs: agentArgs, Model: f.Model, PermissionMode: f.PermissionMode,
		AllowedTools: f.AllowedTools, DisallowedTools: f.DisallowedTools, SystemPrompt: f.SystemPrompt,
		AppendSystemPrompt: f.AppendSystem, MaxTurns: f.MaxTurns, Partial: f.Partial, Init: f.Init,
		MCPTool: f.MCPTool, MCPToolDesc: f.MCPToolDesc, MCPToolSchema: f.MCPToolSchema, MCPServer: f.MCPServer,
		Hook: f.Hook, Policy: f.Policy, Approver: f.Approver, NoPrompt: f.NoPrompt, OneShot: f.Prompt != "",
	}
	if f.HookTimeout != defaultHookTimeout && f.HookTimeout != 0 {
		s.HookTimeout = f.HookTimeout.String()
	}
	if f.MCPToolTimeout != defaultMCPToolTimeout && f.MCPToolTimeout != 0 {
		s.MCPToolTimeout = f.MCPToolTimeout.String()
	}
	return s
}

// givenSession is the settings given to replay --check itself: only what
// differs from the flags' defaults counts as given.
func givenSession(f SpawnFlags, agentArgs []string) recording.Session {
	s := sessionOf(f, agentArgs)
	if s.Agent == defaultAgent {
		s.Agent = ""
	}
	s.Policy, s.Approver, s.NoPrompt, s.OneShot = nil, "", false, false
	return s
}

// applySession sets the flags of a check's session from s; the rest
// (binary, directory, timeouts) stays as given to replay --check. Nothing
// asks a person: permission answers come from the recording.
func applySession(f *SpawnFlags, s recording.Session) error {
	f.Agent, f.Model, f.PermissionMode = s.Agent, s.Model, s.PermissionMode
	f.AllowedTools, f.DisallowedTools = s.AllowedTools, s.DisallowedTools
	f.SystemPrompt, f.AppendSystem, f.MaxTurns = s.SystemPrompt, s.AppendSystemPrompt, s.MaxTurns
	f.Partial, f.Init = s.Partial, s.Init
	f.MCPTool, f.MCPToolDesc, f.MCPToolSchema, f.MCPServer, f.Hook = s.MCPTool, s.MCPToolDesc, s.MCPToolSchema, s.MCPServer, s.Hook
	for _, d := range []struct {
		v   string
		dst *time.Duration
	}{{s.HookTimeout, &f.HookTimeout}, {s.MCPToolTimeout, &f.MCPToolTimeout}} {
		if d.v == "" {
			continue
		}
		t, err := time.ParseDuration(d.v)
		if err != nil {
			return fmt.Errorf("the recording's session settings: %w", err)
		}
		*d.dst = t
	}
	f.Policy, f.Approver, f.NoPrompt = nil, "", true
	f.Prompt, f.Resume, f.SessionID = "", "", ""
	return nil
}

// liveCheck re-runs the recording against the live agent into a temporary
// recording and returns its path (the caller removes its directory).
func (c *ReplayCmd) liveCheck(ctx context.Context, ios *iostreams.IO, h recording.Header, entries []recording.Entry) (path string, stuck string, err error) {
	liveArgs, err := splitAgentArgs(c.AgentArgs)
	if err != nil {
		return "", "", err
	}
	run := func(ctx context.Context, s recording.Session, workdir string, stdin io.Reader, tap func(protocol.Direction, []byte), decide approve.Decider) error {
		f := c.SpawnFlags
		if err := applySession(&f, s); err != nil {
			return err
		}
		f.Cwd = workdir
		if f.Timeout == 0 {
			f.Timeout = 10 * time.Minute
		}
		sub := *ios
		sub.In, sub.Out = stdin, io.Discard
		var errBuf strings.Builder
		sub.Err = &syncio.Writer{W: &errBuf}
		sub.InTTY, sub.OutTTY = false, false
		err := runSpawnWith(ctx, &sub, f, s.AgentArgs, tapFunc(tap), decide)
		if err != nil && !isSessionExit(err) {
			io.WriteString(ios.Err, errBuf.String())
			return err
		}
		return nil
	}
	return replay.LiveCheck(ctx, h, entries, replay.CheckOptions{
		Given:          givenSession(c.SpawnFlags, liveArgs),
		Workdir:        c.Cwd,
		Run:            run,
		Legacy:         legacySession,
		LookupEnv:      ios.LookupEnv,
		AgentjqVersion: buildinfo.Version(),
	})
}

// isSessionExit tells the agent's own exit status (a failed turn is a
// transcript like any other) from a failure to run the session at all.
func isSessionExit(err error) bool {
	var q *exitError
	return errors.As(err, &q) && q.quiet
}

// legacySession reads the settings of a recording made before headers
// stored them from its argv (agentjq spawn or record flags).
func legacySession(argv []string) (recording.Session, error) {
	f, args, err := recordedSession(argv)
	if err != nil {
		return recording.Session{}, err
	}
	return sessionOf(f, args), nil
}

// recordedSession parses spawn (or record) flags: an old recording's
// argv, a fixture scenario's flags.
func recordedSession(argv []string) (SpawnFlags, []string, error) {
	var g struct {
		Spawn  SpawnCmd  `cmd:""`
		Record RecordCmd `cmd:""`
	}
	if len(argv) < 2 {
		return SpawnFlags{Agent: defaultAgent}, nil, nil
	}
	p, err := kong.New(&g, kong.Exit(func(int) { panic(exitRequest{}) }), kong.Writers(io.Discard, io.Discard))
	if err != nil {
		return SpawnFlags{}, nil, err
	}
	args := argv[1:]
	if args[0] == "record" && !hasArg(args, "-o") && !hasArg(args, "--output") {
		args = append(append([]string{}, args...), "-o", "x")
	}
	kctx, err := func() (k *kong.Context, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("unparsable argv %q", argv)
			}
		}()
		return p.Parse(args)
	}()
	if err != nil {
		return SpawnFlags{}, nil, fmt.Errorf("the recording's argv: %w", err)
	}
	f, args := g.Spawn.SpawnFlags, g.Spawn.AgentArgs
	if strings.HasPrefix(kctx.Command(), "record") {
		f, args = g.Record.SpawnFlags, g.Record.AgentArgs
	}
	args, err = splitAgentArgs(args)
	if err != nil {
		return SpawnFlags{}, nil, fmt.Errorf("the recording's argv: %w", err)
	}
	return f, args, nil
}

func hasArg(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}
