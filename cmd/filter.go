package cmd

import "errors"

// FilterCmd is the filter subcommand.
type FilterCmd struct {
	Args []string `arg:"" optional:"" passthrough:""`
}

// Run runs filter.
func (c *FilterCmd) Run() error { return errors.New("filter: coming in a later commit") }
