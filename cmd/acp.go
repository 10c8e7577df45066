package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/acp"
	"github.com/agentjq/agentjq/internal/bridge"
	"github.com/agentjq/agentjq/internal/buildinfo"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/iostreams"
)

// ACPCmd is the acp subcommand: an Agent Client Protocol agent on stdio.
type ACPCmd struct {
	SpawnFlags
	RecordDir   string `placeholder:"DIR" help:"Record every session to DIR/<session id>.ndjson (one file per load of it too); enables session/load, which replays them."`
	AllowBypass bool   `name:"allow-bypass-permissions" help:"Offer the bypassPermissions mode to the editor (off by default)."`
	RedactFlags
	AgentArgs []string `arg:"" optional:"" passthrough:"" help:"Arguments after -- go to the agent verbatim."`
}

// Run runs acp until the editor closes its stdin.
func (c *ACPCmd) Run(ctx context.Context, ios *iostreams.IO, kctx *kong.Context) error {
	agentArgs, err := splitAgentArgs(c.AgentArgs)
	if err != nil {
		return err
	}
	switch {
	case c.Prompt != "":
		return usageError("acp takes its turns from session/prompt, not --prompt")
	case c.Echo || c.NoEvents:
		return usageError("--echo and --no-events do not apply to acp (stdout speaks ACP)")
	case c.Resume != "" || c.SessionID != "":
		return usageError("acp names its sessions itself: use session/load, not --resume or --session-id")
	case c.PermissionMode == "bypassPermissions" && !c.AllowBypass:
		return usageError("--permission-mode bypassPermissions needs --allow-bypass-permissions")
	}
	if c.RecordDir != "" {
		// A record dir that does not exist yet is made (an editor's
		// settings name one before any session has run).
		if err := os.MkdirAll(c.RecordDir, 0o700); err != nil {
			return usageError("--record-dir %s: %v", c.RecordDir, err)
		}
		if st, err := os.Stat(c.RecordDir); err != nil || !st.IsDir() {
			return usageError("--record-dir %s: not a directory", c.RecordDir)
		}
	}
	shared := *ios
	shared.Err = &syncio.Writer{W: ios.Err}
	ios = &shared
	// Check the flags and policies once before the editor starts asking.
	// An agent that cannot be started (not installed, no sandbox) is not
	// a reason to die before initialize: the editor could show only that
	// the process ended. agentjq answers initialize, and each session/new
	// fails saying what is missing (start makes the same check).
	checked, chain, err := sessionOptions(ios, c.noSessionFlags(), agentArgs)
	var xe *exitError
	switch {
	case errors.As(err, &xe) && xe.code == protocol.ExitNotFound:
		fmt.Fprintf(ios.Err, "agentjq acp: %v; every session/new will fail until it is fixed\n", xe.err)
		checked = bridge.Options{Grace: envGrace(ios)}
	case err != nil:
		return err
	default:
		chain.Close()
	}
	argv := append([]string{"agentjq"}, kctx.Args...)
	start := func(cfg acp.SessionConfig) (bridge.Options, func() error, error) {
		f := c.noSessionFlags()
		f.Cwd = cfg.Cwd
		args := append([]string(nil), agentArgs...)
		switch {
		case cfg.Resume:
			f.Resume = cfg.ID
		case cfg.ForkOf != "":
			f.Resume, f.SessionID = cfg.ForkOf, cfg.ID
			args = append(args, "--fork-session")
		default:
			f.SessionID = cfg.ID
		}
		if cfg.Mode != "" {
			f.PermissionMode = cfg.Mode
		}
		if len(cfg.MCPServers) > 0 {
			args = append(args, "--mcp-config", mcpConfig(cfg.MCPServers))
		}
		opts, chain, err := sessionOptionsWith(ios, f, args, cfg.Person)
		if err != nil {
			var xe *exitError
			if errors.As(err, &xe) {
				err = xe.err
			}
			return bridge.Options{}, nil, err
		}
		// The agent binary must run (spawn finds out when it starts it).
		bin, err := agentBinary(ios, f, bridge.Profiles[f.Agent])
		if err == nil {
			if _, lerr := exec.LookPath(bin); lerr != nil {
				err = fmt.Errorf("the agent %s cannot be run (%v); install it, or point --bin or $AGENTJQ_AGENT_BIN at it", bin, lerr)
			}
		}
		if err != nil {
			chain.Close()
			return bridge.Options{}, nil, err
		}
		var rec *openedRecording
		if cfg.Record != "" {
			// The header's session settings leave out the editor's MCP
			// servers: their env and arguments may hold credentials no
			// redaction pattern knows.
			rec, err = openRecordingOf(ios, cfg.Record, c.RedactFlags, sessionOf(f, agentArgs), argv, f.Cwd, probeAgentVersion(bin, ios.Environ))
			if err != nil {
				chain.Close()
				return bridge.Options{}, nil, err
			}
			opts.Tap, opts.TapErr = rec.Tap, rec.Flush
		}
		opts.Gate = nil
		done := func() error {
			err := chain.Close()
			if rec != nil {
				if rerr := rec.Close(); rerr != nil {
					err = rerr
				}
			}
			return err
		}
		return opts, done, nil
	}
	mode := c.PermissionMode
	// spawn's lifecycle: the first signal ends every session gracefully
	// (and acp with them), the next escalates, the third kills.
	life := bridge.NewLifecycle(checked.Grace)
	stop := life.Notify()
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-life.Ending():
			cancel()
		case <-ctx.Done():
		}
	}()
	var closer io.Closer
	if cl, ok := ios.In.(io.Closer); ok {
		closer = cl
	}
	return acp.Serve(ctx, ios.In, ios.Out, closer, acp.Options{
		Start: start, RecordDir: c.RecordDir, Mode: mode, AllowBypass: c.AllowBypass,
		Version: buildinfo.Version(), Stderr: ios.Err, Lifecycle: life, Grace: checked.Grace,
	})
}

// noSessionFlags are the flags every session shares: partial messages on
// (agent_message_chunk streams from them), no terminal prompts (the editor
// is the person).
func (c *ACPCmd) noSessionFlags() SpawnFlags {
	f := c.SpawnFlags
	f.Partial, f.NoPrompt = true, true
	return f
}

// mcpConfig is session/new's mcpServers as claude's --mcp-config JSON.
func mcpConfig(servers []acp.MCPServer) string {
	cfg := map[string]map[string]any{}
	for _, s := range servers {
		if s.Type == "http" || s.Type == "sse" {
			headers := map[string]string{}
			for _, h := range s.Headers {
				headers[h.Name] = h.Value
			}
			cfg[s.Name] = map[string]any{"type": s.Type, "url": s.URL, "headers": headers}
			continue
		}
		env := map[string]string{}
		for _, v := range s.Env {
			env[v.Name] = v.Value
		}
		args := s.Args
		if args == nil {
			args = []string{}
		}
		cfg[s.Name] = map[string]any{"type": "stdio", "command": s.Command, "args": args, "env": env}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": cfg})
	return string(b)
}

// Help is shown after the flags in acp --help.
func (c *ACPCmd) Help() string {
	return `Stdin and stdout speak the Agent Client Protocol (v1, JSON-RPC 2.0, one
message per line); diagnostics go to stderr. Each session/new starts one
claude session through agentjq's bridge with the same flags, policies and
approver as spawn; what they leave undecided is asked of the editor with
session/request_permission. See agentjq-acp(1).

Examples:
  agentjq acp --policy ~/.config/agentjq/policy.json --record-dir ~/.local/state/agentjq/acp
  agentjq acp --bin ./replay-shim   # a deterministic agent for editor-plugin tests`
}
