package cmd

import "errors"

// ApproveCmd is the approve subcommand.
type ApproveCmd struct {
	Args []string `arg:"" optional:"" passthrough:""`
}

// Run runs approve.
func (c *ApproveCmd) Run() error { return errors.New("approve: coming in a later commit") }
