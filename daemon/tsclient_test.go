package daemon

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The generated sdk/protocol.ts types a client with no casts: tsc
// --strict compiles testdata/ts/client.ts, which narrows every event by
// its kind (an exhaustive switch), answers approvals with the Decision
// type and reads the closed enums; and it refuses each line of wrong.ts
// (a payload read before its kind is known, a kind that does not exist,
// a decision neither allow nor deny).
func TestTypeScriptStrictClient(t *testing.T) {
	mods := nodeModules(t)
	tsc := filepath.Join(mods, "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		if os.Getenv("AGENTJQ_REQUIRE_LIVE") == "1" {
			t.Fatalf("%s/typescript is required (make node-clients)", mods)
		}
		t.Skip("no typescript (make node-clients)")
	}
	dir := t.TempDir()
	for src, dst := range map[string]string{
		"testdata/ts/client.ts": "client.ts",
		"testdata/ts/wrong.ts":  "wrong.ts",
		"../sdk/protocol.ts":    "protocol.ts",
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if dst == "client.ts" {
			if m := regexp.MustCompile(`\bas [A-Z{]|\bany\b|<[A-Z]\w*>\w|@ts-`).Find(b); m != nil {
				t.Fatalf("client.ts has a cast or an any: %q", m)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(file string) (string, error) {
		cmd := exec.Command("node", tsc, "--strict", "--noEmit", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", file)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("client.ts"); err != nil {
		t.Fatalf("tsc --strict client.ts: %v\n%s", err, out)
	}
	out, err := run("wrong.ts")
	if err == nil {
		t.Fatal("tsc --strict accepted wrong.ts")
	}
	for _, want := range []string{"wrong.ts(7,", "wrong.ts(11,", "wrong.ts(14,"} {
		if !strings.Contains(out, want) {
			t.Errorf("tsc did not refuse %s...):\n%s", want, out)
		}
	}
	if n := strings.Count(out, "error TS"); n != 3 {
		t.Errorf("tsc found %d errors in wrong.ts, want 3:\n%s", n, out)
	}
}
