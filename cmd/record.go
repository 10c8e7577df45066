package cmd

import "errors"

// RecordCmd is the record subcommand.
type RecordCmd struct {
	Args []string `arg:"" optional:"" passthrough:""`
}

// Run runs record.
func (c *RecordCmd) Run() error { return errors.New("record: coming in a later commit") }
