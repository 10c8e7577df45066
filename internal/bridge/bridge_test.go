package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/syncio"
	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

func TestMain(m *testing.M) {
	if sc := os.Getenv(fakeagent.Scenario); sc != "" {
		os.Exit(fakeagent.Main(sc))
	}
	os.Exit(m.Run())
}

type run struct {
	stdout, stderr string
	rep            Report
	log            string
}

// session runs the test binary as a fake agent playing scenario.
func runFake(t *testing.T, scenario string, stdin string, tweak func(*Options)) run {
	t.Helper()
	livetest.SkipShort(t, "runs this test binary as the agent")
	logPath := filepath.Join(t.TempDir(), "fake.log")
	var out, errb syncio.Buffer
	opts := Options{
		Profile: Profiles["claude"],
		Path:    os.Args[0],
		Env:     append(os.Environ(), "AGENTJQ_FAKE_AGENT="+scenario, "AGENTJQ_FAKE_LOG="+logPath),
		Stdin:   strings.NewReader(stdin),
		Stdout:  &out,
		Stderr:  &errb,
		Grace:   500 * time.Millisecond,
	}
	if tweak != nil {
		tweak(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := Run(ctx, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	logb, _ := os.ReadFile(logPath)
	return run{out.String(), errb.String(), rep, string(logb)}
}

// agentLines are the stdout lines that are not agentjq's own events.
func agentLines(stdout string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if l != "" && !strings.HasPrefix(l, `{"type":"agentjq"`) {
			lines = append(lines, l)
		}
	}
	return lines
}

func events(t *testing.T, stdout, subtype string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, l := range strings.Split(stdout, "\n") {
		if !strings.HasPrefix(l, `{"type":"agentjq"`) {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("agentjq event is not JSON: %s", l)
		}
		if m["subtype"] == subtype {
			evs = append(evs, m)
		}
	}
	return evs
}

// responses are the control_response lines the fake agent received.
func responses(log string) map[string]map[string]any {
	got := map[string]map[string]any{}
	for _, l := range strings.Split(log, "\n") {
		l = strings.TrimPrefix(l, "IN ")
		var m struct {
			Type     string         `json:"type"`
			Response map[string]any `json:"response"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Type == "control_response" {
			id, _ := m.Response["request_id"].(string)
			if _, dup := got[id]; dup {
				got[id+"#dup"] = m.Response
			}
			got[id] = m.Response
		}
	}
	return got
}

// TestContractCaptures replays every capture through a fake agent: the
// stdout is the capture byte for byte, and every control request in it is
// answered exactly once, as the default (no approver) chain must.
func TestContractCaptures(t *testing.T) {
	for _, name := range fixtures.Scenarios() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := fixtures.Capture(name, "out")
			if err != nil {
				t.Fatal(err)
			}
			r := runFake(t, "capture:"+name, "go\n", nil)
			got := strings.Join(agentLines(r.stdout), "\n") + "\n"
			if got != string(want) {
				t.Errorf("stdout differs from the capture (%d vs %d bytes)", len(got), len(want))
			}
			if strings.Contains(r.log, "STDIN CLOSED WHILE") {
				t.Errorf("agentjq closed the agent's stdin with a request pending:\n%s", r.log)
			}
			resp := responses(r.log)
			for _, line := range bytes.Split(bytes.TrimSpace(want), []byte("\n")) {
				env, err := protocol.DecodeEnvelope(line)
				if err != nil || env.Type != protocol.TypeControlRequest {
					continue
				}
				sub := env.ControlSubtype()
				got, ok := resp[env.RequestID]
				if !ok {
					t.Errorf("%s %s: never answered", sub, env.RequestID)
					continue
				}
				if _, dup := resp[env.RequestID+"#dup"]; dup {
					t.Errorf("%s %s: answered twice", sub, env.RequestID)
				}
				switch sub {
				case protocol.SubCanUseTool:
					body, _ := got["response"].(map[string]any)
					if got["subtype"] != "success" || body["behavior"] != "deny" || body["message"] == "" {
						t.Errorf("can_use_tool %s: want a deny with a message, got %v", env.RequestID, got)
					}
					var req protocol.CanUseTool
					json.Unmarshal(env.Request, &req)
					wantMsg := approve.NoApprover
					if req.IsQuestion() {
						wantMsg = approve.NoOneToAnswer
					}
					if body["message"] != wantMsg {
						t.Errorf("can_use_tool %s (%s): message %q, want %q", env.RequestID, req.ToolName, body["message"], wantMsg)
					}
				case protocol.SubHookCallback, protocol.SubMCPMessage:
					if got["subtype"] != "error" || got["error"] == "" {
						t.Errorf("%s %s: want an error response, got %v", sub, env.RequestID, got)
					}
				}
			}
			if n := len(events(t, r.stdout, "exit")); n != 1 {
				t.Errorf("want one exit event, got %d", n)
			}
		})
	}
}

func TestUnknownSubtypeGetsError(t *testing.T) {
	r := runFake(t, "unknown-subtype", "hi\n", nil)
	got := responses(r.log)["x-1"]
	if got == nil || got["subtype"] != "error" || got["error"] != "Unsupported control request subtype: brand_new_thing" {
		t.Fatalf("unknown subtype answered %v", got)
	}
	if r.rep.Outcome != protocol.OutcomeSuccess {
		t.Errorf("outcome %s, want success", r.rep.Outcome)
	}
	if len(events(t, r.stdout, "warning")) == 0 {
		t.Error("no warning event for the unknown subtype")
	}
}

func TestApproverAllowCarriesUpdatedInput(t *testing.T) {
	allow := approve.DeciderFunc(func(_ context.Context, req *approve.Request) (approve.Verdict, error) {
		if req.IsQuestion() {
			return approve.Verdict{}, nil
		}
		return approve.Verdict{Behavior: protocol.Allow, Source: protocol.ByRules, Rule: "Write"}, nil
	})
	r := runFake(t, "capture:write-allow", "go\n", func(o *Options) { o.Approver = allow })
	resp := responses(r.log)["ee25409c-b461-406a-9d17-8717dbd9e419"]
	body, _ := resp["response"].(map[string]any)
	if body["behavior"] != "allow" {
		t.Fatalf("want allow, got %v", resp)
	}
	in, _ := json.Marshal(body["updatedInput"])
	if string(in) != `{"content":"banana\n","file_path":"/home/user/project/banana.txt"}` {
		t.Errorf("updatedInput %s, want the original input", in)
	}
	dec := events(t, r.stdout, "decision")
	if len(dec) != 1 || dec[0]["behavior"] != "allow" || dec[0]["decided_by"] != "rules" || dec[0]["rule"] != "Write" || dec[0]["tool"] != "Write" {
		t.Errorf("decision events %v", dec)
	}
	if r.rep.Outcome != protocol.OutcomeSuccess || r.rep.ExitCode != 0 {
		t.Errorf("outcome %s/%d, want success/0", r.rep.Outcome, r.rep.ExitCode)
	}
}

func TestDenialOutcome(t *testing.T) {
	r := runFake(t, "capture:write-deny", "go\n", nil)
	if r.rep.Outcome != protocol.OutcomeDenied || r.rep.ExitCode != protocol.ExitDenied {
		t.Errorf("outcome %s/%d, want denied/%d", r.rep.Outcome, r.rep.ExitCode, protocol.ExitDenied)
	}
	// agentjq's deny and the result's permission_denials are one call.
	if r.rep.Denials != 1 {
		t.Errorf("denials %d, want 1", r.rep.Denials)
	}
}

func TestErrorOutcomes(t *testing.T) {
	for name, want := range map[string]protocol.Outcome{
		"max-turns": protocol.OutcomeError,
		"api-error": protocol.OutcomeError,
		"hello":     protocol.OutcomeSuccess,
	} {
		r := runFake(t, "capture:"+name, "go\n", nil)
		if r.rep.Outcome != want {
			t.Errorf("%s: outcome %s, want %s", name, r.rep.Outcome, want)
		}
	}
}

func TestApprovalWithdrawnSendsNothing(t *testing.T) {
	// The interrupt capture's agent cancels nothing, so drive a handler
	// directly: a decider that blocks until its context ends.
	block := approve.DeciderFunc(func(ctx context.Context, _ *approve.Request) (approve.Verdict, error) {
		<-ctx.Done()
		return approve.Verdict{}, ctx.Err()
	})
	r := runFake(t, "capture:write-allow", "go\n", func(o *Options) {
		o.Approver = block
		o.ApprovalTimeout = 200 * time.Millisecond
	})
	resp := responses(r.log)["ee25409c-b461-406a-9d17-8717dbd9e419"]
	body, _ := resp["response"].(map[string]any)
	if body["behavior"] != "deny" || !strings.Contains(body["message"].(string), "--approval-timeout") {
		t.Errorf("a timed-out approval answered %v", resp)
	}
	dec := events(t, r.stdout, "decision")
	if len(dec) != 1 || dec[0]["decided_by"] != "timeout" {
		t.Errorf("decision %v", dec)
	}
}

func TestStdinLines(t *testing.T) {
	in := "first turn\r\n\n   \n{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"json turn\"},\"parent_tool_use_id\":null,\"session_id\":\"\"}\n{not json\nlast turn"
	r := runFake(t, "echo-turns", in, nil)
	var sent []string
	for _, l := range strings.Split(r.log, "\n") {
		if strings.HasPrefix(l, "IN ") {
			sent = append(sent, stripTurnID(t, strings.TrimPrefix(l, "IN ")))
		}
	}
	want := []string{
		`{"type":"user","message":{"role":"user","content":"first turn"},"parent_tool_use_id":null,"session_id":""}`,
		`{"type":"user","message":{"role":"user","content":"json turn"},"parent_tool_use_id":null,"session_id":""}`,
		`{"type":"user","message":{"role":"user","content":"last turn"},"parent_tool_use_id":null,"session_id":""}`,
	}
	if strings.Join(sent, "\n") != strings.Join(want, "\n") {
		t.Errorf("sent to the agent:\n%s\nwant:\n%s", strings.Join(sent, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(r.stderr, "stdin:5: invalid JSON") {
		t.Errorf("stderr does not name the bad line: %q", r.stderr)
	}
	if r.rep.Outcome != protocol.OutcomeSuccess || r.rep.Turns != 3 {
		t.Errorf("outcome %s, turns %d", r.rep.Outcome, r.rep.Turns)
	}
}

// uuidField is the id agentjq adds to each turn it sends (turns.go).
var uuidField = regexp.MustCompile(`,"uuid":"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"}$`)

// stripTurnID removes the uuid agentjq adds to a user turn written while
// another is in flight.
func stripTurnID(t *testing.T, line string) string {
	t.Helper()
	if !strings.HasPrefix(line, `{"type":"user"`) {
		return line
	}
	return uuidField.ReplaceAllString(line, "}")
}

func TestEchoWritesTurns(t *testing.T) {
	r := runFake(t, "echo-turns", "hello\n", func(o *Options) { o.Echo = true })
	if !strings.HasPrefix(r.stdout, `{"type":"user","message":{"role":"user","content":"hello"}`) {
		t.Errorf("--echo did not write the turn first: %q", r.stdout)
	}
}

func TestInterruptOnSIGINT(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	stdinR, stdinW, _ := os.Pipe()
	defer stdinW.Close()
	start := time.Now()
	r := runFake(t, "interruptible", "", func(o *Options) {
		o.Stdin, o.Signals = stdinR, sigs
		go func() {
			// SIGINT once the agent has the turn: it interrupts the turn.
			stdinW.Write([]byte("please SLEEP\n"))
			waitLogged(fakeLog(o.Env), "please SLEEP", 10*time.Second)
			sigs <- syscall.SIGINT
		}()
	})
	if r.rep.Outcome != protocol.OutcomeInterrupted || r.rep.ExitCode != 130 {
		t.Errorf("outcome %s/%d, want interrupted/130", r.rep.Outcome, r.rep.ExitCode)
	}
	if !strings.Contains(r.log, `"subtype":"interrupt"`) {
		t.Errorf("no interrupt control request reached the agent:\n%s", r.log)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestTimeoutAndIdle(t *testing.T) {
	r := runFake(t, "ignore-everything", "hi\n", func(o *Options) { o.Timeout = 300 * time.Millisecond })
	if r.rep.Outcome != protocol.OutcomeTimeout || r.rep.ExitCode != 124 {
		t.Errorf("timeout: outcome %s/%d", r.rep.Outcome, r.rep.ExitCode)
	}
	r = runFake(t, "ignore-everything", "hi\n", func(o *Options) { o.IdleTimeout = 300 * time.Millisecond })
	if r.rep.Outcome != protocol.OutcomeStalled || r.rep.ExitCode != protocol.ExitStalled {
		t.Errorf("idle: outcome %s/%d", r.rep.Outcome, r.rep.ExitCode)
	}
}

// TestIdleAgentSignalledAtEndIsNoCrash: an agent whose stdin has closed
// (the session's normal end) and that dies of SIGTERM while idle, as an
// ACP client that signals the whole process tree leaves it (acpx), lost
// no turn: not a crash. The same death with a turn in flight is one.
func TestIdleAgentSignalledAtEndIsNoCrash(t *testing.T) {
	r := runFake(t, "term-at-eof", `{"type":"user","message":{"role":"user","content":"hi"}}`+"\n", nil)
	if r.rep.Outcome != protocol.OutcomeSuccess || r.rep.Turns != 1 || strings.Contains(r.rep.Err, "in flight") {
		t.Errorf("outcome %s/%d turns %d err %q, want success", r.rep.Outcome, r.rep.ExitCode, r.rep.Turns, r.rep.Err)
	}
	if r.rep.Signal != "terminated" {
		t.Errorf("the agent's signal %q, want it reported (terminated)", r.rep.Signal)
	}
}

func TestCrashKeepsStderrTailAndWarnsVersion(t *testing.T) {
	r := runFake(t, "crash", "hi\n", nil)
	if r.rep.Outcome != protocol.OutcomeCrashed || r.rep.ExitCode != protocol.ExitCrashed {
		t.Errorf("outcome %s/%d", r.rep.Outcome, r.rep.ExitCode)
	}
	if !strings.Contains(r.rep.Err, "the fake agent fell over") {
		t.Errorf("error lacks the stderr tail: %q", r.rep.Err)
	}
	w := events(t, r.stdout, "warning")
	if len(w) != 1 || w[0]["code"] != protocol.WarnVersion {
		t.Errorf("want one version_drift warning, got %v", w)
	}
	if !strings.Contains(r.stderr, "9.9.9") {
		t.Errorf("stderr lacks the version warning: %q", r.stderr)
	}
}

func TestGrandchildHoldingStdoutDoesNotHang(t *testing.T) {
	start := time.Now()
	r := runFake(t, "grandchild", "hi\n", nil)
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %s", d)
	}
	var pid int
	for _, l := range strings.Split(r.log, "\n") {
		if strings.HasPrefix(l, "GRANDCHILD ") {
			pid, _ = strconv.Atoi(strings.TrimPrefix(l, "GRANDCHILD "))
		}
	}
	if pid == 0 {
		t.Fatalf("no grandchild pid in log:\n%s", r.log)
	}
	if waitDead(pid, 2*time.Second) != nil {
		t.Errorf("grandchild %d outlived the session", pid)
	}
}

// fakeLog is the fake agent's log file named in env.
func fakeLog(env []string) string {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, fakeagent.Log+"="); ok {
			path = v
		}
	}
	return path
}

// waitLogged waits until the fake agent's log holds s; false after d.
func waitLogged(path, s string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), s) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitDead waits for pid to die: a signal takes a moment to land.
func waitDead(pid int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for alive(pid) {
		if time.Now().After(deadline) {
			return os.ErrDeadlineExceeded
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// alive reports whether pid is a live process (a zombie counts as dead).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

func TestBigLinesPassUnchanged(t *testing.T) {
	for _, n := range []int{3 << 20, 64 << 20} {
		if n > 8<<20 && testing.Short() {
			continue
		}
		// The grace bounds how long the end waits for the pump: checking a
		// 64 MiB line under -race on a busy machine can take longer than
		// the tests' usual half second.
		r := runFake(t, "bigline:"+strconv.Itoa(n), "hi\n", func(o *Options) { o.Grace = 10 * time.Second })
		lines := agentLines(r.stdout)
		if len(lines) != 2 || len(lines[0]) < n || !json.Valid([]byte(lines[0])) {
			t.Fatalf("%d-byte line: got %d lines", n, len(lines))
		}
	}
}

func TestClosedStdoutShutsDown(t *testing.T) {
	opts := func(o *Options) { o.Stdout = failingWriter{} }
	r := runFake(t, "capture:hello", "hi\n", opts)
	if r.rep.Outcome != protocol.OutcomeClosed {
		t.Errorf("outcome %s", r.rep.Outcome)
	}
	if strings.Count(r.stderr, "\n") > 2 {
		t.Errorf("error flood on stderr: %q", r.stderr)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

func TestCheckAgentArgs(t *testing.T) {
	bad := [][]string{
		{"--output-format", "json"},
		{"--output-format=text"},
		{"--input-format", "text"},
		{"--permission-prompt-tool", "mcp__x__y"},
		{"-p", "hello"},
		{"--print"},
	}
	for _, a := range bad {
		if CheckAgentArgs(Profiles["claude"], a) == nil {
			t.Errorf("%q accepted", a)
		}
	}
	good := [][]string{{"--output-format", "stream-json"}, {"--add-dir", "/tmp"}, {"--mcp-config", "x.json"}}
	for _, a := range good {
		if err := CheckAgentArgs(Profiles["claude"], a); err != nil {
			t.Errorf("%q refused: %v", a, err)
		}
	}
}

func TestCommand(t *testing.T) {
	flags := PassFlags{Model: "m", MaxTurns: 2, Partial: true}
	path, args := Command(Profiles["claude"], "/bin/claude", "linux", flags, []string{"--add-dir", "x"})
	want := "--input-format stream-json --output-format stream-json --verbose --permission-prompt-tool stdio --model m --max-turns 2 --include-partial-messages --add-dir x"
	if path != "/bin/claude" || strings.Join(args, " ") != want {
		t.Errorf("claude: %s %q", path, args)
	}
	path, args = Command(Profiles["context"], `C:\npm\context.cmd`, "windows", PassFlags{Model: "m"}, nil)
	want = `/C C:\npm\context.cmd -p --output-format stream-json --verbose --input-format stream-json --model m`
	if path != "cmd" || strings.Join(args, " ") != want {
		t.Errorf("context on windows: %s %q", path, args)
	}
	path, _ = Command(Profiles["context"], `C:\bin\context.exe`, "windows", PassFlags{}, nil)
	if path != `C:\bin\context.exe` {
		t.Errorf("an .exe must run directly, got %s", path)
	}
}

func TestChildEnv(t *testing.T) {
	env := ChildEnv([]string{"PATH=/bin", "CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", "CLAUDE_CODE_SSE_PORT=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=2", "HOME=/h"})
	want := "PATH=/bin CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_MAX_RETRIES=2 HOME=/h"
	if strings.Join(env, " ") != want {
		t.Errorf("ChildEnv = %q", env)
	}
}

// TestTapSeesEveryLineInOrder: a tap sees each agent line once, in
// order, plain and routed alike, and the answer to a control request
// after the request; stdout is unchanged by the tap.
func TestTapSeesEveryLineInOrder(t *testing.T) {
	for _, name := range fixtures.Scenarios() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := fixtures.Capture(name, "out")
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var taps []string // "dir line"
			r := runFake(t, "capture:"+name, "go\n", func(o *Options) {
				o.Tap = func(dir protocol.Direction, line []byte, known protocol.Known) {
					// What the bridge says it knows of an agent line is what
					// Scan finds (a recorder trusts it and skips its own look).
					if h, _ := protocol.Scan(line); dir == protocol.DirOut && known != h.Known || dir != protocol.DirOut && known != 0 {
						t.Errorf("tap %s %.60s: known %b, Scan says %b", dir, line, known, h.Known)
					}
					mu.Lock()
					taps = append(taps, string(dir)+" "+string(line))
					mu.Unlock()
				}
			})
			got := strings.Join(agentLines(r.stdout), "\n") + "\n"
			if got != string(want) {
				t.Errorf("stdout differs from the capture (%d vs %d bytes)", len(got), len(want))
			}
			mu.Lock()
			defer mu.Unlock()
			var outs []string
			seen := map[string]int{} // request id -> index of its Out tap
			for i, tp := range taps {
				dir, line, _ := strings.Cut(tp, " ")
				env, err := protocol.DecodeEnvelope([]byte(line))
				switch dir {
				case string(protocol.DirOut):
					outs = append(outs, line)
					if err == nil && env.Type == protocol.TypeControlRequest {
						seen[env.RequestID] = i
					}
				case string(protocol.DirIn):
					if err == nil && env.Type == protocol.TypeControlResp {
						if at, ok := seen[env.ResponseID()]; !ok || at > i {
							t.Errorf("answer to %s tapped before its request", env.ResponseID())
						}
					}
				}
			}
			if w := strings.Join(outs, "\n") + "\n"; w != string(want) {
				t.Errorf("the tap's agent lines differ from the capture (%d vs %d bytes)", len(w), len(want))
			}
		})
	}
}

// TestSlowTapKeepsTheAgentsLastLines: the agent writes more than a pipe
// holds and exits at once, while the tap (a recorder) takes longer than
// the grace to see the lines. The pump is busy, not waiting on a pipe a
// grandchild holds, so nothing is cut off: every line reaches the tap and
// stdout, and the result ends the turn (exit 0, not "crashed").
func TestSlowTapKeepsTheAgentsLastLines(t *testing.T) {
	const n = 4000
	var mu sync.Mutex
	tapped := 0
	r := runFake(t, "burst-exit:"+strconv.Itoa(n), "go\n", func(o *Options) {
		o.Grace = 300 * time.Millisecond
		o.Tap = func(dir protocol.Direction, line []byte, _ protocol.Known) {
			if dir == protocol.DirOut {
				mu.Lock()
				tapped++
				slow := tapped%3 == 0
				mu.Unlock()
				if slow {
					// What agentjq holds when the agent exits (the pipe's
					// MiB and the chunks read ahead) takes about two graces.
					time.Sleep(time.Millisecond)
				}
			}
		}
	})
	if r.rep.ExitCode != 0 || r.rep.Outcome != protocol.OutcomeSuccess {
		t.Fatalf("exit %d (%s): %s", r.rep.ExitCode, r.rep.Outcome, r.stderr)
	}
	if got := len(agentLines(r.stdout)); got != n+1 {
		t.Errorf("stdout has %d of %d agent lines", got, n+1)
	}
	mu.Lock()
	defer mu.Unlock()
	if tapped != n+1 {
		t.Errorf("the tap saw %d of %d lines", tapped, n+1)
	}
}
