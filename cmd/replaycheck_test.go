package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/livetest"
	"github.com/agentjq/agentjq/recording"
)

// TestCheckFlags: the settings of a recording's session (in its header,
// or parsed from the argv of an old one) become the check's flags: the
// binary and the rest stay as given to replay --check; no policy, prompt
// or terminal; a flag given to replay --check counts only when it is not
// the default.
func TestCheckFlags(t *testing.T) {
	argv := []string{"agentjq", "spawn", "--policy", "p.json", "--partial", "--max-turns", "3", "--hook", "PreToolUse=true", "-p", "hi", "--", "--replay-user-messages"}
	rec, err := legacySession(argv)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Partial || rec.MaxTurns != 3 || len(rec.Hook) != 1 || len(rec.AgentArgs) != 1 || !rec.OneShot || len(rec.Policy) != 1 {
		t.Fatalf("parsed %+v", rec)
	}
	// What spawn writes in the header is what the old argv said.
	f, args, err := recordedSession(argv)
	if err != nil {
		t.Fatal(err)
	}
	if got := sessionOf(f, args); !reflect.DeepEqual(got, rec) {
		t.Errorf("header %+v, legacy %+v", got, rec)
	}
	cli := SpawnFlags{Agent: "claude", Bin: "/bin/agent"}
	cli.HookTimeout, cli.MCPToolTimeout = defaultHookTimeout, defaultMCPToolTimeout
	if g := givenSession(cli, nil); !reflect.DeepEqual(g, recording.Session{}) {
		t.Errorf("defaults counted as given: %+v", g)
	}
	f = cli
	if err := applySession(&f, rec); err != nil {
		t.Fatal(err)
	}
	if !f.Partial || f.MaxTurns != 3 || len(f.Hook) != 1 || f.Bin != "/bin/agent" || f.HookTimeout != defaultHookTimeout {
		t.Errorf("re-used: %+v", f)
	}
	if f.Policy != nil || f.Prompt != "" || !f.NoPrompt {
		t.Errorf("policy, prompt or terminal re-used: %+v", f)
	}
	cli.MaxTurns = 1
	if g := givenSession(cli, []string{"--verbose"}); g.MaxTurns != 1 || len(g.AgentArgs) != 1 || g.AgentArgs[0] != "--verbose" {
		t.Errorf("overrides: %+v", g)
	}
	if _, err := legacySession([]string{"agentjq", "frobnicate", "--x"}); err == nil {
		t.Error("an unparsable argv was accepted")
	}
	if err := applySession(&f, recording.Session{HookTimeout: "soon"}); err == nil {
		t.Error("a bad duration was accepted")
	}
}

// TestCheckAgainstAsAgent runs the live check with replay --as-agent of
// the fixture standing in for the agent: no CLI needed, and the whole
// path (flags re-used, inputs fed at their gates, permissions answered as
// recorded) must reproduce the recording without drift.
func TestCheckAgainstAsAgent(t *testing.T) {
	livetest.SkipShort(t, "runs this test binary as the agent")
	for _, sc := range readManifest(t) {
		t.Run(sc.Name, func(t *testing.T) {
			if testing.Short() && sc.Name == "big-line" {
				t.Skip("big-line in -short")
			}
			rec := fixtureRec(t, sc.Name)
			ios, out, errb := fixtureIO("")
			code := Main([]string{"replay", "--check", "--bin", asAgentShim(t, rec), "--timeout", "60s", rec}, ios)
			if code != 0 {
				t.Errorf("exit %d\n%s\nstderr: %s", code, out, errb)
			}
		})
	}
}

func TestCheckAgainstAsAgentReportsDrift(t *testing.T) {
	livetest.SkipShort(t, "runs this test binary as the agent")
	rec := fixtureRec(t, "chain")
	b, _ := os.ReadFile(rec)
	// The agent now sends a key the recording lacks: the agent plays the
	// changed copy, the check compares with the original.
	changed := filepath.Join(t.TempDir(), "changed.rec")
	os.WriteFile(changed, []byte(strings.Replace(string(b), `"type":"result",`, `"type":"result","brand_new":1,`, 1)), 0o644)
	if !strings.Contains(string(b), `"type":"result",`) {
		t.Fatal("no result line to change")
	}
	ios, out, errb := fixtureIO("")
	code := Main([]string{"replay", "--check", "--bin", asAgentShim(t, changed), "--timeout", "60s", rec}, ios)
	if code != 1 || !strings.Contains(out.String(), "+.brand_new") {
		t.Errorf("exit %d\n%s\nstderr: %s", code, out, errb)
	}
}

// TestCheckUsesHeaderSession: the check runs the session with the
// settings of the header's session, not with what argv says: a
// recording whose argv names no flags but whose session asks for
// partial messages runs the agent with --include-partial-messages; one
// without a session (an old recording) falls back to its argv.
func TestCheckUsesHeaderSession(t *testing.T) {
	orig := fixtureRec(t, "partial")
	b, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.IndexByte(b, '\n')
	h, err := recording.ParseHeader(b[:first])
	if err != nil {
		t.Fatal(err)
	}
	withHeader := func(h recording.Header) string {
		line, err := recording.MarshalHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "s.rec")
		os.WriteFile(path, append(append(line, '\n'), b[first+1:]...), 0o644)
		return path
	}
	agentArgs := func(rec string) string {
		shim := asAgentShim(t, orig)
		logged := filepath.Join(t.TempDir(), "args")
		wrapper := filepath.Join(t.TempDir(), "claude")
		os.WriteFile(wrapper, []byte("#!/bin/sh\necho \"$@\" >> "+shQuote(logged)+"\nexec "+shQuote(shim)+" \"$@\"\n"), 0o755)
		ios, out, errb := fixtureIO("")
		if code := Main([]string{"replay", "--check", "--bin", wrapper, "--timeout", "60s", rec}, ios); code != 0 {
			t.Fatalf("exit %d\n%s\nstderr: %s", code, out, errb)
		}
		got, _ := os.ReadFile(logged)
		return string(got)
	}
	h.Argv = []string{"agentjq", "spawn"}
	h.Session = &recording.Session{Agent: "claude", Partial: true}
	if got := agentArgs(withHeader(h)); !strings.Contains(got, "--include-partial-messages") {
		t.Errorf("the header's session was not used: agent args %q", got)
	}
	h.Session = &recording.Session{Agent: "claude"}
	h.Argv = []string{"agentjq", "spawn", "--partial"}
	if got := agentArgs(withHeader(h)); strings.Contains(got, "--include-partial-messages") {
		t.Errorf("argv was used over the header's session: agent args %q", got)
	}
	h.Session = nil
	if got := agentArgs(withHeader(h)); !strings.Contains(got, "--include-partial-messages") {
		t.Errorf("an old recording's argv was not used: agent args %q", got)
	}
}
