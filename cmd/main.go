// Package cmd is agentjq's command line: a thin layer of kong structs over
// the domain packages. Main is callable from tests: it takes its arguments
// and streams, never exits the process, and returns the exit status.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/iostreams"
)

// CLI is the grammar of agentjq.
type CLI struct {
	Spawn      SpawnCmd      `cmd:"" help:"Run an agent CLI headless: turns in, events out, every control request answered."`
	Filter     FilterCmd     `cmd:"" passthrough:"" help:"Run a jq program over an agent event stream, or show it to a person (--view)."`
	Approve    ApproveCmd    `cmd:"" help:"Answer permission requests from policy files; test policies against recordings."`
	Record     RecordCmd     `cmd:"" help:"Run a session like spawn and record both directions to a file."`
	Replay     ReplayCmd     `cmd:"" help:"Replay a recording to stdout, or stand in for the agent."`
	Proxy      ProxyCmd      `cmd:"" help:"Stand in for claude in a client that speaks its protocol (Agent SDKs, IDE plugins): policy, recording, pass-through."`
	Serve      ServeCmd      `cmd:"" help:"Run the session daemon: sessions, events and approvals over JSON-RPC (Unix socket, WebSocket, stdio)."`
	Attach     AttachCmd     `cmd:"" help:"Print a daemon session's agent lines as NDJSON, resumably; answer its approvals when asked."`
	Call       CallCmd       `cmd:"" help:"Make one JSON-RPC call to the daemon and print its result."`
	ACP        ACPCmd        `cmd:"" name:"acp" help:"Be an Agent Client Protocol agent on stdio: claude in an editor, with agentjq's policies and recordings."`
	Man        ManCmd        `cmd:"" help:"Show a manual page."`
	Completion CompletionCmd `cmd:"" help:"Print a shell completion script (bash, zsh, fish)."`
	Version    VersionCmd    `cmd:"" help:"Print agentjq's version and the agent versions it was checked against."`
}

// SystemIO returns the process's real streams; main passes it to Main.
func SystemIO() *iostreams.IO { return iostreams.System() }

// exitRequest carries kong's request to exit (after --help, or on a usage
// error) out of the parser without ending the process.
type exitRequest struct{ code int }

// Main runs agentjq with args and returns its exit status.
func Main(args []string, ios *iostreams.IO) (status int) {
	var cli CLI
	parser, err := newParser(&cli, ios)
	if err != nil {
		fmt.Fprintf(ios.Err, "agentjq: %v\n", err)
		return protocol.ExitError
	}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(exitRequest); ok {
				status = e.code
				return
			}
			panic(r)
		}
	}()
	kctx, err := parser.Parse(proxyArgs(parser.Model, args))
	if err != nil {
		fmt.Fprintf(ios.Err, "agentjq: %v\n", err)
		var pe *kong.ParseError
		path := "agentjq"
		if errors.As(err, &pe) && pe.Context != nil {
			if p := commandPath(pe.Context); p != "" {
				path += " " + p
			}
		}
		fmt.Fprintf(ios.Err, "Run '%s --help' for usage.\n", path)
		return protocol.ExitUsage
	}
	ctx := context.Background()
	kctx.BindTo(ctx, (*context.Context)(nil))
	if err := kctx.Run(); err != nil {
		return report(ios, err)
	}
	return protocol.ExitSuccess
}

func commandPath(k *kong.Context) string {
	path := k.Command()
	if i := strings.IndexByte(path, '<'); i >= 0 {
		path = path[:i]
	}
	return strings.TrimSpace(path)
}

func newParser(cli *CLI, ios *iostreams.IO) (*kong.Kong, error) {
	return kong.New(cli,
		kong.Name("agentjq"),
		kong.Description("agentjq puts coding-agent CLIs (claude, context) into Unix pipelines.\n\n"+
			"Every subcommand reads and writes NDJSON: one JSON object per line."),
		kong.Writers(ios.Out, ios.Err),
		kong.Exit(func(code int) {
			if code == 80 { // kong's usage-error code; jq's is 2
				code = protocol.ExitUsage
			}
			panic(exitRequest{code})
		}),
		kong.Bind(ios),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true}),
		kong.Help(helpPrinter),
		kong.Vars{
			"version": "",
		},
	)
}

// ExitCoder is an error that carries agentjq's exit status.
type ExitCoder interface {
	error
	ExitCode() int
}

// exitError is an error with an exit status. A quiet one was already
// reported (or needs no report) and prints nothing.
type exitError struct {
	code  int
	err   error
	quiet bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) ExitCode() int { return e.code }
func (e *exitError) Unwrap() error { return e.err }

// usageError is a bad flag or argument found after parsing: exit 2.
func usageError(format string, a ...any) error {
	return &exitError{code: protocol.ExitUsage, err: fmt.Errorf(format, a...)}
}

// silentExit returns an exit status whose cause was already reported.
func silentExit(code int) error {
	if code == 0 {
		return nil
	}
	return &exitError{code: code, quiet: true}
}

// report prints err once as "agentjq: msg" and returns its exit status.
func report(ios *iostreams.IO, err error) int {
	var q *exitError
	if errors.As(err, &q) && q.quiet {
		return q.code
	}
	fmt.Fprintf(ios.Err, "agentjq: %v\n", err)
	var ec ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return protocol.ExitError
}
