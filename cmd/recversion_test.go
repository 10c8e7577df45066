package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/recording"
)

func headerOf(t *testing.T, path string) recording.Header {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	h, err := recording.ParseHeader([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// replay --check --update takes the agent's version into the header it
// writes: a fresh recording's header has none (the version comes later,
// as a meta entry), and a fixture must name the CLI that made it. Without
// a version anywhere it refuses, leaving the old recording as it was.
func TestUpdateWritesAgentVersion(t *testing.T) {
	t.Parallel()
	orig, err := os.ReadFile(fixtureRec(t, "hello"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	old := filepath.Join(dir, "old.rec")
	fresh := strings.Replace(string(orig), `"agent_version":"`+headerOf(t, fixtureRec(t, "hello")).AgentVersion+`"`, `"agent_version":""`, 1)
	// A key the CLI now sends: drift in the shape, which is what --check
	// compares.
	fresh = strings.Replace(fresh, `"type":"result",`, `"type":"result","drifted_key":1,`, 1)
	if fresh == string(orig) || !strings.Contains(fresh, `"dir":"meta","msg":{"agent_version":"`) {
		t.Fatal("the test recording is not what this test needs")
	}
	newRec := filepath.Join(dir, "new.rec")
	noVersion := filepath.Join(dir, "noversion.rec")
	var kept []string
	for _, l := range strings.SplitAfter(fresh, "\n") {
		if !strings.Contains(l, `"dir":"meta"`) {
			kept = append(kept, l)
		}
	}
	for path, b := range map[string]string{old: string(orig), newRec: fresh, noVersion: strings.Join(kept, "")} {
		if err := os.WriteFile(path, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if h := headerOf(t, newRec); h.AgentVersion != "" {
		t.Fatalf("header of the new recording %+v", h)
	}
	want := headerOf(t, old).AgentVersion

	ios, _, out, errb := iostreams.Test()
	if code := Main([]string{"replay", "--check", "--against", noVersion, "--update", old}, ios); code == 0 {
		t.Errorf("--update from a recording without a version: exit 0\n%s\nstderr: %s", out, errb)
	}
	if b, _ := os.ReadFile(old); string(b) != string(orig) {
		t.Errorf("the refused update changed the old recording")
	}

	ios, _, out, errb = iostreams.Test()
	if code := Main([]string{"replay", "--check", "--against", newRec, "--update", old}, ios); code != 0 || !strings.Contains(errb.String(), "updated") {
		t.Fatalf("--update: exit %d\n%s\nstderr: %s", code, out, errb)
	}
	if h := headerOf(t, old); h.AgentVersion != want || want == "" {
		t.Errorf("updated header agent_version %q, want %q", h.AgentVersion, want)
	}
	if b, _ := os.ReadFile(old); !strings.Contains(string(b), "drifted_key") {
		t.Errorf("the update did not write the new recording")
	}
}

// headerVersion is the agent_version of a recording's header.
func headerVersion(t *testing.T, path string) string {
	t.Helper()
	return headerOf(t, path).AgentVersion
}
