package cmd

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/fixtures"
	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/recording"
	"github.com/agentjq/agentjq/redact"
)

// hostIO is an IO whose agent is this test binary playing scenario; the
// returned path is the fake agent's log of its stdin.
func hostIO(t *testing.T, scenario, stdin string) (*iostreams.IO, *bytes.Buffer, *bytes.Buffer, string) {
	t.Helper()
	ios, in, out, errb := iostreams.Test()
	in.WriteString(stdin)
	logPath := filepath.Join(t.TempDir(), "fake.log")
	ios.Environ = append(os.Environ(), fakeagent.Scenario+"="+scenario,
		fakeagent.Log+"="+logPath, "AGENTJQ_GRACE=500ms")
	return ios, out, errb, logPath
}

// controlLines are the control messages in NDJSON text (a capture's .in
// or the fake agent's log), keyed by request id.
func controlLines(t *testing.T, text string) (requests, responses map[string]map[string]any) {
	t.Helper()
	requests, responses = map[string]map[string]any{}, map[string]map[string]any{}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimPrefix(l, "IN ")
		var m struct {
			Type      string         `json:"type"`
			RequestID string         `json:"request_id"`
			Request   map[string]any `json:"request"`
			Response  map[string]any `json:"response"`
		}
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		switch m.Type {
		case "control_request":
			requests[m.RequestID] = m.Request
		case "control_response":
			id, _ := m.Response["request_id"].(string)
			if _, dup := responses[id]; dup {
				t.Errorf("request %s answered twice", id)
			}
			responses[id] = m.Response
		}
	}
	return requests, responses
}

// captureAnswers are the answers the capture's client gave, by request id.
func captureAnswers(t *testing.T, name string) map[string]map[string]any {
	t.Helper()
	in, err := fixtures.Capture(name, "in")
	if err != nil {
		t.Fatal(err)
	}
	_, answers := controlLines(t, string(in))
	return answers
}

// agentRequests are the control requests the capture's agent sent.
func agentRequests(t *testing.T, name string) map[string]map[string]any {
	t.Helper()
	out, err := fixtures.Capture(name, "out")
	if err != nil {
		t.Fatal(err)
	}
	reqs, _ := controlLines(t, string(out))
	return reqs
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var va, vb any
	json.Unmarshal(ja, &va)
	json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb)
}

func readLog(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "STDIN CLOSED WHILE") {
		t.Errorf("the agent's stdin closed with a request pending:\n%s", b)
	}
	return string(b)
}

// ourInit is the initialize request agentjq sent.
func ourInit(t *testing.T, log string) map[string]any {
	t.Helper()
	reqs, _ := controlLines(t, log)
	for id, r := range reqs {
		if strings.HasPrefix(id, "agentjq-init-") {
			return r
		}
	}
	t.Fatalf("no initialize request sent:\n%s", log)
	return nil
}

// TestContractMCPServerRelay plays the mcp-ping capture against spawn
// --mcp-server probe=<a Go stdio MCP server>: every mcp_message is answered
// with what the capture's client answered.
func TestContractMCPServerRelay(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	ios, out, errb, logPath := hostIO(t, "capture:mcp-ping", "go\n")
	server := fakeagent.Scenario + "=mcp-server exec " + strconv.Quote(os.Args[0])
	code := Main([]string{"spawn", "--bin", os.Args[0], "--mcp-server", "probe=" + server}, ios)
	log := readLog(t, logPath)
	if code != 3 { // the default chain denies the ping: a denial
		t.Errorf("exit %d\nstderr: %s", code, errb)
	}
	init := ourInit(t, log)
	if !jsonEqual(init["sdkMcpServers"], []string{"probe"}) || !jsonEqual(init["hooks"], map[string]any{}) {
		t.Errorf("initialize %v", init)
	}
	_, got := controlLines(t, log)
	want := captureAnswers(t, "mcp-ping")
	n := 0
	for id, req := range agentRequests(t, "mcp-ping") {
		if req["subtype"] != "mcp_message" {
			continue
		}
		n++
		g, w := got[id], want[id]
		if g == nil {
			t.Errorf("%s: never answered", id)
			continue
		}
		method, _ := req["message"].(map[string]any)["method"].(string)
		if method == "tools/list" {
			// The test server has more tools; the captured one comes first.
			gt := g["response"].(map[string]any)["mcp_response"].(map[string]any)["result"].(map[string]any)["tools"].([]any)[0]
			wt := w["response"].(map[string]any)["mcp_response"].(map[string]any)["result"].(map[string]any)["tools"].([]any)[0]
			if !jsonEqual(gt, wt) {
				t.Errorf("tools/list: got %v want %v", gt, wt)
			}
			continue
		}
		if !jsonEqual(g, w) {
			t.Errorf("%s %s:\n got  %v\n want %v", id, method, g, w)
		}
	}
	if n != 4 {
		t.Errorf("%d mcp_message requests in the capture", n)
	}
	if !strings.Contains(out.String(), `"request_id":"agentjq-init-1"`) {
		t.Errorf("the initialize response did not reach stdout")
	}
}

// TestContractHookCallback plays the hook-callback capture against spawn
// --hook PreToolUse:Bash=<a command printing the captured answer>. The
// command holds commas and '=': it is taken whole.
func TestContractHookCallback(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	want := captureAnswers(t, "hook-callback")
	var answer []byte
	for _, w := range want {
		answer, _ = json.Marshal(w["response"])
	}
	ios, _, errb, logPath := hostIO(t, "capture:hook-callback", "go\n")
	code := Main([]string{"spawn", "--bin", os.Args[0], "--hook", "PreToolUse:Bash=printf '%s\\n' '" + string(answer) + "'"}, ios)
	log := readLog(t, logPath)
	if code != 0 {
		t.Errorf("exit %d\nstderr: %s", code, errb)
	}
	hooksReg, _ := json.Marshal(ourInit(t, log)["hooks"])
	if string(hooksReg) != `{"PreToolUse":[{"hookCallbackIds":["hook_0"],"matcher":"Bash","timeout":65}]}` {
		t.Errorf("hooks registered: %s", hooksReg)
	}
	_, got := controlLines(t, log)
	for id, req := range agentRequests(t, "hook-callback") {
		if req["subtype"] != "hook_callback" {
			continue
		}
		if !jsonEqual(got[id], want[id]) {
			t.Errorf("%s:\n got  %v\n want %v", id, got[id], want[id])
		}
	}
}

// TestHookBlocksInCapture: exit 2 from the hook denies the captured Bash
// call with stderr as the reason.
func TestHookBlocksInCapture(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	ios, _, errb, logPath := hostIO(t, "capture:hook-callback", "go\n")
	code := Main([]string{"spawn", "--bin", os.Args[0], "--hook", "PreToolUse:Bash=echo 'no shell today' >&2; exit 2"}, ios)
	log := readLog(t, logPath)
	if code != 0 {
		t.Errorf("exit %d\nstderr: %s", code, errb)
	}
	_, got := controlLines(t, log)
	for id, req := range agentRequests(t, "hook-callback") {
		if req["subtype"] != "hook_callback" {
			continue
		}
		want := map[string]any{"subtype": "success", "request_id": id, "response": map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no shell today"}}}
		if !jsonEqual(got[id], want) {
			t.Errorf("got %v", got[id])
		}
	}
}

// TestInitPassesThroughAndIsRedacted: --init's response reaches stdout
// whole, and a recording of it holds no account email or organization.
func TestInitPassesThroughAndIsRedacted(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	ios, out, errb, _ := hostIO(t, "init-account", "hi\n")
	rec := filepath.Join(t.TempDir(), "s.ndjson")
	if code := Main([]string{"record", "-o", rec, "--bin", os.Args[0], "--init"}, ios); code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, errb)
	}
	if !strings.Contains(out.String(), `"email":"alice@example.com"`) {
		t.Errorf("stdout lacks the initialize response:\n%s", out)
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "agentjq-init-1") {
		t.Errorf("the recording lacks the initialize exchange:\n%s", b)
	}
	for _, secret := range []string{"alice@example.com", "Acme Widgets Ltd"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the recording holds %q", secret)
		}
	}
}

func TestHostFlagUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	badSchema := filepath.Join(dir, "bad.json")
	os.WriteFile(badSchema, []byte(`[]`), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--hook", "PreToolUse"}, "want EVENT[:MATCHER]=COMMAND"},
		{[]string{"--hook", "BeforeTool:Bash=x"}, "unknown hook event"},
		{[]string{"--mcp-tool", "noequals"}, "want NAME=CMD"},
		{[]string{"--mcp-tool", "bad name=x"}, "a tool name is"},
		{[]string{"--mcp-tool", "a=x", "--mcp-tool", "a=y"}, "defined twice"},
		{[]string{"--mcp-tool", "a=x", "--mcp-tool-desc", "b=text"}, "no --mcp-tool of that name"},
		{[]string{"--mcp-tool", "a=x", "--mcp-tool-schema", "a=" + badSchema}, "not a JSON schema object"},
		{[]string{"--mcp-tool", "a=x", "--mcp-tool-schema", "a=" + filepath.Join(dir, "none.json")}, "--mcp-tool-schema a"},
		{[]string{"--mcp-tool", "a=x", "--mcp-server", "agentjq=y"}, "taken by the --mcp-tool tools"},
		{[]string{"--mcp-server", "p=x", "--mcp-server", "p=y"}, "defined twice"},
	}
	for _, c := range cases {
		ios, _, errb, _ := hostIO(t, "echo-turns", "")
		code := Main(append([]string{"spawn", "--bin", os.Args[0]}, c.args...), ios)
		if code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, errb, c.want)
		}
	}
}

// TestHangingHookIsAnswered: a hook past --hook-timeout is killed and
// answered (no opinion, with a systemMessage), never left silent.
func TestHangingHookIsAnswered(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	ios, _, errb, logPath := hostIO(t, "capture:hook-callback", "go\n")
	code := Main([]string{"spawn", "--bin", os.Args[0], "--hook-timeout", "300ms", "--hook", "PreToolUse:Bash=sleep 60"}, ios)
	log := readLog(t, logPath)
	if code != 0 {
		t.Errorf("exit %d\nstderr: %s", code, errb)
	}
	hooksReg, _ := json.Marshal(ourInit(t, log)["hooks"])
	if !strings.Contains(string(hooksReg), `"timeout":6`) {
		t.Errorf("the agent was not told the hook's time limit: %s", hooksReg)
	}
	_, got := controlLines(t, log)
	for id, req := range agentRequests(t, "hook-callback") {
		if req["subtype"] != "hook_callback" {
			continue
		}
		want := map[string]any{"subtype": "success", "request_id": id, "response": map[string]any{
			"systemMessage": "agentjq: hook timed out and was killed; treated as no opinion"}}
		if !jsonEqual(got[id], want) {
			t.Errorf("got %v", got[id])
		}
	}
	if !strings.Contains(errb.String(), "agentjq: hook PreToolUse:Bash: timed out") {
		t.Errorf("stderr %q", errb)
	}
}

// TestRecordRedactsBurst: with the built-in redaction only, the fake agent
// writes its secrets in one burst after the line that names the account:
// none reaches the recording, and stdout still gets every line byte for
// byte.
func TestRecordRedactsBurst(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	ios, out, errb, _ := hostIO(t, "secrets", "")
	rec := filepath.Join(t.TempDir(), "s.ndjson")
	if code := Main([]string{"spawn", "--record", rec, "--bin", os.Args[0], "-p", "hi"}, ios); code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, errb)
	}
	if !strings.HasPrefix(out.String(), fakeagent.SecretsStream()) {
		t.Errorf("stdout does not start with the agent's stream byte for byte:\n%s", out)
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range fakeagent.Secrets {
		if strings.Contains(string(b), secret) {
			t.Errorf("the recording holds %q", secret)
		}
	}
	for _, kind := range []string{"email", "organization", "anthropic-api-key", "aws-access-key", "github-token", "bearer-token"} {
		if !strings.Contains(string(b), redact.Placeholder(kind)) {
			t.Errorf("no %s placeholder in the recording", kind)
		}
	}
	if strings.Contains(string(b), `\u0041KIAIOSFODNN7`) {
		t.Error("the escaped AWS key survived")
	}
	if n := strings.Count(string(b), "filler "); n != 400 {
		t.Errorf("the recording holds %d of the 400 plain events", n)
	}
}

// TestRecordSurvivesSIGKILL: agentjq killed with SIGKILL while recording a
// flood of events (fast enough for the recorder's big batches) leaves a recording whose complete lines
// are all valid, in sequence; the reader accepts it, a cut-off last line
// with a warning.
func TestRecordSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "builds and runs agentjq")
	bin := buildAgentjq(t)
	rec := filepath.Join(t.TempDir(), "s.rec")
	cmd := exec.Command(bin, "spawn", "--record", rec, "--bin", os.Args[0], "-p", "go")
	cmd.Env = append(os.Environ(), fakeagent.Scenario+"=flood")
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if st, err := os.Stat(rec); err == nil && st.Size() > 48<<20 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the recording did not reach 48 MiB in 30 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(b, []byte("\n"))
	last := lines[len(lines)-1] // "" after a final newline, else cut off
	for i, l := range lines[:len(lines)-1] {
		if !json.Valid(l) {
			t.Fatalf("line %d of %d is not valid JSON: %.200q", i+1, len(lines)-1, l)
		}
	}
	var warnings []error
	_, entries, err := recording.ReadAll(bytes.NewReader(b), "test.rec", func(w error) { warnings = append(warnings, w) })
	if err != nil {
		t.Fatal(err)
	}
	if len(last) > 0 && len(warnings) == 0 {
		t.Errorf("a cut-off last line and no warning")
	}
	for i, e := range entries {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d", i+1, e.Seq)
		}
	}
	if len(entries) < 1000 {
		t.Errorf("only %d entries", len(entries))
	}
}

// Hook commands do not inherit the agent's credentials unless
// --pass-credentials; the agent itself always does.
func TestHostedCommandsGetNoCredentials(t *testing.T) {
	t.Parallel()
	for _, pass := range []bool{false, true} {
		ios, _, errb, _ := hostIO(t, "capture:hook-callback", "go\n")
		ios.Environ = append(ios.Environ, "ANTHROPIC_API_KEY=sk-ant-secret-xyz", "AWS_SECRET_ACCESS_KEY=aws-secret-xyz", "CLAUDE_CODE_OAUTH_TOKEN=oauth-xyz")
		envFile := filepath.Join(t.TempDir(), "env")
		args := []string{"spawn", "--bin", os.Args[0], "--hook", "PreToolUse:Bash=env > " + envFile}
		if pass {
			args = append(args, "--pass-credentials")
		}
		if code := Main(args, ios); code != 0 {
			t.Fatalf("exit %d\nstderr: %s", code, errb)
		}
		env, err := os.ReadFile(envFile)
		if err != nil {
			t.Fatalf("the hook did not run: %v", err)
		}
		for _, secret := range []string{"sk-ant-secret-xyz", "aws-secret-xyz", "oauth-xyz"} {
			if got := strings.Contains(string(env), secret); got != pass {
				t.Errorf("pass-credentials %v: hook env holds %s: %v", pass, secret, got)
			}
		}
		if !strings.Contains(string(env), "PATH=") {
			t.Errorf("the hook lost its ordinary environment")
		}
	}
}
