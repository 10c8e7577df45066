package cmd

import "errors"

// ReplayCmd is the replay subcommand.
type ReplayCmd struct {
	Args []string `arg:"" optional:"" passthrough:""`
}

// Run runs replay.
func (c *ReplayCmd) Run() error { return errors.New("replay: coming in a later commit") }
