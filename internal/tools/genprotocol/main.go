// Command genprotocol writes the daemon protocol's generated files from
// the Go method table: daemon/protocol.json and sdk/protocol.ts (make
// protocol; agentjq-daemon(7) comes with make man).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentjq/agentjq/daemon"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	for path, b := range map[string][]byte{
		"daemon/protocol.json": daemon.Schema(),
		"sdk/protocol.ts":      daemon.TypeScript(),
	} {
		if err := os.WriteFile(filepath.Join(*root, path), b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "genprotocol:", err)
			os.Exit(1)
		}
	}
}
