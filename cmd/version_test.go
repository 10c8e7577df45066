package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/iostreams"
)

// agentjq version names every checked CLI version.
func TestVersionListsCheckedVersions(t *testing.T) {
	t.Parallel()
	ios, _, out, _ := iostreams.Test()
	if code := Main([]string{"version"}, ios); code != 0 {
		t.Fatalf("exit %d", code)
	}
	want := "checked against: claude " + strings.Join(protocol.CheckedVersions, ", ") + "\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("version prints %q, want a line %q", out, want)
	}
	for _, v := range []string{"2.1.328", "2.1.332"} {
		if !strings.Contains(out.String(), v) {
			t.Errorf("version does not list %s: %q", v, out)
		}
	}
}

// twoTurnAgent writes an agent that reports CLI version v in the
// system/init of each of two turns.
func twoTurnAgent(t *testing.T, v string) string {
	t.Helper()
	initLine := `{"type":"system","subtype":"init","session_id":"s1","claude_code_version":"` + v + `"}`
	result := `{"type":"result","subtype":"success","is_error":false,"result":"ok","num_turns":1}`
	script := "#!/bin/sh\nfor turn in 1 2; do\n\tread -r line || exit 0\n\techo '" + initLine + "'\n\techo '" + result + "'\ndone\n"
	bin := filepath.Join(t.TempDir(), "claude")
	if err := writeFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// versionWarnings runs a two-turn session against an agent of version v
// and returns the version_drift events and spawn's stderr.
func versionWarnings(t *testing.T, v string) (int, string) {
	t.Helper()
	ios, in, out, errb := iostreams.Test()
	in.WriteString("one\ntwo\n")
	ios.Environ = []string{"PATH=" + os.Getenv("PATH"), "AGENTJQ_GRACE=500ms"}
	code := Main([]string{"spawn", "--bin", twoTurnAgent(t, v), "-C", t.TempDir(), "--no-prompt", "--timeout", "30s"}, ios)
	if code != 0 {
		t.Fatalf("claude %s: exit %d\nstderr: %s", v, code, errb)
	}
	n := 0
	results := 0
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if m["type"] == "agentjq" && m["subtype"] == "warning" && m["code"] == protocol.WarnVersion {
			n++
		}
		if m["type"] == "result" {
			results++
		}
	}
	if results != 2 {
		t.Fatalf("claude %s: %d results, want the two turns\n%s", v, results, out)
	}
	return n, errb.String()
}

// A checked version gets no version_drift warning, whichever of the list
// it is; another version gets exactly one, however many turns report it.
func TestSpawnVersionWarning(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs spawn against a shell-script agent")
	for _, v := range protocol.CheckedVersions {
		if n, stderr := versionWarnings(t, v); n != 0 || strings.Contains(stderr, "warning") {
			t.Errorf("claude %s (checked): %d version warnings, stderr %q", v, n, stderr)
		}
	}
	n, stderr := versionWarnings(t, "2.1.329")
	if n != 1 || strings.Count(stderr, "agent version 2.1.329 was not checked") != 1 {
		t.Errorf("claude 2.1.329 (not checked): %d version_drift events, stderr %q; want one of each", n, stderr)
	}
	for _, v := range protocol.CheckedVersions {
		if !strings.Contains(stderr, v) {
			t.Errorf("the warning does not name checked version %s: %q", v, stderr)
		}
	}
}

// The live CLI is one of the checked versions, and spawn against it warns
// about nothing (make test runs this against each checked version).
func TestLiveCheckedVersionNoWarning(t *testing.T) {
	t.Parallel()
	bin := livetest.Claude(t)
	if v := livetest.CLIVersion(t, bin); !protocol.VersionChecked(v) {
		t.Fatalf("the live CLI is claude %s, not one of the checked versions %v", v, protocol.CheckedVersions)
	}
	r := spawnLive(t, "", "-p", "HELLO there")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	for _, m := range r.lines {
		if m["type"] == "agentjq" && m["subtype"] == "warning" {
			t.Errorf("warning event %v", m)
		}
	}
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("stderr: %s", r.stderr)
	}
}
