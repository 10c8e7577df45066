package cmd

// Live tests of agentjq proxy: the official TypeScript Agent SDK (a Node
// driver, testdata/proxy/sdk-driver.mjs) starts agentjq proxy as its
// claude, and the proxy runs the real CLI offline against the scripted
// Messages API. They skip when node, the SDK or the CLI is missing, and
// fail instead when AGENTJQ_REQUIRE_LIVE=1.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/recording"
)

// sdkCLIVersion is the claude CLI the SDK under test bundles.
const sdkCLIVersion = "2.1.332"

// sdkSetup is what a proxy live test needs.
type sdkSetup struct {
	node, modules, claude, agentjq string
	api                            *apistub.Server
}

func liveSkip(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("AGENTJQ_REQUIRE_LIVE") == "1" {
		t.Fatal("live test required (AGENTJQ_REQUIRE_LIVE=1): " + why)
	}
	t.Skip("live test skipped: " + why)
}

func sdkLive(t *testing.T) sdkSetup {
	t.Helper()
	if testing.Short() {
		t.Skip("runs node and the real CLI")
	}
	home, _ := os.UserHomeDir()
	s := sdkSetup{modules: os.Getenv("AGENTJQ_NODE_MODULES"), claude: os.Getenv("AGENTJQ_SDK_CLAUDE")}
	if s.modules == "" {
		s.modules = filepath.Join(home, ".cache", "agentjq", "node-clients", "node_modules")
	}
	if s.claude == "" {
		s.claude = filepath.Join(home, ".cache", "agentjq", "claude-"+sdkCLIVersion, "node_modules", ".bin", "claude")
	}
	var err error
	if s.node, err = exec.LookPath("node"); err != nil {
		liveSkip(t, "node not on PATH")
	}
	if _, err := os.Stat(filepath.Join(s.modules, "@anthropic-ai", "claude-agent-sdk", "sdk.mjs")); err != nil {
		liveSkip(t, "the Agent SDK is not installed in "+s.modules+" (npm install --prefix ~/.cache/agentjq/node-clients @anthropic-ai/claude-agent-sdk@0.3.332)")
	}
	if _, err := os.Stat(s.claude); err != nil {
		liveSkip(t, "claude "+sdkCLIVersion+" not at "+s.claude)
	}
	s.agentjq = buildAgentjq(t)
	s.api = apistub.Start(t)
	return s
}

// shim writes an executable script and returns its path.
func shim(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := writeFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// proxyShim is the two-line shim an SDK user writes.
func (s sdkSetup) proxyShim(t *testing.T, bin string, flags ...string) string {
	var q []string
	for _, f := range flags {
		q = append(q, shQuote(f))
	}
	return shim(t, "claude-proxy", fmt.Sprintf(`exec %s proxy --bin %s %s -- "$@"`, shQuote(s.agentjq), shQuote(bin), strings.Join(q, " ")))
}

type sdkScenario struct {
	Claude    string `json:"claude"`
	Cwd       string `json:"cwd"`
	Prompt    string `json:"prompt"`
	Answer    string `json:"answer,omitempty"`
	Hook      bool   `json:"hook,omitempty"`
	MCP       bool   `json:"mcp,omitempty"`
	Interrupt bool   `json:"interrupt,omitempty"`
	Sandbox   any    `json:"sandbox,omitempty"`
}

type sdkEvent struct {
	Event    string          `json:"event"`
	Tool     string          `json:"tool"`
	Text     string          `json:"text"`
	Subtype  string          `json:"subtype"`
	IsError  bool            `json:"is_error"`
	Result   string          `json:"result"`
	Denials  []string        `json:"denials"`
	Command  string          `json:"command"`
	Args     json.RawMessage `json:"args"`
	Message  string          `json:"message"`
	HookName string          `json:"hook_event_name"`
}

type sdkRun struct {
	events []sdkEvent
	raw    string
	stderr string
	err    error
}

func (r sdkRun) count(event, tool string) int {
	n := 0
	for _, e := range r.events {
		if e.Event == event && (tool == "" || e.Tool == tool) {
			n++
		}
	}
	return n
}

func (r sdkRun) result(t *testing.T) sdkEvent {
	t.Helper()
	for _, e := range r.events {
		if e.Event == "result" {
			return e
		}
	}
	t.Fatalf("the app saw no result:\n%s\nstderr:\n%s", r.raw, r.stderr)
	return sdkEvent{}
}

// drive runs the SDK driver with the scenario.
func (s sdkSetup) drive(t *testing.T, sc sdkScenario, extraEnv ...string) sdkRun {
	t.Helper()
	b, _ := json.Marshal(sc)
	cmd := exec.Command(s.node, filepath.Join("testdata", "proxy", "sdk-driver.mjs"))
	cmd.Env = append(livetest.Env(t, s.api.URL()), "AGENTJQ_NODE_MODULES="+s.modules, "AGENTJQ_SDK_SCENARIO="+string(b))
	cmd.Env = append(cmd.Env, extraEnv...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the SDK driver did not finish within 90s:\n%s\n%s", out.String(), errb.String())
	}
	r := sdkRun{raw: out.String(), stderr: errb.String(), err: err}
	for _, l := range strings.Split(strings.TrimSpace(r.raw), "\n") {
		if l == "" {
			continue
		}
		var e sdkEvent
		if jerr := json.Unmarshal([]byte(l), &e); jerr != nil {
			t.Fatalf("driver output is not JSON: %s", l)
		}
		r.events = append(r.events, e)
	}
	return r
}

func (r sdkRun) mustSucceed(t *testing.T) {
	t.Helper()
	if r.err != nil || r.count("error", "") > 0 || r.count("done", "") != 1 {
		t.Fatalf("the SDK app failed (%v):\n%s\nstderr:\n%s", r.err, r.raw, r.stderr)
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// readEntries reads a recording.
func readEntries(t *testing.T, path string) []recording.Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, entries, err := recording.ReadAll(f, path, func(err error) { t.Errorf("%s: %v", path, err) })
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func decisions(t *testing.T, entries []recording.Entry) []protocol.Decision {
	var ds []protocol.Decision
	for _, e := range entries {
		if e.Dir != protocol.DirEvent {
			continue
		}
		var d protocol.Decision
		if json.Unmarshal(e.Msg, &d) == nil && d.Subtype == protocol.EventDecision {
			ds = append(ds, d)
		}
	}
	return ds
}

// TestLiveProxySDKCanUseTool: the app's canUseTool allow and deny both
// reach the CLI: the file is written, or not.
func TestLiveProxySDKCanUseTool(t *testing.T) {
	t.Parallel()
	s := sdkLive(t)
	for _, answer := range []string{"allow", "deny"} {
		t.Run(answer, func(t *testing.T) {
			dir := livetest.Workdir(t)
			rec := filepath.Join(t.TempDir(), "rec.ndjson")
			r := s.drive(t, sdkScenario{Claude: s.proxyShim(t, s.claude, "--record", rec), Cwd: dir, Prompt: "WRITE apple", Answer: answer})
			r.mustSucceed(t)
			if n := r.count("canUseTool", "Write"); n != 1 {
				t.Fatalf("canUseTool for Write called %d times, want 1:\n%s", n, r.raw)
			}
			written := exists(filepath.Join(dir, "apple.txt"))
			if written != (answer == "allow") {
				t.Fatalf("app answered %s, file written: %v\n%s", answer, written, r.raw)
			}
			ds := decisions(t, readEntries(t, rec))
			if len(ds) != 1 || ds[0].DecidedBy != protocol.ByClient || ds[0].Behavior != answer {
				t.Fatalf("recorded decisions %+v, want one %s by the client", ds, answer)
			}
			if got, want := headerVersion(t, rec), livetest.CLIVersion(t, s.claude); got != want {
				t.Errorf("the recording's header says agent_version %q, want %q", got, want)
			}
		})
	}
}

// TestLiveProxySDKPolicyDenyWins: a policy deny is answered by agentjq;
// the app, which would allow, never sees the request.
func TestLiveProxySDKPolicyDenyWins(t *testing.T) {
	t.Parallel()
	s := sdkLive(t)
	dir := livetest.Workdir(t)
	rec := filepath.Join(t.TempDir(), "rec.ndjson")
	policy := writePolicy(t, "policy.json", `{"deny":["Write"],"default":"ask"}`)
	r := s.drive(t, sdkScenario{Claude: s.proxyShim(t, s.claude, "--policy", policy, "--record", rec), Cwd: dir, Prompt: "WRITE apple", Answer: "allow"})
	r.mustSucceed(t)
	if n := r.count("canUseTool", ""); n != 0 {
		t.Fatalf("the app was asked %d times; a policy deny is agentjq's to answer:\n%s", n, r.raw)
	}
	if exists(filepath.Join(dir, "apple.txt")) {
		t.Fatal("the file was written despite the policy deny")
	}
	if res := r.result(t); len(res.Denials) != 1 || res.Denials[0] != "Write" {
		t.Fatalf("result denials %v, want [Write]", res.Denials)
	}
	entries := readEntries(t, rec)
	ds := decisions(t, entries)
	if len(ds) != 1 || ds[0].DecidedBy != protocol.ByRules || ds[0].Behavior != protocol.Deny || ds[0].Via != protocol.ViaHook {
		t.Fatalf("recorded decisions %+v, want one deny by rules via agentjq's hook", ds)
	}
	// The guard asked first: its hook call is agentjq's, under the renamed
	// id; no permission request came.
	var heldReq, agentjqAnswer bool
	for _, e := range entries {
		if e.Dir == protocol.DirOut && e.Party == protocol.PartyAgentjq && bytes.Contains(e.Msg, []byte(`"callback_id":"agentjq-agentjq_guard"`)) {
			heldReq = true
		}
		if e.Dir == protocol.DirIn && e.Party == protocol.PartyAgentjq && bytes.Contains(e.Msg, []byte(`"deny"`)) {
			agentjqAnswer = true
		}
	}
	if !heldReq || !agentjqAnswer {
		t.Fatalf("the recording does not mark the held request (%v) and agentjq's answer (%v) with party agentjq", heldReq, agentjqAnswer)
	}
}

// hookAndMCPPrompt runs Bash (auto-allowed, seen by the app's PreToolUse
// hook) and the app's in-process MCP tool.
const hookAndMCPPrompt = "TOOL Bash {\"command\":\"echo hello-from-bash\",\"description\":\"greet\"}\nTOOL mcp__probe__ping {\"note\":\"hi\"}\nSAY Both ran."

// TestLiveProxySDKHookAndMCPByteIdentical: the app's hook and its SDK MCP
// tool work through the proxy, and the app reads exactly the CLI's stdout
// (a tee on each side of the proxy).
func TestLiveProxySDKHookAndMCPByteIdentical(t *testing.T) {
	t.Parallel()
	s := sdkLive(t)
	dir := livetest.Workdir(t)
	tmp := t.TempDir()
	cliOut, clientOut := filepath.Join(tmp, "cli.out"), filepath.Join(tmp, "client.out")
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash for the tee shims")
	}
	inner := shim(t, "claude-tee", fmt.Sprintf(`exec bash -c 'exec "$0" "$@" > >(tee %s)' %s "$@"`, shQuote(cliOut), shQuote(s.claude)))
	proxy := s.proxyShim(t, inner)
	outer := shim(t, "client-tee", fmt.Sprintf(`exec bash -c 'exec "$0" "$@" > >(tee %s)' %s "$@"`, shQuote(clientOut), shQuote(proxy)))
	r := s.drive(t, sdkScenario{Claude: outer, Cwd: dir, Prompt: hookAndMCPPrompt, Answer: "allow", Hook: true, MCP: true})
	r.mustSucceed(t)
	var hooked bool
	for _, e := range r.events {
		if e.Event == "hook" && e.Tool == "Bash" && e.Command == "echo hello-from-bash" && e.HookName == "PreToolUse" {
			hooked = true
		}
	}
	if !hooked {
		t.Fatalf("the app's PreToolUse hook did not see the Bash call:\n%s", r.raw)
	}
	if n := r.count("mcp", "ping"); n != 1 {
		t.Fatalf("the app's MCP tool ran %d times, want 1:\n%s", n, r.raw)
	}
	if res := r.result(t); !strings.Contains(res.Result, "Both ran.") || !strings.Contains(res.Result, "pong: hi") {
		t.Fatalf("result %q lacks the tools' output", res.Result)
	}
	// The tees may finish a moment after the app.
	var a, b []byte
	for range 50 {
		a, _ = os.ReadFile(cliOut)
		b, _ = os.ReadFile(clientOut)
		if len(a) > 0 && bytes.Equal(a, b) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("the client's stdout (%d bytes) differs from the CLI's (%d bytes):\n%s", len(b), len(a), firstDiff(a, b))
	}
}

func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n cli:    %.300s\n client: %.300s", i+1, x, y)
		}
	}
	return ""
}

// TestLiveProxySDKInterrupt: the app interrupts the turn while its
// canUseTool is pending; the CLI withdraws the request (the app's signal
// aborts) and the turn ends with an error result.
func TestLiveProxySDKInterrupt(t *testing.T) {
	t.Parallel()
	s := sdkLive(t)
	dir := livetest.Workdir(t)
	start := time.Now()
	r := s.drive(t, sdkScenario{Claude: s.proxyShim(t, s.claude), Cwd: dir, Prompt: "TOUCH", Interrupt: true})
	if r.count("aborted", "Bash") != 1 || exists(filepath.Join(dir, "touched.txt")) || r.count("interrupted", "") != 1 {
		t.Fatalf("the interrupt did not withdraw the pending request:\n%s\nstderr:\n%s", r.raw, r.stderr)
	}
	if res := r.result(t); !res.IsError {
		t.Fatalf("the interrupted turn's result is not an error: %+v", res)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the interrupted session took %s", d)
	}
}

// TestLiveProxySDKRecordingReplays: a recording made through the proxy
// stands in for the CLI (replay --as-agent) against the same app: the app
// sees the same session, and what agentjq answered (a policy deny) is
// answered again without the app.
func TestLiveProxySDKRecordingReplays(t *testing.T) {
	t.Parallel()
	s := sdkLive(t)
	cases := []struct {
		name   string
		policy string
		sc     sdkScenario
	}{
		{"app-allows", "", sdkScenario{Prompt: "WRITE apple", Answer: "allow"}},
		{"policy-denies", `{"deny":["Write"],"default":"ask"}`, sdkScenario{Prompt: "WRITE apple", Answer: "allow"}},
		{"hook-and-mcp", "", sdkScenario{Prompt: hookAndMCPPrompt, Answer: "allow", Hook: true, MCP: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := filepath.Join(t.TempDir(), "rec.ndjson")
			flags := []string{"--record", rec}
			if c.policy != "" {
				flags = append(flags, "--policy", writePolicy(t, "policy.json", c.policy))
			}
			sc := c.sc
			sc.Cwd = livetest.Workdir(t)
			sc.Claude = s.proxyShim(t, s.claude, flags...)
			live := s.drive(t, sc)
			live.mustSucceed(t)

			sc.Claude = shim(t, "claude-replay", fmt.Sprintf(`exec %s replay --as-agent %s -- "$@"`, shQuote(s.agentjq), shQuote(rec)))
			replayed := s.drive(t, sc)
			replayed.mustSucceed(t)
			if !sameEvents(live.events, replayed.events) {
				t.Fatalf("the replayed session differs from the live one:\nlive:\n%s\nreplayed:\n%s\nstderr:\n%s", live.raw, replayed.raw, replayed.stderr)
			}
		})
	}
}

func sameEvents(a, b []sdkEvent) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestLiveProxyUnderSpawn: a client that is not the SDK, agentjq's own
// spawn, with --bin pointing at a proxy shim. spawn answers what reaches
// it with its own policy; the proxy's policy deny is final.
func TestLiveProxyUnderSpawn(t *testing.T) {
	t.Parallel()
	s := sdkLive(t)
	allowWrite := writePolicy(t, "policy.json", `{"allow":["Write"],"default":"deny"}`)
	for _, c := range []struct {
		name, proxyPolicy string
		written           bool
	}{
		{"spawn-allows", "", true},
		{"proxy-denies", `{"deny":["Write"],"default":"ask"}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := livetest.Workdir(t)
			var flags []string
			if c.proxyPolicy != "" {
				flags = append(flags, "--policy", writePolicy(t, "policy.json", c.proxyPolicy))
			}
			cmd := exec.Command(s.agentjq, "spawn", "--bin", s.proxyShim(t, s.claude, flags...), "--policy", allowWrite, "-C", dir, "--timeout", "60s", "-p", "WRITE apple")
			cmd.Env = livetest.Env(t, s.api.URL())
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			_ = cmd.Run()
			if got := exists(filepath.Join(dir, "apple.txt")); got != c.written {
				t.Fatalf("file written: %v, want %v\nstdout:\n%s\nstderr:\n%s", got, c.written, out.String(), errb.String())
			}
			// spawn's own guard sees the call first (an allow via hook)
			// whatever the proxy does; its permission answer is the one
			// that counts.
			var spawnDecided int
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.Contains(l, `"subtype":"decision"`) && strings.Contains(l, `"tool":"Write"`) && strings.Contains(l, `"via":"permission"`) {
					spawnDecided++
				}
			}
			want := 1
			if !c.written {
				want = 0 // the proxy answered; spawn never saw the request
			}
			if spawnDecided != want {
				t.Fatalf("spawn decided %d Write requests, want %d:\n%s", spawnDecided, want, out.String())
			}
		})
	}
}

// TestLiveProxySDKAgentjqHookBesideAppHook: agentjq's own --hook is merged
// into the app's initialize under a renamed id: the CLI calls both, agentjq
// answers its own (and blocks the call), the app answers its own.
func TestLiveProxySDKAgentjqHookBesideAppHook(t *testing.T) {
	t.Parallel()
	s := sdkLive(t)
	dir := livetest.Workdir(t)
	rec := filepath.Join(t.TempDir(), "rec.ndjson")
	proxy := s.proxyShim(t, s.claude, "--record", rec, "--hook", "PreToolUse:Bash=echo blocked-by-agentjq >&2; exit 2")
	r := s.drive(t, sdkScenario{Claude: proxy, Cwd: dir, Prompt: "TOOL Bash {\"command\":\"echo hi > ran.txt\",\"description\":\"write\"}\nSAY Tried.", Answer: "allow", Hook: true})
	r.mustSucceed(t)
	if r.count("hook", "Bash") != 1 {
		t.Fatalf("the app's hook was not called:\n%s", r.raw)
	}
	if exists(filepath.Join(dir, "ran.txt")) {
		t.Fatal("agentjq's blocking hook did not stop the Bash call")
	}
	if res := r.result(t); !strings.Contains(res.Result, "blocked-by-agentjq") {
		t.Fatalf("result %q lacks agentjq's hook's reason", res.Result)
	}
	var inits int
	var ownCallback, ownAnswer bool
	for _, e := range readEntries(t, rec) {
		if e.Dir == protocol.DirIn && bytes.Contains(e.Msg, []byte(`"initialize"`)) {
			inits++
			if e.Party != protocol.PartyClient || !bytes.Contains(e.Msg, []byte(`"agentjq-hook_0"`)) {
				t.Fatalf("the initialize is not the client's merged with agentjq's hook: %s %s", e.Party, e.Msg)
			}
		}
		if e.Dir == protocol.DirOut && e.Party == protocol.PartyAgentjq && bytes.Contains(e.Msg, []byte(`"callback_id":"agentjq-hook_0"`)) {
			ownCallback = true
		}
		if e.Dir == protocol.DirIn && e.Party == protocol.PartyAgentjq && bytes.Contains(e.Msg, []byte(`blocked-by-agentjq`)) {
			ownAnswer = true
		}
	}
	if inits != 1 || !ownCallback || !ownAnswer {
		t.Fatalf("initialize requests %d (want 1), agentjq's callback held %v, answered by agentjq %v", inits, ownCallback, ownAnswer)
	}
}

// TestLiveProxySDKAgentjqToolBesideAppTool: agentjq's --mcp-tool server
// and the app's in-process server are both registered in the one
// initialize; each tool call reaches the server that owns it.
func TestLiveProxySDKAgentjqToolBesideAppTool(t *testing.T) {
	t.Parallel()
	s := sdkLive(t)
	dir := livetest.Workdir(t)
	proxy := s.proxyShim(t, s.claude, "--mcp-tool", "shout=printf 'from-agentjq:%s' \"$AGENTJQ_ARG_WORD\"")
	prompt := "TOOL mcp__agentjq__shout {\"word\":\"hey\"}\nTOOL mcp__probe__ping {\"note\":\"hi\"}\nSAY Both tools ran."
	r := s.drive(t, sdkScenario{Claude: proxy, Cwd: dir, Prompt: prompt, Answer: "allow", MCP: true})
	r.mustSucceed(t)
	res := r.result(t)
	if !strings.Contains(res.Result, "from-agentjq:hey") || !strings.Contains(res.Result, "pong: hi") {
		t.Fatalf("result %q lacks one of the tools' output:\n%s", res.Result, r.raw)
	}
	if r.count("mcp", "ping") != 1 || r.count("canUseTool", "mcp__agentjq__shout") != 1 {
		t.Fatalf("the app's tool ran %d times, the app was asked for agentjq's tool %d times (want 1, 1):\n%s",
			r.count("mcp", "ping"), r.count("canUseTool", "mcp__agentjq__shout"), r.raw)
	}
}

// TestLiveProxySDKPolicyDeniesAutoAllowed: the CLI reads a file inside the
// project without asking the app; through the proxy, agentjq's PreToolUse
// guard (merged into the app's initialize under a renamed id) still puts
// the call to the policy, and the policy's deny holds.
func TestLiveProxySDKPolicyDeniesAutoAllowed(t *testing.T) {
	t.Parallel()
	prompt := toolLines(toolCall("Read", map[string]any{"file_path": "{{cwd}}/.env"}), "SAY Read done.")
	modelSaw := func(s sdkSetup, text string) bool {
		for _, tr := range s.api.ToolResults() {
			if strings.Contains(tr.Text, text) {
				return true
			}
		}
		return false
	}
	// Without a policy the app is never asked (it would deny): the call is
	// auto-allowed, which is what makes the guard necessary.
	t.Run("auto-allowed", func(t *testing.T) {
		s := sdkLive(t)
		dir := livetest.Workdir(t)
		plantEnv(dir)
		r := s.drive(t, sdkScenario{Claude: s.proxyShim(t, s.claude), Cwd: dir, Prompt: prompt, Answer: "deny"})
		r.mustSucceed(t)
		if r.count("canUseTool", "") != 0 || !modelSaw(s, planted) {
			t.Skipf("the CLI no longer reads .env inside the project without asking (app asked %d times):\n%s", r.count("canUseTool", ""), r.raw)
		}
	})
	t.Run("policy deny", func(t *testing.T) {
		s := sdkLive(t)
		dir := livetest.Workdir(t)
		plantEnv(dir)
		rec := filepath.Join(t.TempDir(), "rec.ndjson")
		policy := writePolicy(t, "policy.json", `{"deny":["Read(.env)"],"default":"ask"}`)
		r := s.drive(t, sdkScenario{Claude: s.proxyShim(t, s.claude, "--policy", policy, "--record", rec), Cwd: dir, Prompt: prompt, Answer: "allow"})
		r.mustSucceed(t)
		if modelSaw(s, planted) {
			t.Fatalf("the model read the planted secret through the proxy: %+v", s.api.ToolResults())
		}
		if !modelSaw(s, "denied by policy rule Read(.env)") {
			t.Errorf("the model was not told why: %+v", s.api.ToolResults())
		}
		if n := r.count("canUseTool", ""); n != 0 {
			t.Errorf("the app was asked %d times:\n%s", n, r.raw)
		}
		if res := r.result(t); len(res.Denials) != 1 || res.Denials[0] != "Read" {
			t.Errorf("result denials %v, want [Read]", res.Denials)
		}
		entries := readEntries(t, rec)
		ds := decisions(t, entries)
		if len(ds) != 1 || ds[0].Tool != "Read" || ds[0].Behavior != protocol.Deny || ds[0].DecidedBy != protocol.ByRules || ds[0].Via != protocol.ViaHook {
			t.Fatalf("recorded decisions %+v, want one deny of Read by rules via hook", ds)
		}
		var merged, held bool
		for _, e := range entries {
			if e.Dir == protocol.DirIn && e.Party == protocol.PartyClient && bytes.Contains(e.Msg, []byte(`"initialize"`)) {
				// One initialize, the app's, carrying agentjq's guard renamed.
				merged = bytes.Contains(e.Msg, []byte(`"agentjq-agentjq_guard"`)) && !merged
			}
			if e.Dir == protocol.DirIn && e.Party == protocol.PartyAgentjq && bytes.Contains(e.Msg, []byte(`"initialize"`)) {
				t.Errorf("agentjq sent an initialize of its own beside the app's: %s", e.Msg)
			}
			if e.Dir == protocol.DirOut && e.Party == protocol.PartyAgentjq && bytes.Contains(e.Msg, []byte(`"callback_id":"agentjq-agentjq_guard"`)) {
				held = true
			}
		}
		if !merged || !held {
			t.Fatalf("the app's initialize carries agentjq's guard: %v; the guard's call is agentjq's: %v", merged, held)
		}
	})
}

// TestLiveProxySDKSandboxNeverWeakened: an app whose SDK options ask for a
// weaker sandbox (off, commands excluded from it, unsandboxed retries,
// all of / writable) still gets agentjq's: a Bash command cannot write
// outside the project, and agentjq says which settings it dropped.
func TestLiveProxySDKSandboxNeverWeakened(t *testing.T) {
	t.Parallel()
	s := sdkLive(t)
	outside := filepath.Join(t.TempDir(), "outside.txt")
	errs := filepath.Join(t.TempDir(), "proxy.err")
	bin := shim(t, "claude-proxy", fmt.Sprintf(`exec %s proxy --bin %s -- "$@" 2>>%s`, shQuote(s.agentjq), shQuote(s.claude), shQuote(errs)))
	dir := livetest.Workdir(t)
	r := s.drive(t, sdkScenario{Claude: bin, Cwd: dir,
		Prompt: "TOOL Bash " + `{"command":"python3 -c \"open('` + outside + `','w').write('x')\"; echo tried"}`,
		Sandbox: map[string]any{
			"enabled": false, "allowUnsandboxedCommands": true, "autoAllowBashIfSandboxed": true,
			"excludedCommands": []string{"python3:*"},
			"filesystem":       map[string]any{"allowWrite": []string{"/"}},
		}})
	r.mustSucceed(t)
	if exists(outside) {
		t.Errorf("the command wrote outside the project: the client's sandbox settings won")
	}
	b, _ := os.ReadFile(errs)
	for _, want := range []string{"sandbox.enabled", "sandbox.excludedCommands", "sandbox.filesystem.allowWrite /"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("agentjq's stderr does not name %s as dropped:\n%s", want, b)
		}
	}
}
