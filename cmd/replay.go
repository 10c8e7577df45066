package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/recording"
	"github.com/agentjq/agentjq/replay"
)

// ReplayCmd is the replay subcommand.
type ReplayCmd struct {
	File string `arg:"" placeholder:"FILE" help:"The recording ('-' reads stdin, except with --as-agent and --check). With --check, more recordings may follow (before any -- and the agent's arguments), and a folder stands for its *.rec and *.rec.gz files."`

	Realtime  bool          `help:"Keep the recorded timing (--speed 1)."`
	Speed     float64       `placeholder:"X" help:"Keep the timing, X times faster (0: as fast as possible, the default)."`
	IdleLimit time.Duration `placeholder:"D" help:"With --realtime or --speed: cap every recorded pause at D."`
	AfterSeq  int64         `placeholder:"N" help:"Start after sequence number N."`
	Stderr    bool          `help:"Also write the agent's recorded stderr lines to stderr."`

	AsAgent bool          `help:"Stand in for the agent: read the client's stdin, write the recorded output, check what the client sends (a mismatch is reported with the recording's seq and a diff, exit 1). The agent's flags are accepted and ignored, so a two-line shim (#!/bin/sh / exec agentjq replay --as-agent REC -- \"$$@\") can be spawn's --bin."`
	Wait    time.Duration `default:"30s" help:"With --as-agent: how long to wait for each recorded input."`
	Lenient bool          `help:"Read a damaged recording as far as it goes, as agentjq once did: a msg that is not a JSON object as it is, a gzip file cut off up to the cut (with a warning); without it both are an error naming FILE:LINE (exit 5). With --as-agent, also answer a client control request the recording lacks with a success instead of failing (an initialize, with the recorded initialize reply; a client's initialize the recording lacks is always answered so)."`
	Inject  []string      `sep:"none" placeholder:"FAULT" help:"Inject a fault: truncate@SEQ, garbage@SEQ, oversize@SEQ[:SIZE], delay@SEQ:DUR, drop@SEQ, exit@SEQ[:CODE], drop-result; SEQ may be a type (result, control_request/can_use_tool)."`

	Check   bool   `help:"Drift check: re-run each recording against the agent installed now (or compare it with --against), print where the shape of the agent's output drifted, each finding graded, and name both agent versions. Compatible: a key, a line kind or a member of a meaningful list (init's tools, capabilities, slash commands...) added. Breaking: one of those gone, a JSON type or a vocabulary value (tool name, permission mode) changed, a line of another kind in its place. Timing (not drift): a line at another place within its turn; key order is never compared. Exit 0: no drift (or timing only); 3: compatible drift only; 1: breaking drift. Several recordings end with one summary table and the worst exit status. Interrupts are sent at the recorded point, after the recorded pause. The recording's --hook, --mcp-tool and --mcp-server commands are run again: check only recordings you trust."`
	Against string `placeholder:"FILE" help:"With --check: the new recording to compare with (without it, the recording's inputs are re-run against the live agent: its turns and client control requests fed in order, its permission answers given again, the session settings of its header re-used unless given here)."`
	Update  bool   `help:"With --check: replace each recording that drifted (compatible or breaking) with the new one."`

	SpawnFlags
	AgentFlags

	AgentArgs []string `arg:"" optional:"" passthrough:"" help:"With --as-agent: the agent's arguments, ignored; with --check: passed to the agent."`
}

// AgentFlags are the agent CLI's own flags, accepted and ignored by
// replay --as-agent so that it can stand where claude stands.
type AgentFlags struct {
	InputFormat          string   `name:"input-format" hidden:""`
	OutputFormat         string   `name:"output-format" hidden:""`
	Verbose              bool     `hidden:""`
	Print                bool     `name:"print" hidden:""`
	PermissionPromptTool string   `hidden:""`
	IncludePartial       bool     `name:"include-partial-messages" hidden:""`
	ReplayUserMessages   bool     `hidden:""`
	IncludeHookEvents    bool     `hidden:""`
	FallbackModel        string   `hidden:""`
	Tools                string   `name:"tools" hidden:""`
	MaxBudgetUSD         string   `name:"max-budget-usd" hidden:""`
	ForkSession          bool     `hidden:""`
	NoSessionPersistence bool     `hidden:""`
	MCPConfig            []string `name:"mcp-config" sep:"none" hidden:""`
	StrictMCPConfig      bool     `name:"strict-mcp-config" hidden:""`
	SettingSources       string   `hidden:""`
	Settings             string   `name:"settings" hidden:""`
	AddDir               []string `sep:"none" hidden:""`
	SkipPermissions      bool     `name:"dangerously-skip-permissions" hidden:""`
	AllowSkipPermissions bool     `name:"allow-dangerously-skip-permissions" hidden:""`
	PermissionPrompts    string   `hidden:""`
	JSONSchema           string   `name:"json-schema" hidden:""`
}

// Run runs replay.
func (c *ReplayCmd) Run(ctx context.Context, ios *iostreams.IO) error {
	var faults []replay.Fault
	for _, s := range c.Inject {
		f, err := replay.ParseFault(s)
		if err != nil {
			return usageError("%v", err)
		}
		faults = append(faults, f)
	}
	speed := c.Speed
	if c.Realtime {
		if speed != 0 {
			return usageError("--realtime and --speed: choose one")
		}
		speed = 1
	}
	if speed < 0 {
		return usageError("--speed must be positive")
	}
	if (c.Update || c.Against != "") && !c.Check {
		return usageError("--update and --against go with --check")
	}
	if c.Check {
		return c.check(ctx, ios)
	}
	if len(c.AgentArgs) > 0 && !c.AsAgent {
		return usageError("unexpected arguments %q (agent arguments go with --as-agent or --check)", c.AgentArgs)
	}
	warn := func(err error) { fmt.Fprintf(ios.Err, "agentjq: warning: %v\n", err) }
	if c.AsAgent {
		if c.File == "-" {
			return usageError("replay --as-agent reads the client on stdin: the recording must be a file")
		}
		f, err := os.Open(c.File)
		if err != nil {
			return err
		}
		h, entries, err := recording.Read(f, c.File, recording.ReadOptions{Lenient: c.Lenient, Warn: warn})
		f.Close()
		if err != nil {
			return replayExit(err)
		}
		if c.AfterSeq > 0 {
			return usageError("--after-seq does not go with --as-agent")
		}
		err = replay.AsAgent(ctx, h, entries, ios.In, ios.Out, replay.AgentOptions{
			Stderr: ios.Err, Wait: c.Wait, Speed: speed, IdleLimit: c.IdleLimit,
			Faults: faults, LookupEnv: ios.LookupEnv, AnswerUnrecorded: c.Lenient,
			Sandboxed: sandboxTurnedOn(c.AgentArgs),
		})
		return replayExit(err)
	}
	in, closeIn, err := openInput(ios, c.File)
	if err != nil {
		return err
	}
	defer closeIn()
	opts := replay.PlayOptions{Speed: speed, IdleLimit: c.IdleLimit, AfterSeq: c.AfterSeq, Faults: faults, Warn: warn, Lenient: c.Lenient}
	if c.Stderr {
		opts.Stderr = ios.Err
	}
	name := c.File
	if name == "-" {
		name = "<stdin>"
	}
	return replayExit(replay.Play(ctx, in, name, ios.Out, opts))
}

// replayExit maps replay's errors to exit statuses: an injected or
// recorded exit code as it is, a mismatch as 1 with its report, a
// recording that cannot be read (FILE:LINE) as 5.
func replayExit(err error) error {
	var ee *replay.ExitError
	if errors.As(err, &ee) {
		return silentExit(ee.Code)
	}
	var bad *recording.LineError
	if errors.As(err, &bad) {
		return &exitError{code: ExitBadRecording, err: err}
	}
	var me *replay.MismatchError
	if errors.As(err, &me) {
		return &exitError{code: me.ExitCode(), err: me}
	}
	return err
}

func openInput(ios *iostreams.IO, path string) (io.Reader, func(), error) {
	if path == "-" {
		return ios.In, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

// ExitBadRecording is replay's exit status for a recording it cannot
// read (a bad entry, a msg that is not an object, a gzip file cut off),
// as filter's for a bad input line.
const ExitBadRecording = 5

func readRecordingFile(ios *iostreams.IO, path string, lenient bool) (recording.Header, []recording.Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return recording.Header{}, nil, err
	}
	defer f.Close()
	return recording.Read(f, path, recording.ReadOptions{Lenient: lenient,
		Warn: func(err error) { fmt.Fprintf(ios.Err, "agentjq: warning: %v\n", err) }})
}
