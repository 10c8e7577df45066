package cmd

import "errors"

// CompletionCmd is the completion subcommand.
type CompletionCmd struct {
	Args []string `arg:"" optional:"" passthrough:""`
}

// Run runs completion.
func (c *CompletionCmd) Run() error { return errors.New("completion: coming in a later commit") }
