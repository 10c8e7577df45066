package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

// TestLayout holds the shape #11 and #27 gave the tree: no assembly, no
// O_DIRECT writer, and a session core (internal/bridge) that depends on no
// project package above internal/ (approve, hooks, mcphost, recording, the
// front ends), directly or through another package.
func TestLayout(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		switch {
		case strings.HasSuffix(path, ".s"):
			t.Errorf("%s: assembly", path)
		case strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.Contains(b, []byte("O_DIRECT")) {
				t.Errorf("%s: O_DIRECT", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	livetest.SkipShort(t, "runs go list")
	out, err := exec.Command("go", "list", "-deps", "./internal/bridge").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		// The session core sits on the lowest floor: no policy (approve,
		// hooks, protect, sandbox), no hosted servers, no recording, no
		// front end. Only internal/ packages below it.
		if rest, ok := strings.CutPrefix(pkg, "github.com/agentjq/agentjq/"); ok && !strings.HasPrefix(rest, "internal/") {
			t.Errorf("internal/bridge depends on %s", pkg)
		}
	}
}
