// Command genman writes agentjq's manual pages into a directory (make man).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentjq/agentjq/cmd"
)

func main() {
	out := flag.String("o", "man", "the directory to write the pages to")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintf(os.Stderr, "genman: %v\n", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	pages, err := cmd.ManPages()
	if err != nil {
		return err
	}
	// Remove pages the code no longer makes.
	old, _ := filepath.Glob(filepath.Join(dir, "agentjq*"))
	for _, f := range old {
		if _, ok := pages[filepath.Base(f)]; !ok && !strings.HasSuffix(f, ".go") {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	for name, b := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
