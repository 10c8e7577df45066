package cmd

// The fixture recordings under fixtures/recordings/claude-code-VERSION:
// one agentjq recording per capture scenario, made by `make fixtures`
// (TestRegenerateFixtures, AGENTJQ_UPDATE=1) with the real CLI against the
// scripted Messages API, and the tests that replay them.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/recording"
	"github.com/agentjq/agentjq/replay"
)

// fixtureScenario is one row of the manifest (manifest.json next to the
// recordings): how the recording was made.
type fixtureScenario struct {
	Name string `json:"name"`
	// Flags are spawn's flags (a policy file is named relative to the
	// recordings directory); AgentArgs go after --.
	Flags     []string `json:"flags,omitempty"`
	AgentArgs []string `json:"agent_args,omitempty"`
	// Stdin is what spawn read, line by line.
	Stdin []fixtureInput `json:"stdin,omitempty"`
	// Policy, when set, is written to NAME.policy.json and passed with
	// --policy.
	Policy json.RawMessage `json:"-"`
	Note   string          `json:"note,omitempty"`
}

// fixtureInput is one stdin line, fed once the session has printed Count
// agent lines of kind After (a Shape kind) and then waited Delay.
type fixtureInput struct {
	Line  string `json:"line"`
	After string `json:"after,omitempty"`
	Count int    `json:"count,omitempty"`
	Delay string `json:"delay,omitempty"`
}

func turn(s string) fixtureInput { return fixtureInput{Line: s} }

// turnAfter is a turn sent after the n-th result.
func turnAfter(s string, n int) fixtureInput {
	return fixtureInput{Line: s, After: "result/success", Count: n}
}

func userJSON(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}, "parent_tool_use_id": nil, "session_id": ""})
	return string(b)
}

const deniedByPolicy = `{"deny":["Write","Bash(rm -rf:*)"],"message":"Denied by scripted policy."}`

// fixtureScenarios are the capture scenarios as agentjq sessions. Not
// here: write-nostdio (spawn always passes --permission-prompt-tool
// stdio, so the CLI's own auto-deny cannot be reproduced through it).
var fixtureScenarios = []fixtureScenario{
	{Name: "api-error", Stdin: []fixtureInput{turn("FAIL400 now")}},
	{Name: "ask-answer", Stdin: []fixtureInput{turn("ASK me")}, Policy: json.RawMessage(`{"answers":{"Do you prefer cats or dogs?":"Dogs"}}`)},
	{Name: "bash-allow", Stdin: []fixtureInput{turn("run BASH")}},
	{Name: "bash-allowed-tools", Flags: []string{"--allowed-tools", "Bash(echo:*)"}, Stdin: []fixtureInput{turn("run BASH")}},
	{Name: "big-line", Stdin: []fixtureInput{turn("BIGWRITE 3")}, Policy: json.RawMessage(`{"allow":["Write"]}`)},
	{Name: "chain", Stdin: []fixtureInput{turn("do the CHAIN")}, Policy: json.RawMessage(`{"allow":["Bash","Write","Read"]}`)},
	{Name: "hello", Stdin: []fixtureInput{turn("HELLO there")}},
	{Name: "hook-callback", Flags: []string{"--hook", `PreToolUse:Bash=printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"hook says yes"}}'`}, Stdin: []fixtureInput{turn("run BASH")},
		Note: "a PreToolUse hook registered with --hook answers allow"},
	{Name: "initialize", Flags: []string{"--init"}, Stdin: []fixtureInput{turn("HELLO init")}},
	{Name: "interrupt", Stdin: []fixtureInput{turn("please SLEEP"), {Line: `{"type":"control_request","request_id":"int-1","request":{"subtype":"interrupt"}}`, After: "assistant[tool_use]", Count: 1, Delay: "1500ms"}},
		Note: "the client's interrupt goes 1.5s after the model called sleep 20 (which the CLI runs without asking)"},
	{Name: "max-turns", Flags: []string{"--max-turns", "1"}, Stdin: []fixtureInput{turn("do the CHAIN")}, Policy: json.RawMessage(`{"allow":["Bash","Write","Read"]}`)},
	{Name: "mcp-ping", Flags: []string{"--mcp-tool", "ping=echo pong-from-probe", "--mcp-tool-desc", "ping=Answers pong"},
		Stdin:  []fixtureInput{turn(userJSON("TOOL mcp__agentjq__ping {\"note\":\"hi\"}\nSAY Ping answered."))},
		Policy: json.RawMessage(`{"allow":["mcp__agentjq__ping"]}`), Note: "the capture's SDK server probe is a --mcp-tool here: the tool is mcp__agentjq__ping"},
	{Name: "multi-turn", Stdin: []fixtureInput{turn("HELLO one"), turnAfter("HELLO two", 1)}},
	{Name: "partial", Flags: []string{"--partial"}, Stdin: []fixtureInput{turn("HELLO partial")}},
	{Name: "partial-tool", Flags: []string{"--partial"}, Stdin: []fixtureInput{turn("please WRITE banana")}, Policy: json.RawMessage(`{"allow":["Write"]}`)},
	{Name: "print-mode", Flags: []string{"-p", "HELLO print"}, Note: "spawn's one-shot form: the prompt goes as the only stdin turn, not on argv"},
	{Name: "replay-user", AgentArgs: []string{"--replay-user-messages"}, Stdin: []fixtureInput{turn("HELLO replay")}},
	{Name: "rmrf-deny", Stdin: []fixtureInput{turn("please RMRF")}, Policy: json.RawMessage(deniedByPolicy)},
	{Name: "set-mode", Stdin: []fixtureInput{{Line: `{"type":"control_request","request_id":"mode-1","request":{"subtype":"set_permission_mode","mode":"acceptEdits"}}`}, {Line: "please WRITE banana", After: "control_response/success", Count: 1}}},
	{Name: "subagent", Stdin: []fixtureInput{turn("start an AGENT")}},
	{Name: "thinking", Stdin: []fixtureInput{turn("THINK about it")}},
	{Name: "write-allow", Stdin: []fixtureInput{turn("please WRITE banana")}, Policy: json.RawMessage(`{"allow":["Write"]}`)},
	{Name: "write-deny", Stdin: []fixtureInput{turn("please WRITE banana")}, Policy: json.RawMessage(deniedByPolicy)},
}

// Fixed paths stand for the session's temporary directories in the
// recordings, as in the captures.
const (
	fixtureProject = "/home/user/project"
	fixtureHome    = "/home/user"
)

// scenarioFlags are the spawn flags and agent args of sc, with policy
// files resolved in dir.
func scenarioFlags(sc fixtureScenario, dir string) []string {
	var args []string
	if sc.Policy != nil {
		args = append(args, "--policy", filepath.Join(dir, sc.Name+".policy.json"))
	}
	args = append(args, sc.Flags...)
	if len(sc.AgentArgs) > 0 {
		args = append(append(args, "--"), sc.AgentArgs...)
	}
	return args
}

// headerArgv is the command line written in a fixture's header: the
// policy named relative to the recordings directory.
func headerArgv(sc fixtureScenario) []string {
	var args []string
	if sc.Policy != nil {
		args = append(args, "--policy", sc.Name+".policy.json")
	}
	args = append(args, sc.Flags...)
	if len(sc.AgentArgs) > 0 {
		args = append(append(args, "--"), sc.AgentArgs...)
	}
	return append([]string{"agentjq", "spawn"}, args...)
}

// fixtureRec returns the path of scenario name's recording, unzipped into
// a temporary file when it is kept compressed.
func fixtureRec(t *testing.T, name string) string {
	t.Helper()
	return fixtureRecOf(t, fixtures.CLIVersion, name)
}

// fixtureRecOf is fixtureRec for CLI version's recordings.
func fixtureRecOf(t *testing.T, version, name string) string {
	t.Helper()
	path := filepath.Join(fixtures.RecordingsDir(version), name+".rec")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	f, err := os.Open(path + ".gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), name+".rec")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return tmp
}

// readManifest reads the manifest of the fixture recordings made with the
// captures' CLI version.
func readManifest(t *testing.T) []fixtureScenario {
	t.Helper()
	return readManifestOf(t, fixtures.CLIVersion)
}

// readManifestOf reads the manifest of CLI version's fixture recordings.
func readManifestOf(t *testing.T, version string) []fixtureScenario {
	t.Helper()
	dir := fixtures.RecordingsDir(version)
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatalf("no fixture manifest for claude %s (make fixtures CLAUDE_VERSION=%s): %v", version, version, err)
	}
	var m struct {
		CLIVersion string            `json:"cli_version"`
		Scenarios  []fixtureScenario `json:"scenarios"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.CLIVersion != version || len(m.Scenarios) == 0 {
		t.Fatalf("%s: version %q, %d scenarios", dir, m.CLIVersion, len(m.Scenarios))
	}
	for i, sc := range m.Scenarios {
		if _, err := os.Stat(filepath.Join(dir, sc.Name+".policy.json")); err == nil {
			m.Scenarios[i].Policy = json.RawMessage(`{}`) // present; read from its file
		}
	}
	return m.Scenarios
}

// TestRegenerateFixtures remakes every fixture recording with the real CLI
// (make fixtures CLAUDE_VERSION=X), into the folder of the version the CLI
// reports. It runs only with AGENTJQ_UPDATE=1.
func TestRegenerateFixtures(t *testing.T) {
	t.Parallel()
	if os.Getenv("AGENTJQ_UPDATE") != "1" {
		t.Skip("regenerates the fixture recordings: run with AGENTJQ_UPDATE=1 (make fixtures)")
	}
	bin := livetest.Claude(t)
	version := livetest.CLIVersion(t, bin)
	dir := fixtures.RecordingsDir(version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	only := os.Getenv("AGENTJQ_FIXTURE")
	for _, sc := range fixtureScenarios {
		if only != "" && sc.Name != only {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			if sc.Policy != nil {
				var pretty bytes.Buffer
				json.Indent(&pretty, sc.Policy, "", "  ")
				pretty.WriteByte('\n')
				if err := os.WriteFile(filepath.Join(dir, sc.Name+".policy.json"), pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b := regenerate(t, bin, version, sc, dir)
			name := filepath.Join(dir, sc.Name+".rec")
			if len(b) > 1<<20 {
				// Kept compressed, as the captures are.
				var z bytes.Buffer
				zw := gzip.NewWriter(&z)
				zw.Write(b)
				zw.Close()
				b, name = z.Bytes(), name+".gz"
			}
			if err := os.WriteFile(name, b, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
	if only == "" {
		b, _ := json.MarshalIndent(map[string]any{
			"cli_version": version,
			"about":       "How each NAME.rec was made (go test ./cmd -run TestRegenerateFixtures with AGENTJQ_UPDATE=1, i.e. make fixtures): agentjq spawn with these flags (a policy file is NAME.policy.json here) ran the real claude CLI against internal/testkit/apistub, reading these stdin lines; a line with after/count waited until the session had printed count agent lines of that kind, then delay. Paths of the temporary project and home are rewritten to " + fixtureProject + " and " + fixtureHome + ".",
			"scenarios":   fixtureScenarios,
		}, "", "  ")
		if err := os.WriteFile(filepath.Join(dir, "manifest.json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// regenerate runs one scenario through spawn with the real CLI and returns
// the recording, with the temporary paths rewritten.
func regenerate(t *testing.T, bin, version string, sc fixtureScenario, dir string) []byte {
	api := apistub.Start(t)
	work := livetest.Workdir(t)
	env := livetest.Env(t, api.URL())
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	f, agentArgs, err := recordedSession(append([]string{"agentjq", "spawn"}, scenarioFlags(sc, dir)...))
	if err != nil {
		t.Fatal(err)
	}
	f.Bin, f.Cwd, f.Timeout, f.NoPrompt = bin, work, 3*time.Minute, true

	path := filepath.Join(t.TempDir(), sc.Name+".rec")
	ios, _, _, errb := iostreams.Test()
	ios.Environ = env
	rec, err := openRecording(ios, path, RedactFlags{}, sessionOf(f, agentArgs), headerArgv(sc), work)
	if err != nil {
		t.Fatal(err)
	}
	fd := replay.NewFeeder()
	var inputs []replay.ScriptedInput
	for _, in := range sc.Stdin {
		li := replay.ScriptedInput{Line: []byte(in.Line), After: in.After, Count: in.Count}
		if in.Delay != "" {
			li.Delay, _ = time.ParseDuration(in.Delay)
		}
		inputs = append(inputs, li)
	}
	pr, pw := io.Pipe()
	ios.In = pr
	ctx, cancel := context.WithCancel(context.Background())
	fed := make(chan struct{})
	go func() { defer close(fed); fd.Feed(ctx, pw, inputs, time.Minute) }()
	runErr := runSpawn(context.Background(), ios, f, agentArgs, tapFunc(func(d protocol.Direction, l []byte, k protocol.Known) {
		rec.Tap(d, l, k)
		fd.Saw(d, l)
	}))
	cancel()
	pr.Close()
	<-fed
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if runErr != nil && !isSessionExit(runErr) {
		t.Fatalf("spawn: %v\nstderr: %s", runErr, errb)
	}
	if stuck := fd.Stuck(); stuck != "" {
		t.Fatalf("%s\nstderr: %s", stuck, errb)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The project also appears as a slug in the CLI's own directories.
	slug := func(p string) string { return strings.ReplaceAll(p, "/", "-") }
	// Decisions name the policy file that decided: keep it relative to the
	// recordings directory, as the header's argv names it.
	b = replay.RewritePaths(b, map[string]string{work: fixtureProject, home: fixtureHome, slug(work): slug(fixtureProject),
		dir + string(filepath.Separator): ""})
	// The CLI's socket is named after its pid, its temporary directory
	// after the uid.
	b = socketPath.ReplaceAll(b, []byte("/tmp/cc-socks/1000.sock"))
	b = uidTmp.ReplaceAll(b, []byte("/tmp/claude-1000/"))
	// The header names the CLI version (learnt mid-session, in a meta entry).
	nl := bytes.IndexByte(b, '\n')
	h, err := recording.ParseHeader(b[:nl])
	if err != nil {
		t.Fatal(err)
	}
	h.AgentVersion = version
	if v := rec.w.AgentVersion(); v != version {
		t.Errorf("the CLI reported version %q in the session, %s to --version", v, version)
	}
	hb, err := recording.MarshalHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	b = append(hb, b[nl:]...)
	for _, tmp := range []string{filepath.Dir(work), filepath.Dir(home), slug(filepath.Dir(work)), "TestRegenerateFixtures"} {
		if i := bytes.Index(b, []byte(tmp)); i >= 0 {
			t.Errorf("a temporary path is left in the recording: %.200s", b[i:])
		}
	}
	return b
}

var (
	socketPath = regexp.MustCompile(`/tmp/cc-socks/[0-9]+\.sock`)
	uidTmp     = regexp.MustCompile(`/tmp/claude-[0-9]+/`)
)

// fixtureIO is an IO for spawn in-process with a small environment.
func fixtureIO(stdin string) (*iostreams.IO, *bytes.Buffer, *bytes.Buffer) {
	ios, in, out, errb := iostreams.Test()
	in.WriteString(stdin)
	ios.Environ = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "AGENTJQ_GRACE=2s"}
	return ios, out, errb
}

// asAgentShim writes a script that runs this test binary as
// `agentjq replay --as-agent REC`, for spawn's --bin.
func asAgentShim(t *testing.T, rec string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args.json")
	b, _ := json.Marshal([]string{"replay", "--as-agent", "--wait", "20s", rec})
	if err := os.WriteFile(argsFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	shim := filepath.Join(dir, "claude")
	script := fmt.Sprintf("#!/bin/sh\nAGENTJQ_HELPER_ARGS=%s exec %s -test.run='^TestHelperMain$' -- \"$@\"\n", shQuote(argsFile), shQuote(exe))
	if err := writeFile(shim, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return shim
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestHelperMain is not a test: the as-agent shim runs this binary with
// AGENTJQ_HELPER_ARGS naming a file of agentjq arguments; the arguments
// after -- are appended (the agent's flags, which replay --as-agent takes
// and ignores).
func TestHelperMain(t *testing.T) {
	t.Parallel()
	file := os.Getenv("AGENTJQ_HELPER_ARGS")
	if file == "" {
		t.Skip("helper process for the as-agent shim")
	}
	b, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	var args []string
	json.Unmarshal(b, &args)
	for i, a := range os.Args {
		if a == "--" {
			args = append(append(args, "--"), os.Args[i+1:]...)
			break
		}
	}
	os.Exit(Main(args, SystemIO()))
}

// replayThroughSpawn runs spawn with --bin replaying rec as the agent and
// checks that spawn's transcript is the recorded agent output and that the
// as-agent side saw what the recording holds.
func replayThroughSpawn(t *testing.T, rec string, flags []string, stdin string) {
	t.Helper()
	f, err := os.Open(rec)
	if err != nil {
		t.Fatal(err)
	}
	_, entries, err := recording.ReadAll(f, "test.rec", nil)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for _, l := range recording.Transcript(entries, protocol.DirOut) {
		// spawn turns the sandbox on, and a recording, which runs no
		// commands, honours it: its init lines say so
		// (replay.AgentOptions.Sandboxed).
		if bytes.Contains(l, []byte(`"subtype":"init"`)) {
			l = bytes.Replace(l, []byte(`"sandbox_enabled":false`), []byte(`"sandbox_enabled":true`), 1)
		}
		want.Write(l)
		want.WriteByte('\n')
	}
	wantExit, hasExit := replay.ExitEvent(entries)

	// The recordings were made without agentjq's PreToolUse guard: their
	// agent side expects no initialize request.
	screenEveryCall = false
	defer func() { screenEveryCall = true }()
	ios, out, errb := fixtureIO(stdin)
	args := append([]string{"spawn", "--bin", asAgentShim(t, rec), "-C", t.TempDir(), "--no-prompt", "--no-events", "--timeout", "60s"}, flags...)
	code := Main(args, ios)
	if strings.Contains(errb.String(), "replay --as-agent") {
		t.Errorf("the as-agent side reports a mismatch:\n%s", errb)
	}
	if got := out.String(); got != want.String() {
		gl, wl := strings.Split(got, "\n"), strings.Split(want.String(), "\n")
		for i := 0; i < min(len(gl), len(wl)); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("transcript differs at line %d (of %d, want %d):\n got %.300s\nwant %.300s\nstderr: %s", i+1, len(gl), len(wl), gl[i], wl[i], errb)
			}
		}
		t.Fatalf("transcript has %d lines, want %d\nstderr: %s", len(gl), len(wl), errb)
	}
	if hasExit && code != wantExit.Code {
		t.Errorf("spawn exited %d, the recorded session %d\nstderr: %s", code, wantExit.Code, errb)
	}
}

func stdinOf(sc fixtureScenario) string {
	var b strings.Builder
	for _, in := range sc.Stdin {
		b.WriteString(in.Line + "\n")
	}
	return b.String()
}

// TestFixtureRecordingsReplayThroughSpawn: spawn driven by replay
// --as-agent reproduces every fixture's transcript byte for byte, for
// every checked CLI version's fixtures.
func TestFixtureRecordingsReplayThroughSpawn(t *testing.T) {
	// Not parallel: replayThroughSpawn turns screenEveryCall off.
	livetest.SkipShort(t, "runs spawn against this test binary as the agent")
	for _, version := range protocol.CheckedVersions {
		dir := fixtures.RecordingsDir(version)
		for _, sc := range readManifestOf(t, version) {
			t.Run(version+"/"+sc.Name, func(t *testing.T) {
				replayThroughSpawn(t, fixtureRecOf(t, version, sc.Name), scenarioFlags(sc, dir), stdinOf(sc))
			})
		}
	}
}

// TestCaptureRecordingsReplayThroughSpawn does the same with recordings
// made by FromCapture from the raw captures, with the fixture's policies.
// Left out: hook-callback and mcp-ping (the captures' SDK callbacks and
// server are not spawn flags), write-nostdio and print-mode (not a
// stream-json client).
func TestCaptureRecordingsReplayThroughSpawn(t *testing.T) {
	// Not parallel: replayThroughSpawn turns screenEveryCall off.
	livetest.SkipShort(t, "runs spawn against this test binary as the agent")
	dir := fixtures.RecordingsDir(fixtures.CLIVersion)
	byName := map[string]fixtureScenario{}
	for _, sc := range readManifest(t) {
		byName[sc.Name] = sc
	}
	skip := map[string]bool{"hook-callback": true, "mcp-ping": true, "write-nostdio": true, "print-mode": true}
	n := 0
	for _, name := range fixtures.Scenarios() {
		if skip[name] {
			continue
		}
		sc, ok := byName[name]
		if !ok {
			t.Errorf("capture %s has no fixture scenario", name)
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			in, err := fixtures.Capture(name, "in")
			if err != nil {
				t.Fatal(err)
			}
			out, err := fixtures.Capture(name, "out")
			if err != nil {
				t.Fatal(err)
			}
			rec := filepath.Join(t.TempDir(), name+".rec")
			if err := os.WriteFile(rec, recording.FromCapture(in, out, recording.Header{}), 0o644); err != nil {
				t.Fatal(err)
			}
			// The client's own lines: turns and its control requests.
			var stdin strings.Builder
			for _, l := range bytes.Split(in, []byte("\n")) {
				if len(bytes.TrimSpace(l)) > 0 && replay.FedByClient(l) {
					stdin.Write(l)
					stdin.WriteByte('\n')
				}
			}
			var flags []string
			if sc.Policy != nil {
				flags = append(flags, "--policy", filepath.Join(dir, sc.Name+".policy.json"))
			}
			replayThroughSpawn(t, rec, flags, stdin.String())
		})
	}
	if n < 18 {
		t.Errorf("only %d captures replayed", n)
	}
}

// TestLiveFixtureCheck runs replay --check on every fixture recording of
// the CLI's version against that CLI: none may drift (timing is not
// drift). (make test runs it once for each checked version.)
// AGENTJQ_FIXTURES_OF=V checks V's fixtures instead, as one replay --check
// of their folder: make cli-drift shows a new CLI's graded drift from the
// newest checked version's sessions that way, and fails on breaking drift.
func TestLiveFixtureCheck(t *testing.T) {
	t.Parallel()
	bin := livetest.Claude(t)
	version := livetest.CLIVersion(t, bin)
	if v := os.Getenv("AGENTJQ_FIXTURES_OF"); v != "" && v != version {
		api := apistub.Start(t)
		ios, _, out, errb := iostreams.Test()
		ios.Environ = livetest.Env(t, api.URL())
		code := Main([]string{"replay", "--check", "--bin", bin, "--timeout", "3m", fixtures.RecordingsDir(v)}, ios)
		t.Logf("claude %s against %s's fixtures: exit %d\n%s\nstderr: %s", version, v, code, out, errb)
		if code != 0 && code != replay.ExitCompatible {
			t.Errorf("breaking drift (or an error): exit %d", code)
		}
		return
	}
	for _, sc := range readManifestOf(t, version) {
		t.Run(sc.Name, func(t *testing.T) {
			// Each scenario has its own scripted API, HOME and project:
			// they run side by side.
			t.Parallel()
			api := apistub.Start(t)
			ios, _, out, errb := iostreams.Test()
			ios.Environ = livetest.Env(t, api.URL())
			code := Main([]string{"replay", "--check", "--bin", bin, "--timeout", "3m", fixtureRecOf(t, version, sc.Name)}, ios)
			if code != 0 {
				t.Errorf("exit %d\n%s\nstderr: %s", code, out, errb)
			}
		})
	}
}

// TestLiveCheckReportsDrift: a recording whose shape differs from what the
// CLI sends now drifts (a key the CLI no longer sends, a line of a kind it
// no longer sends), --update rewrites it, and the rewritten one checks
// clean. The live run answers permissions as recorded: the allowed Write
// lands in the directory given with -C.
func TestLiveCheckReportsDrift(t *testing.T) {
	t.Parallel()
	bin := livetest.Claude(t)
	version := livetest.CLIVersion(t, bin)
	orig, err := os.ReadFile(fixtureRecOf(t, version, "write-allow"))
	if err != nil {
		t.Fatal(err)
	}
	// The recorded result gains a key; a recorded line of a new type is
	// added before it.
	lines := strings.Split(strings.TrimSuffix(string(orig), "\n"), "\n")
	var mutated []string
	n := 0
	for _, l := range lines {
		if strings.Contains(l, `"dir":"out","msg":{`) && strings.Contains(l, `"type":"result"`) {
			mutated = append(mutated, `{"seq":900,"ms":1.000,"dir":"out","msg":{"type":"brand_new_event","x":1}}`)
			l = strings.Replace(l, `"type":"result"`, `"type":"result","gone_key":true`, 1)
			n++
		}
		mutated = append(mutated, l)
	}
	if n != 1 {
		t.Fatalf("%d result lines", n)
	}
	rec := filepath.Join(t.TempDir(), "write-allow.rec")
	if err := os.WriteFile(rec, []byte(strings.Join(mutated, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(extra ...string) (int, string, string, string) {
		api := apistub.Start(t)
		work := livetest.Workdir(t)
		ios, _, out, errb := iostreams.Test()
		ios.Environ = livetest.Env(t, api.URL())
		args := append([]string{"replay", "--check", "--bin", bin, "-C", work, "--timeout", "2m", rec}, extra...)
		return Main(args, ios), out.String(), errb.String(), work
	}
	code, out, errs, work := check()
	if code != 1 {
		t.Fatalf("exit %d, want 1 (drift)\n%s\nstderr: %s", code, out, errs)
	}
	for _, want := range []string{"brand_new_event", "no longer sent", "-.gone_key", "result/success"} {
		if !strings.Contains(out, want) {
			t.Errorf("drift report lacks %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(work, "banana.txt")); err != nil || string(b) != "banana\n" {
		t.Errorf("the recorded allow did not let the live Write run: %q %v", b, err)
	}
	code, out, errs, _ = check("--update")
	if code != 0 || !strings.Contains(errs, "updated") {
		t.Fatalf("--update: exit %d\n%s\nstderr: %s", code, out, errs)
	}
	if h := headerOf(t, rec); h.AgentVersion != version {
		t.Errorf("--update wrote agent_version %q, the CLI is %s", h.AgentVersion, version)
	}
	b, _ := os.ReadFile(rec)
	if strings.Contains(string(b), "brand_new_event") || strings.Contains(string(b), work) {
		t.Errorf("--update left the drift or the temporary directory in the file")
	}
	if !strings.Contains(string(b), `"cwd":"`+fixtureProject+`"`) {
		t.Errorf("--update did not keep the recorded cwd")
	}
	if code, out, errs, _ = check(); code != 0 {
		t.Errorf("after --update: exit %d\n%s\nstderr: %s", code, out, errs)
	}
}
