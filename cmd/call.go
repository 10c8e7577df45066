package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentjq/agentjq/daemon"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/jsonrpc"
)

// CallCmd is the call subcommand: one JSON-RPC call to the daemon.
type CallCmd struct {
	Home   string `placeholder:"DIR" help:"The daemon's home (default as serve)."`
	Method string `arg:"" help:"The method, e.g. session.list."`
	Params string `arg:"" optional:"" help:"The params as JSON (default {})."`
}

// Run runs call: the result on stdout as one JSON line; an error on stderr
// with its data.code, exit 1.
func (c *CallCmd) Run(ctx context.Context, ios *iostreams.IO) error {
	home, err := daemonHome(ios, c.Home)
	if err != nil {
		return err
	}
	params := json.RawMessage(`{}`)
	if c.Params != "" {
		if !json.Valid([]byte(c.Params)) {
			return usageError("params: not valid JSON: %s", c.Params)
		}
		params = json.RawMessage(c.Params)
	}
	conn, err := daemon.Dial(ctx, home, "agentjq call", nil)
	if err != nil {
		return err
	}
	defer conn.Close()
	var res json.RawMessage
	if err := conn.Call(ctx, c.Method, params, &res); err != nil {
		var e *jsonrpc.Error
		if errors.As(err, &e) {
			b, _ := json.Marshal(e)
			fmt.Fprintf(ios.Err, "agentjq: %s: %s\n", c.Method, b)
			return silentExit(1)
		}
		return err
	}
	fmt.Fprintf(ios.Out, "%s\n", res)
	return nil
}
