package cmd

// Live tests of agentjq acp: the official ACP TypeScript SDK as the
// client (testdata/acp/driver.mjs, which validates every message both ways
// against ACP's schema), agentjq acp built as a binary, and the real claude
// CLI offline against the scripted Messages API.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
)

// nodeModules is where .ci/run installs the Node clients.
func nodeModules(t *testing.T) string {
	t.Helper()
	nm := os.Getenv("AGENTJQ_NODE_MODULES")
	if nm == "" {
		home, _ := os.UserHomeDir()
		nm = filepath.Join(home, ".cache", "agentjq", "node-clients", "node_modules")
	}
	_, err := exec.LookPath("node")
	for _, p := range []string{"@agentclientprotocol/sdk/schema/v1/schema.json", "ajv/dist/2020.js"} {
		if _, serr := os.Stat(filepath.Join(nm, p)); serr != nil && err == nil {
			err = serr
		}
	}
	if err != nil {
		msg := "node or the ACP SDK and ajv not installed (run .ci/run's npm install): " + err.Error()
		if os.Getenv("AGENTJQ_REQUIRE_LIVE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return nm
}

type acpWorld struct {
	t      *testing.T
	bin    string
	claude string
	nm     string
	api    *apistub.Server
	dir    string // the session's cwd
	env    []string
}

func newACPWorld(t *testing.T) *acpWorld {
	t.Helper()
	claude := livetest.Claude(t)
	nm := nodeModules(t)
	w := &acpWorld{t: t, bin: buildAgentjq(t), claude: claude, nm: nm, api: apistub.Start(t), dir: livetest.Workdir(t)}
	w.env = append(livetest.Env(t, w.api.URL()), "AGENTJQ_NODE_MODULES="+nm, "AGENTJQ_GRACE=2s")
	return w
}

type acpReport struct {
	Updates     []map[string]any           `json:"updates"`
	Permissions []map[string]any           `json:"permissions"`
	Results     map[string]json.RawMessage `json:"results"`
	Errors      map[string]map[string]any  `json:"errors"`
	Invalid     []map[string]any           `json:"invalid"`
	Messages    int                        `json:"messages"`
	Exit        any                        `json:"exit"`
	AtLoad      int                        `json:"updatesAtLoad"`
	Aborted     int                        `json:"aborted"`
}

// run runs the driver's scenario against agentjq acp with acpArgs.
func (w *acpWorld) run(scenario string, env map[string]string, acpArgs ...string) acpReport {
	t := w.t
	t.Helper()
	argv := append([]string{w.bin, "acp", "--bin", w.claude, "--timeout", "90s"}, acpArgs...)
	cmdJSON, _ := json.Marshal(argv)
	c := exec.Command("node", filepath.Join("testdata", "acp", "driver.mjs"), scenario)
	c.Env = append(append([]string(nil), w.env...), "ACP_CMD="+string(cmdJSON), "ACP_CWD="+w.dir)
	for k, v := range env {
		c.Env = append(c.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("driver %s: %v\nstderr:\n%s", scenario, err, errb.String())
		}
	case <-time.After(120 * time.Second):
		c.Process.Kill()
		t.Fatalf("driver %s hung\nstderr:\n%s", scenario, errb.String())
	}
	var r acpReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("driver report: %v\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	t.Logf("%s: %d messages, stderr:\n%s", scenario, r.Messages, errb.String())
	if len(r.Invalid) > 0 {
		t.Errorf("%s: %d messages do not validate against ACP's schema: %v", scenario, len(r.Invalid), r.Invalid)
	}
	if r.Messages == 0 {
		t.Errorf("%s: no messages validated", scenario)
	}
	if r.Exit != float64(0) {
		t.Errorf("%s: agentjq acp exited %v", scenario, r.Exit)
	}
	return r
}

func (r acpReport) stopReason(t *testing.T, name string) string {
	t.Helper()
	var p struct {
		StopReason string `json:"stopReason"`
	}
	if raw, ok := r.Results[name]; ok {
		json.Unmarshal(raw, &p)
		return p.StopReason
	}
	t.Errorf("%s: no result (error %v)", name, r.Errors[name])
	return ""
}

func (r acpReport) kinds() []string {
	var k []string
	for _, u := range r.Updates {
		k = append(k, u["sessionUpdate"].(string))
	}
	return k
}

// chunks is the text of the updates of one kind, in order.
func (r acpReport) chunks(kind string) (n int, text string) {
	for _, u := range r.Updates {
		if u["sessionUpdate"] == kind {
			n++
			if c, ok := u["content"].(map[string]any); ok {
				text += c["text"].(string)
			}
		}
	}
	return n, text
}

func TestLiveACPHello(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	r := w.run("hello", nil)
	var init struct {
		ProtocolVersion   int `json:"protocolVersion"`
		AgentCapabilities struct {
			LoadSession bool `json:"loadSession"`
		} `json:"agentCapabilities"`
	}
	json.Unmarshal(r.Results["initialize"], &init)
	if init.ProtocolVersion != 1 || init.AgentCapabilities.LoadSession {
		t.Errorf("initialize: %s (want version 1, no loadSession without --record-dir)", r.Results["initialize"])
	}
	if got := r.stopReason(t, "prompt"); got != "end_turn" {
		t.Errorf("stopReason %q, want end_turn", got)
	}
	n, text := r.chunks("agent_message_chunk")
	if n < 2 || text != "Hello from the scripted model." {
		t.Errorf("agent_message_chunk: %d chunks %q; want the text streamed in several", n, text)
	}
	t.Logf("updates: %v", r.kinds())
	if !strings.Contains(strings.Join(r.kinds(), " "), "available_commands_update") {
		t.Errorf("no available_commands_update among %v", r.kinds())
	}
}

// TestLiveACPWrites: the policy allows one Write; the others it leaves to
// the editor, which answers allow_once and reject_once.
func TestLiveACPWrites(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	policy := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(policy, []byte(`{"allow": ["Write(apple.txt)"], "default": "ask"}`), 0o644)
	r := w.run("writes", map[string]string{"ACP_PROMPTS": "WRITE apple,WRITE pear,WRITE plum", "ACP_ANSWERS": "allow_once,reject_once"}, "--policy", policy)
	for i := range 3 {
		if got := r.stopReason(t, "prompt"+string(rune('0'+i))); got != "end_turn" {
			t.Errorf("prompt %d: stopReason %q", i, got)
		}
	}
	for name, want := range map[string]bool{"apple.txt": true, "pear.txt": true, "plum.txt": false} {
		_, err := os.Stat(filepath.Join(w.dir, name))
		if (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", name, err == nil, want)
		}
	}
	if len(r.Permissions) != 2 {
		t.Fatalf("request_permission %d times, want 2 (pear, plum): %v", len(r.Permissions), r.Permissions)
	}
	for i, name := range []string{"pear.txt", "plum.txt"} {
		tc := r.Permissions[i]["toolCall"].(map[string]any)
		locs, _ := tc["locations"].([]any)
		if tc["kind"] != "edit" || len(locs) != 1 || locs[0].(map[string]any)["path"] != filepath.Join(w.dir, name) {
			t.Errorf("permission %d: toolCall %v", i, tc)
		}
		if got := r.Permissions[i]["options"]; len(got.([]any)) != 4 {
			t.Errorf("permission %d: options %v", i, got)
		}
	}
	// Each Write: tool_call pending with its diff, then completed or failed.
	status := map[string][]string{}
	for _, u := range r.Updates {
		switch u["sessionUpdate"] {
		case "tool_call":
			id := u["toolCallId"].(string)
			status[id] = append(status[id], u["status"].(string))
			content, _ := u["content"].([]any)
			if len(content) != 1 || content[0].(map[string]any)["type"] != "diff" {
				t.Errorf("tool_call without its diff: %v", u)
			}
		case "tool_call_update":
			id := u["toolCallId"].(string)
			if s, ok := u["status"].(string); ok {
				status[id] = append(status[id], s)
			}
		}
	}
	var got []string
	for _, s := range status {
		got = append(got, strings.Join(s, ">"))
	}
	want := map[string]bool{"pending>in_progress>completed": true, "pending>failed": true}
	seen := map[string]int{}
	for _, g := range got {
		seen[g]++
		if !want[g] {
			t.Errorf("tool call statuses %s", g)
		}
	}
	if seen["pending>in_progress>completed"] != 2 || seen["pending>failed"] != 1 {
		t.Errorf("tool call statuses %v, want two completed (apple, pear) and one failed (plum)", got)
	}
}

// sleepPrompt runs a Bash sleep whose command line no other test uses, so
// that a leftover process is found by its arguments.
// (claude runs a short sleep without asking, and refuses one of 30s or more.)
const sleepPrompt = "TOOL Bash {\"command\":\"sleep 24.5678\",\"description\":\"Wait\"}\nSAY Slept."

func sleepLeft() bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if bytes.Equal(bytes.TrimRight(b, "\x00"), []byte("sleep\x0024.5678")) || bytes.Contains(b, []byte("sleep 24.5678")) && !bytes.Contains(b, []byte("TOOL")) {
			return true
		}
	}
	return false
}

// TestLiveACPCancel: session/cancel while the allowed sleep runs ends the
// turn with stopReason cancelled and leaves no process behind.
func TestLiveACPCancel(t *testing.T) {
	// Not parallel: it looks for its sleep among every process.
	w := newACPWorld(t)
	start := time.Now()
	r := w.run("cancel", map[string]string{"ACP_PROMPT": sleepPrompt, "ACP_ANSWERS": "allow_once"})
	ran := false
	for _, u := range r.Updates {
		ran = ran || u["sessionUpdate"] == "tool_call" && strings.Contains(u["title"].(string), "sleep 24.5678")
	}
	if !ran {
		t.Errorf("the sleep was never called: %v", r.kinds())
	}
	if got := r.stopReason(t, "prompt"); got != "cancelled" {
		t.Errorf("stopReason %q, want cancelled", got)
	}
	if got := r.stopReason(t, "after"); got != "end_turn" {
		t.Errorf("the prompt after the cancel: stopReason %q", got)
	}
	if d := time.Since(start); d > 25*time.Second {
		t.Errorf("the cancelled turn took %s: the sleep was not interrupted", d)
	}
	if sleepLeft() {
		t.Errorf("a sleep 24.5678 is still running after the session ended")
	}
}

// TestLiveACPCancelPending: session/cancel while request_permission is
// open: the request is answered cancelled, the turn ends cancelled and
// the tool never runs.
func TestLiveACPCancelPending(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	r := w.run("cancel-pending", map[string]string{"ACP_PROMPT": "TOOL Bash {\"command\":\"touch {{cwd}}/never.txt\"}", "ACP_ANSWERS": "wait"})
	if got := r.stopReason(t, "prompt"); got != "cancelled" {
		t.Errorf("stopReason %q, want cancelled", got)
	}
	if len(r.Permissions) != 1 {
		t.Errorf("request_permission %d times, want 1", len(r.Permissions))
	}
	if got := r.stopReason(t, "after"); got != "end_turn" {
		t.Errorf("the prompt after the cancel: stopReason %q", got)
	}
	if r.Aborted != 1 {
		t.Errorf("the open request_permission was not withdrawn with $/cancel_request (aborted %d)", r.Aborted)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "never.txt")); err == nil {
		t.Errorf("the cancelled call ran")
	}
	for _, u := range r.Updates {
		if u["sessionUpdate"] == "tool_call_update" && u["status"] == "in_progress" {
			t.Errorf("the cancelled call was said to run: %v", u)
		}
	}
}

// TestLiveACPSetMode: set_mode reaches the agent and is reported back;
// bypassPermissions is refused unless enabled.
func TestLiveACPSetMode(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	r := w.run("mode", nil)
	if _, ok := r.Results["set_mode"]; !ok {
		t.Fatalf("set_mode failed: %v", r.Errors["set_mode"])
	}
	if _, ok := r.Errors["bad_mode"]; !ok {
		t.Errorf("set_mode bypassPermissions without --allow-bypass-permissions succeeded")
	}
	found := false
	for _, u := range r.Updates {
		found = found || u["sessionUpdate"] == "current_mode_update" && u["currentModeId"] == "acceptEdits"
	}
	if !found {
		t.Errorf("no current_mode_update acceptEdits among %v", r.kinds())
	}
	var modes struct {
		Modes struct {
			Current   string `json:"currentModeId"`
			Available []struct {
				ID string `json:"id"`
			} `json:"availableModes"`
		} `json:"modes"`
	}
	json.Unmarshal(r.Results["new"], &modes)
	if modes.Modes.Current != "default" || len(modes.Modes.Available) != 4 {
		t.Errorf("session/new modes %s", r.Results["new"])
	}
	if got := r.stopReason(t, "prompt"); got != "end_turn" {
		t.Errorf("the prompt after set_mode: stopReason %q", got)
	}
}

// TestLiveACPModelError: an API error ends the prompt with an error
// response; the session goes on.
func TestLiveACPModelError(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	r := w.run("fail", nil)
	e, ok := r.Errors["prompt"]
	if !ok {
		t.Fatalf("FAIL400 answered %s, want an error response", r.Results["prompt"])
	}
	if msg, _ := e["message"].(string); !strings.Contains(msg, "scripted bad request") {
		t.Errorf("error %v does not carry the model's message", e)
	}
	if got := r.stopReason(t, "prompt2"); got != "end_turn" {
		t.Errorf("the prompt after the error: stopReason %q", got)
	}
}

// TestLiveACPLoad: session/load replays the recorded session as the same
// updates the live session sent (the user's turn included), then the
// session goes on with claude's own history (--resume).
func TestLiveACPLoad(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	rec := t.TempDir()
	first := w.run("hello", nil, "--record-dir", rec)
	var sess struct {
		ID string `json:"sessionId"`
	}
	json.Unmarshal(first.Results["new"], &sess)
	if _, err := os.Stat(filepath.Join(rec, sess.ID+".ndjson")); err != nil {
		t.Fatalf("no recording: %v", err)
	}
	var init struct {
		AgentCapabilities struct {
			LoadSession bool `json:"loadSession"`
		} `json:"agentCapabilities"`
	}
	json.Unmarshal(first.Results["initialize"], &init)
	if !init.AgentCapabilities.LoadSession {
		t.Errorf("loadSession not advertised with --record-dir")
	}
	r := w.run("load", map[string]string{"ACP_SESSION": sess.ID}, "--record-dir", rec)
	if _, ok := r.Results["load"]; !ok {
		t.Fatalf("load failed: %v", r.Errors["load"])
	}
	replayed := r.Updates[:r.AtLoad]
	var live []map[string]any
	user := ""
	for _, u := range replayed {
		if u["sessionUpdate"] == "user_message_chunk" {
			user += u["content"].(map[string]any)["text"].(string)
			continue
		}
		live = append(live, u)
	}
	if user != "HELLO" {
		t.Errorf("replayed user turn %q, want HELLO", user)
	}
	a, _ := json.Marshal(live)
	b, _ := json.Marshal(first.Updates)
	if !bytes.Equal(a, b) {
		t.Errorf("replayed updates differ from the live ones:\nreplayed %s\nlive     %s", a, b)
	}
	if got := r.stopReason(t, "prompt"); got != "end_turn" {
		t.Errorf("prompt after load: stopReason %q", got)
	}
	// claude resumed its own history: the model's last request holds the
	// recorded turn and its answer before the new one.
	reqs := w.api.MessagesRequests()
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "Hello from the scripted model.") || !strings.Contains(last, "HELLO again") {
		t.Errorf("the resumed session's request lacks the earlier turn: %.600s", last)
	}
	if _, err := os.Stat(filepath.Join(rec, sess.ID+".2.ndjson")); err != nil {
		t.Errorf("the loaded session is not recorded as a second segment: %v", err)
	}
}

// TestLiveACPAsAgent: a session recorded by agentjq acp, replayed by
// replay --as-agent behind a two-line shim, is a deterministic agent for
// editor-plugin tests: the same updates, no model, no CLI.
func TestLiveACPAsAgent(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	rec := t.TempDir()
	first := w.run("hello", nil, "--record-dir", rec)
	var sess struct {
		ID string `json:"sessionId"`
	}
	json.Unmarshal(first.Results["new"], &sess)
	shim := filepath.Join(t.TempDir(), "claude")
	writeFile(shim, []byte("#!/bin/sh\nexec "+shQuote(w.bin)+" replay --as-agent "+shQuote(filepath.Join(rec, sess.ID+".ndjson"))+" -- \"$@\"\n"), 0o755)
	w.claude = shim
	again := w.run("hello", nil)
	if got := again.stopReason(t, "prompt"); got != "end_turn" {
		t.Errorf("stopReason %q", got)
	}
	a, _ := json.Marshal(again.Updates)
	b, _ := json.Marshal(first.Updates)
	if !bytes.Equal(a, b) {
		t.Errorf("the replayed agent's updates differ:\nreplayed %s\nlive     %s", a, b)
	}
}

// TestLiveACPThinking: thinking streams as agent_thought_chunk, the answer
// as agent_message_chunk.
func TestLiveACPThinking(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	r := w.run("think", nil)
	if got := r.stopReason(t, "prompt"); got != "end_turn" {
		t.Errorf("stopReason %q", got)
	}
	if _, text := r.chunks("agent_thought_chunk"); text != "Let me think about it." {
		t.Errorf("thought %q", text)
	}
	if _, text := r.chunks("agent_message_chunk"); text != "Thought it through." {
		t.Errorf("message %q", text)
	}
}

// TestLiveACPMaxTurns: a turn stopped by --max-turns ends with
// max_turn_requests.
func TestLiveACPMaxTurns(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	r := w.run("loop", nil, "--max-turns", "2")
	if got := r.stopReason(t, "prompt"); got != "max_turn_requests" {
		t.Errorf("stopReason %q, want max_turn_requests", got)
	}
}

// TestLiveACPPlan: TodoWrite becomes a plan update, not a tool call.
func TestLiveACPPlan(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	r := w.run("one", map[string]string{"ACP_PROMPT": `TOOL TodoWrite {"todos":[{"content":"Read the code","status":"completed","activeForm":"Reading"},{"content":"Fix the bug","status":"in_progress","activeForm":"Fixing"}]}` + "\nSAY Planned."})
	if got := r.stopReason(t, "prompt"); got != "end_turn" {
		t.Errorf("stopReason %q", got)
	}
	var plans []any
	for _, u := range r.Updates {
		switch u["sessionUpdate"] {
		case "plan":
			plans = append(plans, u["entries"])
		case "tool_call", "tool_call_update":
			t.Errorf("TodoWrite shown as a tool call: %v", u)
		}
	}
	b, _ := json.Marshal(plans)
	if want := `[[{"content":"Read the code","priority":"medium","status":"completed"},{"content":"Fix the bug","priority":"medium","status":"in_progress"}]]`; string(b) != want {
		t.Errorf("plans %s, want %s", b, want)
	}
}

// TestLiveACPMCPServer: session/new's mcpServers reach claude; the
// server's tool is asked about like any other.
func TestLiveACPMCPServer(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	servers, _ := json.Marshal([]map[string]any{{"name": "probe", "command": os.Args[0], "args": []string{},
		"env": []map[string]string{{"name": fakeagent.Scenario, "value": "mcp-server"}}}})
	r := w.run("one", map[string]string{"ACP_MCP": string(servers), "ACP_ANSWERS": "allow_once",
		"ACP_PROMPT": "TOOL mcp__probe__ping {\"note\":\"hi\"}\nSAY done"})
	if got := r.stopReason(t, "prompt"); got != "end_turn" {
		t.Errorf("stopReason %q", got)
	}
	if len(r.Permissions) != 1 || r.Permissions[0]["toolCall"].(map[string]any)["title"] != "mcp__probe__ping" {
		t.Errorf("permissions %v", r.Permissions)
	}
	if _, text := r.chunks("agent_message_chunk"); !strings.Contains(text, "mcp__probe__ping ok: pong-from-probe") {
		t.Errorf("the answer %q lacks the server's result", text)
	}
}

// TestLiveACPRejectAlways: a call the editor rejected "always" stays
// rejected when claude would run it again without asking (after the mode
// changes to acceptEdits), for a Write and for a Bash command: the session
// rule is enforced on every call, not only on those claude asks about.
func TestLiveACPRejectAlways(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, prompt, file, mode string }{
		{"Write", "WRITE pear", "pear.txt", "acceptEdits"},
		{"Bash", `TOOL Bash {"command":"touch {{cwd}}/never.txt"}`, "never.txt", "acceptEdits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newACPWorld(t)
			os.WriteFile(filepath.Join(w.dir, "seed.txt"), []byte("seed\n"), 0o644)
			r := w.run("writes", map[string]string{
				"ACP_PROMPTS": tc.prompt + "," + tc.prompt + `,TOOL Read {"file_path":"{{cwd}}/seed.txt"}`,
				"ACP_MODES":   "1:" + tc.mode, "ACP_ANSWERS": "reject_always"})
			if _, ok := r.Results["set_mode1"]; !ok {
				t.Fatalf("set_mode %s failed: %v", tc.mode, r.Errors["set_mode1"])
			}
			for i := range 3 {
				if got := r.stopReason(t, "prompt"+string(rune('0'+i))); got != "end_turn" {
					t.Errorf("prompt %d: stopReason %q", i, got)
				}
			}
			if _, err := os.Stat(filepath.Join(w.dir, tc.file)); err == nil {
				t.Errorf("%s exists: the call rejected always ran after the mode changed", tc.file)
			}
			if len(r.Permissions) != 1 {
				t.Errorf("request_permission %d times, want 1 (the first call only): %v", len(r.Permissions), r.Permissions)
			}
			// Each call's statuses: the two rejected ones fail, the Read runs.
			status := map[string]string{}
			var order []string
			for _, u := range r.Updates {
				id, _ := u["toolCallId"].(string)
				s, _ := u["status"].(string)
				if id == "" || s == "" {
					continue
				}
				if _, ok := status[id]; !ok {
					order = append(order, id)
				}
				status[id] = s
			}
			var got []string
			for _, id := range order {
				got = append(got, status[id])
			}
			if strings.Join(got, " ") != "failed failed completed" {
				t.Errorf("final tool call statuses %v, want failed failed completed", got)
			}
		})
	}
}

// TestLiveACPReadNotAsked: with no policy and no session rule, the editor
// is asked exactly what claude asks: a Read inside the project runs
// without a request_permission.
func TestLiveACPReadNotAsked(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	os.WriteFile(filepath.Join(w.dir, "seed.txt"), []byte("seed-content\n"), 0o644)
	r := w.run("one", map[string]string{"ACP_PROMPT": `TOOL Read {"file_path":"{{cwd}}/seed.txt"}` + "\nSAY Read it."})
	if got := r.stopReason(t, "prompt"); got != "end_turn" {
		t.Errorf("stopReason %q", got)
	}
	if len(r.Permissions) != 0 {
		t.Errorf("request_permission %d times for an auto-allowed Read: %v", len(r.Permissions), r.Permissions)
	}
	completed := false
	for _, u := range r.Updates {
		completed = completed || u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed"
	}
	if !completed {
		t.Errorf("the Read did not complete: %v", r.Updates)
	}
}

// sessionID is the id of the session/new result of r.
func (r acpReport) sessionID(t *testing.T) string {
	t.Helper()
	var s struct {
		ID string `json:"sessionId"`
	}
	json.Unmarshal(r.Results["new"], &s)
	if s.ID == "" {
		t.Fatalf("no session: %v", r.Errors["new"])
	}
	return s.ID
}

// listed is r's session/list result: session id → title.
func (r acpReport) listed(t *testing.T) map[string]string {
	t.Helper()
	var l struct {
		Sessions []struct {
			ID    string `json:"sessionId"`
			Title string `json:"title"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(r.Results["list"], &l); err != nil {
		t.Fatalf("session/list: %v (error %v)", err, r.Errors["list"])
	}
	out := map[string]string{}
	for _, s := range l.Sessions {
		out[s.ID] = s.Title
	}
	return out
}

// TestLiveACPLoadMode: a session set to plan before its turn is loaded
// in plan: session/load's modes say so and claude runs in it; session/
// list has it, titled by its first prompt.
func TestLiveACPLoadMode(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	rec := t.TempDir()
	first := w.run("writes", map[string]string{"ACP_PROMPTS": "HELLO", "ACP_MODES": "0:plan"}, "--record-dir", rec)
	id := first.sessionID(t)
	r := w.run("load", map[string]string{"ACP_SESSION": id}, "--record-dir", rec)
	var load struct {
		Modes struct {
			Current string `json:"currentModeId"`
		} `json:"modes"`
	}
	if err := json.Unmarshal(r.Results["load"], &load); err != nil || load.Modes.Current != "plan" {
		t.Errorf("session/load %s (error %v), want currentModeId plan", r.Results["load"], r.Errors["load"])
	}
	if got := r.stopReason(t, "prompt"); got != "end_turn" {
		t.Errorf("prompt after load: stopReason %q", got)
	}
	if modes := initModes(t, filepath.Join(rec, id+".2.ndjson")); len(modes) == 0 || modes[0] != "plan" {
		t.Errorf("claude's init modes after the load: %v, want plan", modes)
	}
	if got := r.listed(t); got[id] != "HELLO" {
		t.Errorf("session/list %v, want %s titled HELLO", got, id)
	}
}

// TestLiveACPResume: session/resume takes the recorded session up without
// replaying it; claude continues its history.
func TestLiveACPResume(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	rec := t.TempDir()
	id := w.run("hello", nil, "--record-dir", rec).sessionID(t)
	r := w.run("resume", map[string]string{"ACP_SESSION": id}, "--record-dir", rec)
	if _, ok := r.Results["resume"]; !ok {
		t.Fatalf("session/resume failed: %v", r.Errors["resume"])
	}
	for _, u := range r.Updates[:r.AtLoad] {
		if k := u["sessionUpdate"]; k == "user_message_chunk" || k == "agent_message_chunk" {
			t.Errorf("session/resume replayed %v", u)
		}
	}
	if got := r.stopReason(t, "prompt"); got != "end_turn" {
		t.Errorf("prompt after resume: stopReason %q", got)
	}
	reqs := w.api.MessagesRequests()
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "Hello from the scripted model.") || !strings.Contains(last, "HELLO again") {
		t.Errorf("the resumed session's request lacks the earlier turn: %.600s", last)
	}
}

// TestLiveACPFork: session/fork starts a new session from the recorded
// one's conversation (claude --resume --fork-session): a new id, the
// earlier turn in its history, both listed.
func TestLiveACPFork(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	rec := t.TempDir()
	id := w.run("hello", nil, "--record-dir", rec).sessionID(t)
	r := w.run("fork", map[string]string{"ACP_SESSION": id}, "--record-dir", rec)
	var fork struct {
		ID string `json:"sessionId"`
	}
	json.Unmarshal(r.Results["fork"], &fork)
	if fork.ID == "" || fork.ID == id {
		t.Fatalf("session/fork %s (error %v), want a new session id", r.Results["fork"], r.Errors["fork"])
	}
	if got := r.stopReason(t, "prompt"); got != "end_turn" {
		t.Errorf("prompt to the fork: stopReason %q", got)
	}
	reqs := w.api.MessagesRequests()
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "Hello from the scripted model.") || !strings.Contains(last, "HELLO again") {
		t.Errorf("the fork's request lacks the earlier turn: %.600s", last)
	}
	listed := r.listed(t)
	if listed[id] != "HELLO" || listed[fork.ID] != "HELLO again" {
		t.Errorf("session/list %v, want %s (HELLO) and the fork %s (HELLO again)", listed, id, fork.ID)
	}
}

// TestLiveACPClose: session/close ends the session; a prompt to it then
// fails as for an unknown session.
func TestLiveACPClose(t *testing.T) {
	t.Parallel()
	w := newACPWorld(t)
	r := w.run("close", nil)
	if got := r.stopReason(t, "prompt"); got != "end_turn" {
		t.Errorf("stopReason %q", got)
	}
	if _, ok := r.Results["close"]; !ok {
		t.Fatalf("session/close failed: %v", r.Errors["close"])
	}
	if e, ok := r.Errors["after"]; !ok || e["code"] != float64(-32002) {
		t.Errorf("a prompt to the closed session: result %s error %v, want not found", r.Results["after"], e)
	}
}
