package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/daemon"
	"github.com/agentjq/agentjq/internal/bridge"
	"github.com/agentjq/agentjq/internal/buildinfo"
	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/jsonrpc"
)

// ServeCmd is the serve subcommand: the session daemon.
type ServeCmd struct {
	Listen          string        `default:"127.0.0.1:0" placeholder:"ADDR" help:"WebSocket address; anything but loopback only when named explicitly (and then the token still guards it). \"\" : no WebSocket."`
	Socket          string        `placeholder:"PATH" help:"Unix socket (mode 0600); default $$AGENTJQ_HOME/daemon.sock."`
	Home            string        `placeholder:"DIR" help:"State directory (default $$AGENTJQ_HOME, else $$XDG_RUNTIME_DIR/agentjq, else ~/.agentjq)."`
	Stdio           bool          `help:"Speak JSON-RPC on stdin/stdout to one client, without a token (tests, embedding)."`
	Bin             string        `placeholder:"PATH" help:"The agent binary (default: $$AGENTJQ_AGENT_BIN, else claude on PATH)."`
	Policy          []string      `placeholder:"FILE" help:"Policy files applied to every session before its own; repeatable."`
	Allowlist       string        `placeholder:"FILE" help:"The rules file that scope \"always\" and permission.allowlist.* edit (created if missing, default \"ask\")."`
	ApprovalTimeout time.Duration `default:"10m" help:"Deny an approval no client answered after this long."`
	AllowOrigin     []string      `placeholder:"HOST" help:"A browser Origin host allowed on /ws (none by default); repeatable."`
	MaxSessions     int           `default:"256" help:"Live sessions at most; more fail overloaded."`
	NoSandbox       bool          `help:"Run every session's commands without the OS sandbox: file, read and network limits are then not enforced (warns once a session)."`
	PrintSchema     schemaFormat  `name:"print-schema" help:"Print the protocol's JSON Schema (protocol.json) and exit; --print-schema=ts prints its TypeScript types (sdk/protocol.ts). Both are in the binary, and make install puts them in share/agentjq."`
}

// schemaFormat is --print-schema's value: a flag alone (json), or
// --print-schema=json|ts.
type schemaFormat string

func (f *schemaFormat) Decode(ctx *kong.DecodeContext) error {
	*f = "json"
	if ctx.Scan.Peek().Type != kong.FlagValueToken {
		return nil
	}
	v := ctx.Scan.Pop().String()
	switch v {
	case "json", "ts":
		*f = schemaFormat(v)
		return nil
	}
	return fmt.Errorf("want json or ts, not %q", v)
}

// IsBool lets the flag stand alone.
func (f *schemaFormat) IsBool() bool { return true }

// daemonHome is where daemon.json, token and sessions/ live.
func daemonHome(ios *iostreams.IO, flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if h := ios.Getenv("AGENTJQ_HOME"); h != "" {
		return filepath.Abs(h)
	}
	if x := ios.Getenv("XDG_RUNTIME_DIR"); x != "" {
		return filepath.Join(x, "agentjq"), nil
	}
	home := ios.Getenv("HOME")
	if home == "" {
		return "", errors.New("no home directory: set AGENTJQ_HOME or pass --home")
	}
	return filepath.Join(home, ".agentjq"), nil
}

// Run runs serve.
func (c *ServeCmd) Run(ctx context.Context, ios *iostreams.IO) error {
	switch c.PrintSchema {
	case "json":
		_, err := ios.Out.Write(daemon.SchemaJSON())
		return err
	case "ts":
		_, err := ios.Out.Write(daemon.TypeScript())
		return err
	}
	home, err := daemonHome(ios, c.Home)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	// spawn's lifecycle: the first signal shuts the daemon down, each
	// session ending gracefully; the next escalates every session, the
	// third kills them.
	life := bridge.NewLifecycle(envGrace(ios))
	stop := life.Notify()
	defer stop()
	srv, err := c.newServer(ios, home, life)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	if c.Stdio {
		// At EOF every request written before it is answered (the
		// drain); a client that stops reading is abandoned after a grace.
		out := bridge.NewPeerWriter(ios.Out, life.Grace())
		done := make(chan error, 1)
		go func() { done <- srv.ServeStream(ctx, jsonrpc.NewLineStream(ios.In, out, nil), false) }()
		select {
		case err = <-done:
		case <-life.Ending():
		case <-srv.Done():
		}
		srv.Shutdown()
		if lost := out.Close(); lost > 0 {
			fmt.Fprintf(ios.Err, "agentjq serve: stdout is not being read; gave up on the last %d bytes\n", lost)
		}
		return err
	}

	if err := daemon.Claim(home); err != nil {
		return err
	}
	socket := c.Socket
	if socket == "" {
		socket = filepath.Join(home, "daemon.sock")
	}
	ul, err := srv.ListenUnix(ctx, socket)
	if err != nil {
		return fmt.Errorf("socket %s: %w", socket, err)
	}
	defer ul.Close()
	defer os.Remove(socket)
	if c.Listen != "" {
		host, _, err := net.SplitHostPort(c.Listen)
		if err != nil {
			return usageError("--listen %s: %v", c.Listen, err)
		}
		ip := net.ParseIP(host)
		remote := !(host == "localhost" || ip != nil && ip.IsLoopback())
		tl, err := net.Listen("tcp", c.Listen)
		if err != nil {
			return err
		}
		srv.SetPort(tl.Addr().(*net.TCPAddr).Port)
		hs := &http.Server{Handler: srv.HTTPHandler(ctx, daemon.SchemaJSON(), remote), ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(tl)
		defer hs.Close()
	}
	path, err := srv.WriteDaemonFile()
	if err != nil {
		return err
	}
	defer srv.RemoveDaemonFile()
	fmt.Fprintf(ios.Err, "agentjq serve: listening (%s); clients read %s\n", socket, path)
	select {
	case <-life.Ending():
	case <-srv.Done():
	case <-ctx.Done():
	}
	srv.Shutdown()
	return nil
}

// newServer makes the daemon; its sessions are built by spawn's session
// builder, like those of every other front end.
func (c *ServeCmd) newServer(ios *iostreams.IO, home string, life *bridge.Lifecycle) (*daemon.Server, error) {
	if c.ApprovalTimeout < 0 {
		return nil, usageError("--approval-timeout %s: a duration cannot be negative", c.ApprovalTimeout)
	}
	// The daemon's policy files load once at start: a bad one fails serve,
	// naming its line, rather than every session.create.
	chain, err := approve.NewChain(approve.ChainOptions{Policies: c.Policy, Home: ios.Getenv("HOME")})
	if err != nil {
		return nil, err
	}
	chain.Close()
	bin := c.Bin
	if bin == "" {
		bin = ios.Getenv("AGENTJQ_AGENT_BIN")
	}
	// Sessions, their chains and hosted commands write to stderr from
	// their own goroutines: one write at a time.
	shared := *ios
	shared.Err = &syncio.Writer{W: ios.Err}
	ios = &shared
	return daemon.New(daemon.Options{Home: home, ServerVersion: buildinfo.Version(), AgentBin: bin, Env: ios.Environ,
		Policies: c.Policy, Allowlist: c.Allowlist, ApprovalTimeout: c.ApprovalTimeout, MaxSessions: c.MaxSessions,
		AllowedOrigins: c.AllowOrigin, Lifecycle: life, Grace: life.Grace(), Logf: func(f string, a ...any) { fmt.Fprintf(ios.Err, f+"\n", a...) },
		Build: func(p daemon.CreateParams) (bridge.Options, *approve.Chain, error) {
			return sessionOptionsWith(ios, c.sessionFlags(bin, p), p.Args, nil)
		}})
}

// sessionFlags are spawn's flags for a session.create: the clients are
// the person (the daemon asks them what the chain leaves undecided), so
// no terminal prompt.
func (c *ServeCmd) sessionFlags(bin string, p daemon.CreateParams) SpawnFlags {
	f := SpawnFlags{Agent: p.Agent, Bin: bin, Cwd: p.Workdir, Model: p.Model, PermissionMode: p.Mode, Partial: p.Partial,
		ApprovalTimeout: c.ApprovalTimeout, Policy: p.Policy, NoPrompt: true, NoSandbox: c.NoSandbox}
	f.HookTimeout, f.MCPToolTimeout = 60*time.Second, 2*time.Minute // the flags' defaults
	return f
}

// Help is shown after the flags in serve --help.
func (c *ServeCmd) Help() string {
	return `The session daemon: every capability is a JSON-RPC 2.0 method, over a Unix
socket (0600), a WebSocket (ws://127.0.0.1:PORT/ws) or stdin/stdout (--stdio).
Clients call system.hello {token, clientVersion, protocolVersion} first; the
token is in the file daemon.json names. Sessions are recorded to
$AGENTJQ_HOME/sessions/<id>.rec, which is also their event log. See
agentjq-daemon(7).

Examples:
  agentjq serve &
  agentjq call session.create '{"workdir":"'$PWD'"}'
  agentjq attach SESSION | agentjq filter --view`
}

// envGrace is $AGENTJQ_GRACE, each shutdown stage's wait (0: the default).
func envGrace(ios *iostreams.IO) time.Duration {
	d, err := time.ParseDuration(ios.Getenv("AGENTJQ_GRACE"))
	if err != nil || d < 0 {
		return 0
	}
	return d
}
