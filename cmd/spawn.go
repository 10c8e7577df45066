package cmd

import "errors"

// SpawnCmd is the spawn subcommand.
type SpawnCmd struct {
	AgentArgs []string `arg:"" optional:"" passthrough:""`
}

// Run runs spawn.
func (c *SpawnCmd) Run() error { return errors.New("spawn: coming in a later commit") }
