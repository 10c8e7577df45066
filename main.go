// Command agentjq puts coding-agent CLIs into Unix pipelines.
package main

import (
	"os"

	"github.com/agentjq/agentjq/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args[1:], cmd.SystemIO()))
}
