package cmd

import (
	"fmt"
	"strings"

	"github.com/agentjq/agentjq/internal/buildinfo"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/protocol"
)

// VersionCmd prints versions.
type VersionCmd struct{}

// Run prints agentjq's version and the agent versions it was checked against.
func (VersionCmd) Run(ios *iostreams.IO) error {
	fmt.Fprintf(ios.Out, "agentjq %s\nchecked against: claude %s\n",
		buildinfo.Version(), strings.Join(protocol.CheckedVersions, ", "))
	return nil
}
