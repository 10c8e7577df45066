package cmd

import (
	"fmt"
	"strings"

	"github.com/agentjq/agentjq/internal/buildinfo"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/iostreams"
)

// VersionCmd prints versions.
type VersionCmd struct{}

// Run prints agentjq's version and the agent versions it was checked against.
func (VersionCmd) Run(ios *iostreams.IO) error {
	fmt.Fprintf(ios.Out, "agentjq %s\nchecked against: claude %s\n",
		buildinfo.Version(), strings.Join(protocol.CheckedVersions, ", "))
	return nil
}

// Help is shown after the flags.
func (VersionCmd) Help() string {
	return `The version comes from the build: make build sets it from git describe;
go install records the module version.

Examples:
  agentjq version
  agentjq version | grep 'checked against'`
}
