package cmd

import (
	"github.com/agentjq/agentjq/bridge"
	"github.com/agentjq/agentjq/iostreams"
)

// HostFlags give the agent tools and hooks hosted by agentjq over the
// control channel, with no config files.
type HostFlags struct {
	Init bool `help:"Send the initialize control request at start and pass its response through (automatic when --mcp-tool, --mcp-server or --hook is used)."`
}

// applyHostFlags registers the hosted tools, servers and hooks on opts.
func applyHostFlags(_ *iostreams.IO, f HostFlags, opts *bridge.Options) error {
	if f.Init {
		opts.Init = map[string]any{"subtype": "initialize", "hooks": map[string]any{}}
	}
	return nil
}
