package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/recording"
)

// captureRecording writes a v1 recording of capture name to a temp file.
func captureRecording(t *testing.T, name string) (path string, in, out []byte) {
	t.Helper()
	in, err := fixtures.Capture(name, "in")
	if err != nil {
		t.Fatal(err)
	}
	out, err = fixtures.Capture(name, "out")
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), name+".rec.ndjson")
	if err := os.WriteFile(path, recording.FromCapture(in, out, recording.Header{}), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, in, out
}

func TestReplayCommand(t *testing.T) {
	t.Parallel()
	rec, capIn, capOut := captureRecording(t, "write-allow")
	recBytes, _ := os.ReadFile(rec)
	agentFlags := []string{"--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--permission-prompt-tool", "stdio", "--model", "m", "--include-partial-messages"}
	cases := []struct {
		name     string
		args     []string
		stdin    string
		code     int
		stdout   string // exact, when set
		inStderr string
	}{
		{name: "plain", args: []string{"replay", rec}, stdout: string(capOut)},
		{name: "stdin", args: []string{"replay", "-"}, stdin: string(recBytes), stdout: string(capOut)},
		{name: "realtime of a zero-time capture", args: []string{"replay", "--realtime", "--idle-limit", "1s", rec}, stdout: string(capOut)},
		{name: "as-agent", args: []string{"replay", "--as-agent", rec}, stdin: string(capIn), stdout: string(capOut)},
		{name: "as-agent with the agent's flags", args: append([]string{"replay", "--as-agent", rec}, agentFlags...), stdin: string(capIn), stdout: string(capOut)},
		{name: "as-agent with the agent's flags after --", args: append([]string{"replay", "--as-agent", rec, "--"}, agentFlags...), stdin: string(capIn), stdout: string(capOut)},
		{name: "as-agent mismatch", args: []string{"replay", "--as-agent", "--wait", "2s", rec}, stdin: strings.Replace(string(capIn), `"behavior": "allow"`, `"behavior": "deny"`, 1), code: 1, inStderr: "seq 6: the control_response"},
		{name: "injected exit", args: []string{"replay", "--inject", "exit@result:9", rec}, code: 9},
		{name: "bad inject", args: []string{"replay", "--inject", "explode@1", rec}, code: 2, inStderr: "unknown fault"},
		{name: "realtime and speed", args: []string{"replay", "--realtime", "--speed", "2", rec}, code: 2},
		{name: "stray args", args: []string{"replay", rec, "extra"}, code: 2, inStderr: "unexpected arguments"},
		{name: "missing file", args: []string{"replay", filepath.Join(t.TempDir(), "nope")}, code: 1, inStderr: "no such file"},
		{name: "not a recording", args: []string{"replay", "-"}, stdin: `{"type":"result"}` + "\n", code: 1, inStderr: "not an agentjq recording"},
		{name: "live check without an agent", args: []string{"replay", "--check", "--bin", filepath.Join(t.TempDir(), "no-such-agent"), rec}, code: 127, inStderr: "no-such-agent"},
		{name: "check of stdin", args: []string{"replay", "--check", "-"}, code: 2, inStderr: "needs the recording as a file"},
		{name: "agent args with --against", args: []string{"replay", "--check", rec, "--against", rec, "--", "--verbose"}, code: 2, inStderr: "not with --against"},
		{name: "check against itself", args: []string{"replay", "--check", rec, "--against", rec}, stdout: ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ios, in, out, errb := iostreams.Test()
			in.WriteString(c.stdin)
			code := Main(c.args, ios)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, c.code, errb)
			}
			if c.code == 0 && c.stdout != out.String() {
				t.Errorf("stdout differs from the capture (%d vs %d bytes)", out.Len(), len(c.stdout))
			}
			if c.code == 0 && errb.Len() > 0 {
				t.Errorf("a successful run wrote to stderr: %s", errb)
			}
			if !strings.Contains(errb.String(), c.inStderr) {
				t.Errorf("stderr lacks %q:\n%s", c.inStderr, errb)
			}
		})
	}
}

func TestReplayCheckDriftAndUpdate(t *testing.T) {
	t.Parallel()
	old, _, _ := captureRecording(t, "write-allow")
	cur, _, _ := captureRecording(t, "write-deny")
	ios, _, out, errb := iostreams.Test()
	if code := Main([]string{"replay", "--check", old, "--against", cur}, ios); code != 1 {
		t.Fatalf("exit %d; stderr %s", code, errb)
	}
	if !strings.Contains(out.String(), "drift between") || !strings.Contains(out.String(), "~ line") {
		t.Errorf("drift report:\n%s", out)
	}
	ios, _, _, errb = iostreams.Test()
	if code := Main([]string{"replay", "--check", "--update", old, "--against", cur}, ios); code != 0 {
		t.Fatalf("--update: exit %d; stderr %s", code, errb)
	}
	a, _ := os.ReadFile(old)
	b, _ := os.ReadFile(cur)
	if !bytes.Equal(a, b) {
		t.Error("--update did not rewrite the fixture")
	}
}

func TestRecordTee(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "tee.ndjson")
	secret := "sk-ant-api03-TTTTTTTTTTTTTTTTTTTTTTTT"
	stream := `{"type":"system","subtype":"init","claude_code_version":"2.1.328"}` + "\n" +
		`{"type":"assistant","message":{"content":[{"type":"text","text":"key ` + secret + `"}]}}` + "\n" +
		"not json at all\n" +
		`{"type":"agentjq","subtype":"exit","code":0}` + "\n" +
		`{"type":"result","subtype":"success","result":"ORG-77"}` // no newline at the end
	ios, in, out, errb := iostreams.Test()
	in.WriteString(stream)
	if code := Main([]string{"record", "-o", file, "--tee", "--redact", `ORG-\d+`}, ios); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if out.String() != stream {
		t.Errorf("tee changed the stream:\n%q\n%q", out.String(), stream)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, entries, err := recording.ReadAll(f, "test.rec", nil)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		dirs = append(dirs, string(e.Dir))
	}
	if got := strings.Join(dirs, " "); got != "out meta out out event out" {
		t.Errorf("directions %s", got)
	}
	raw, _ := os.ReadFile(file)
	if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte("ORG-77")) {
		t.Errorf("a secret reached the disk:\n%s", raw)
	}
	if !h.Redacted || h.Argv[0] != "agentjq" || h.Argv[1] != "record" {
		t.Errorf("header %+v", h)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("recording mode %v", fi.Mode())
	}
	for _, e := range entries {
		if e.Msg != nil && !json.Valid(e.Msg) {
			t.Errorf("invalid entry %d", e.Seq)
		}
	}
}

func TestRecordUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"record", "--tee"},
		{"record", "-o", "-", "--tee"},
		{"record", "-o", filepath.Join(dir, "x"), "--tee", "--redact", "("},
		{"record", "-o", filepath.Join(dir, "y"), "--tee", "--no-redact", "--redact-env", "X"},
		{"record", "-o", filepath.Join(dir, "z"), "--tee", "--", "--model", "x"},
	} {
		ios, _, _, errb := iostreams.Test()
		if code := Main(args, ios); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errb)
		}
	}
}

// record runs a session through the bridge (the agent is this test binary
// playing a capture) and the recording holds both directions.
func TestRecordSession(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	file := filepath.Join(t.TempDir(), "session.ndjson")
	ios, out, errb := fakeIO(t, "capture:hello", "go\n")
	code := Main([]string{"record", "-o", file, "--bin", os.Args[0]}, ios)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, errb)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, entries, err := recording.ReadAll(f, "test.rec", nil)
	if err != nil {
		t.Fatal(err)
	}
	count := map[protocol.Direction]int{}
	version := ""
	for _, e := range entries {
		count[e.Dir]++
		if e.Dir == protocol.DirMeta {
			version = string(e.Msg)
		}
	}
	if count[protocol.DirIn] == 0 || count[protocol.DirOut] == 0 || count[protocol.DirEvent] == 0 {
		t.Errorf("directions recorded: %v", count)
	}
	if !strings.Contains(version, fixtures.CLIVersion) {
		t.Errorf("no agent_version meta entry: %q", version)
	}
	if h.Agent != "claude" || !h.Redacted {
		t.Errorf("header %+v", h)
	}
	// Everything spawn printed (agent lines and events) is in the recording.
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		found := false
		for _, e := range entries {
			if (e.Dir == protocol.DirOut || e.Dir == protocol.DirEvent) && string(e.Msg) == l {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("stdout line not recorded: %.120s", l)
		}
	}
}
