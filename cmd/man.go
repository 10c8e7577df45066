package cmd

import "errors"

// ManCmd is the man subcommand.
type ManCmd struct {
	Args []string `arg:"" optional:"" passthrough:""`
}

// Run runs man.
func (c *ManCmd) Run() error { return errors.New("man: coming in a later commit") }
