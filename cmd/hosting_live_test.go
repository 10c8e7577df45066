package cmd

// Live tests of the hosted tools, servers and hooks: the real claude CLI,
// offline, against the scripted Messages API. They skip when the CLI is
// not installed (fail with AGENTJQ_REQUIRE_LIVE=1).

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/bridge"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/internal/testkit/mcptest"
	"github.com/agentjq/agentjq/iostreams"
)

type hostedRun struct {
	rep       bridge.Report
	stdout    string
	stderr    string
	dir       string
	lines     []map[string]any
	result    string
	asked     []string // tools the approval chain was asked about
	toolNames []string // system/init tools
	elapsed   time.Duration
}

// decider allows the tools named, denies the others with "not today".
func decider(allowed ...string) approve.DeciderFunc {
	return func(_ context.Context, req *approve.Request) (approve.Verdict, error) {
		for _, a := range allowed {
			if a == req.ToolName || a == "*" {
				return approve.Verdict{Behavior: protocol.Allow, Source: "test"}, nil
			}
		}
		return approve.Verdict{Behavior: protocol.Deny, Message: "not today", Source: "test"}, nil
	}
}

// runHosted runs one prompt through the real CLI with the host flags f
// applied as spawn applies them, and d as the approval chain.
func runHosted(t *testing.T, prompt string, d approve.DeciderFunc, f HostFlags, tweak ...func(*bridge.Options)) hostedRun {
	t.Helper()
	bin := livetest.Claude(t)
	api := apistub.Start(t)
	dir := livetest.Workdir(t)
	ios, _, out, errb := iostreams.Test()
	path, args := bridge.Command(bridge.Profiles["claude"], bin, runtime.GOOS, bridge.PassFlags{}, nil)
	var asked []string
	var askedMu sync.Mutex
	opts := bridge.Options{
		Profile: bridge.Profiles["claude"], Path: path, Args: args, Dir: dir,
		Env:    livetest.Env(t, api.URL()),
		Prompt: prompt, HasPrompt: true,
		Approver: approve.DeciderFunc(func(ctx context.Context, req *approve.Request) (approve.Verdict, error) {
			askedMu.Lock()
			asked = append(asked, req.ToolName)
			askedMu.Unlock()
			return d(ctx, req)
		}),
		Timeout: 90 * time.Second, Grace: 2 * time.Second,
		Stdout: out, Stderr: errb,
	}
	if f.MCPToolTimeout == 0 {
		f.MCPToolTimeout = 2 * time.Minute
	}
	if f.HookTimeout == 0 {
		f.HookTimeout = time.Minute
	}
	if err := applyHostFlags(ios, f, &opts); err != nil {
		t.Fatal(err)
	}
	for _, tw := range tweak {
		tw(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	start := time.Now()
	rep, err := bridge.Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := hostedRun{rep: rep, stdout: out.String(), stderr: errb.String(), dir: dir, asked: asked, elapsed: time.Since(start)}
	for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %.200s", l)
		}
		r.lines = append(r.lines, m)
		switch {
		case m["type"] == "result":
			r.result, _ = m["result"].(string)
		case m["type"] == "system" && m["subtype"] == "init" && r.toolNames == nil:
			for _, n := range m["tools"].([]any) {
				r.toolNames = append(r.toolNames, n.(string))
			}
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("report %+v\nresult %q\nstderr:\n%s", rep, r.result, r.stderr)
	}
	return r
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestLiveMCPToolAllowed(t *testing.T) {
	t.Parallel()
	r := runHosted(t, "TOOL mcp__agentjq__greet {\"who\":\"bob\"}\nSAY done", decider("mcp__agentjq__greet"), HostFlags{
		MCPTool:     []string{`greet=echo "hello $AGENTJQ_ARG_WHO from $(basename "$PWD")"; cat`},
		MCPToolDesc: []string{"greet=Greets someone by name."},
	})
	if r.rep.ExitCode != 0 {
		t.Errorf("exit %d", r.rep.ExitCode)
	}
	if !has(r.toolNames, "mcp__agentjq__greet") {
		t.Errorf("system/init tools lack mcp__agentjq__greet: %v", r.toolNames)
	}
	if !has(r.asked, "mcp__agentjq__greet") {
		t.Errorf("the call did not reach the approval chain: %v", r.asked)
	}
	want := "[1] mcp__agentjq__greet ok: hello bob from project\n{\"who\":\"bob\"}"
	if !strings.Contains(r.result, want) {
		t.Errorf("result %q lacks %q", r.result, want)
	}
	if !strings.Contains(r.stdout, `"request_id":"agentjq-init-1"`) {
		t.Errorf("the initialize response is not on stdout")
	}
}

func TestLiveMCPToolDenied(t *testing.T) {
	t.Parallel()
	r := runHosted(t, "TOOL mcp__agentjq__mark {}\nSAY done", decider(), HostFlags{
		MCPTool: []string{"mark=touch ran-it"},
	})
	if r.rep.ExitCode != protocol.ExitDenied {
		t.Errorf("exit %d, want %d (a denial)", r.rep.ExitCode, protocol.ExitDenied)
	}
	if !strings.Contains(r.result, "[1] mcp__agentjq__mark error: not today") {
		t.Errorf("result %q", r.result)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "ran-it")); err == nil {
		t.Errorf("a denied tool command ran")
	}
}

func TestLiveMCPToolFailingAndHanging(t *testing.T) {
	t.Parallel()
	r := runHosted(t, "TOOL mcp__agentjq__broken {}\nTOOL mcp__agentjq__hang {}\nSAY done", decider("*"), HostFlags{
		MCPTool:        []string{"broken=echo partial; echo 'disk on fire' >&2; exit 3", "hang=sleep 120"},
		MCPToolTimeout: 2 * time.Second,
	})
	if r.rep.ExitCode != 0 {
		t.Errorf("exit %d", r.rep.ExitCode)
	}
	for _, want := range []string{
		"[1] mcp__agentjq__broken error: disk on fire",
		"[2] mcp__agentjq__hang error: agentjq: the tool command did not finish within 2s and was killed",
	} {
		if !strings.Contains(r.result, want) {
			t.Errorf("result %q lacks %q", r.result, want)
		}
	}
	if r.elapsed > 60*time.Second {
		t.Errorf("took %s", r.elapsed)
	}
}

func TestLiveMCPServerRelay(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("checks the process table in /proc")
	}
	pidFile := filepath.Join(t.TempDir(), "pids")
	server := fakeagent.Scenario + "=mcp-server " + mcptest.PIDFile + "=" + strconv.Quote(pidFile) + " " + mcptest.Child + "=1 exec " + strconv.Quote(os.Args[0])
	r := runHosted(t, "TOOL mcp__probe__ping {\"note\":\"hi\"}\nTOOL mcp__probe__echo {\"a\":[1,2]}\nSAY done", decider("mcp__probe__ping", "mcp__probe__echo"), HostFlags{
		MCPServer: []string{"probe=" + server},
	})
	if r.rep.ExitCode != 0 {
		t.Errorf("exit %d", r.rep.ExitCode)
	}
	for _, want := range []string{"[1] mcp__probe__ping ok: pong-from-probe", `[2] mcp__probe__echo ok: {"a":[1,2]}`} {
		if !strings.Contains(r.result, want) {
			t.Errorf("result %q lacks %q", r.result, want)
		}
	}
	if !has(r.asked, "mcp__probe__ping") {
		t.Errorf("asked %v", r.asked)
	}
	if !strings.Contains(r.stderr, "agentjq: mcp-server probe: mcptest: serving") {
		t.Errorf("the server's stderr was not passed on: %q", r.stderr)
	}
	// The server and its child are gone once the session is over.
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pids := strings.Fields(string(b))
	if len(pids) != 2 {
		t.Fatalf("pids %q", b)
	}
	for _, p := range pids {
		// SIGKILL takes a moment to land on the process group.
		deadline := time.Now().Add(2 * time.Second)
		for alive(p) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(p) {
			t.Errorf("process %s outlived the session", p)
		}
	}
}

func TestLiveHookBlocksBash(t *testing.T) {
	t.Parallel()
	r := runHosted(t, "TOOL Bash {\"command\":\"touch {{cwd}}/ran-it\",\"description\":\"mark\"}\nSAY done", decider("*"), HostFlags{
		Hook: []string{`PreToolUse:Bash=grep -q '"touch ' && { echo "no touching in $AGENTJQ_HOOK_EVENT" >&2; exit 2; }; exit 0`},
	})
	if !strings.Contains(r.result, "no touching in PreToolUse") {
		t.Errorf("result %q lacks the hook's reason", r.result)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "ran-it")); err == nil {
		t.Errorf("the blocked command ran")
	}
	if has(r.asked, "Bash") {
		t.Errorf("a call the hook denied still reached the approval chain")
	}
}

func TestLiveHookAllowsBash(t *testing.T) {
	t.Parallel()
	allow := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"hook says yes"}}`
	r := runHosted(t, "TOOL Bash {\"command\":\"touch {{cwd}}/ran-it\",\"description\":\"mark\"}\nSAY done", decider(), HostFlags{
		Hook: []string{"PreToolUse:Bash=cat >/dev/null; echo '" + allow + "'", "PostToolUse=cat > post.json"},
	})
	if r.rep.ExitCode != 0 {
		t.Errorf("exit %d", r.rep.ExitCode)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "ran-it")); err != nil {
		t.Errorf("the command the hook allowed did not run: %v", err)
	}
	if has(r.asked, "Bash") {
		t.Errorf("the hook's allow did not skip the approval chain: %v", r.asked)
	}
	post, err := os.ReadFile(filepath.Join(r.dir, "post.json"))
	if err != nil || !strings.Contains(string(post), `"hook_event_name":"PostToolUse"`) {
		t.Errorf("the PostToolUse hook did not get its input: %v %s", err, post)
	}
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] != 'Z'
	}
	return true
}

// TestLiveMCPToolInterrupted: SIGINT during a tool call interrupts the
// turn, and the tool command's process group is killed.
func TestLiveMCPToolInterrupted(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("checks the process table in /proc")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	sigs := make(chan os.Signal, 1)
	go func() {
		// Interrupt once the command runs.
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if b, _ := os.ReadFile(pidFile); len(b) > 0 {
				sigs <- syscall.SIGINT
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	r := runHosted(t, "TOOL mcp__agentjq__hang {}\nSAY done", decider("*"), HostFlags{
		MCPTool: []string{"hang=sleep 120 & echo $! > " + strconv.Quote(pidFile) + "; wait"},
	}, func(o *bridge.Options) { o.Signals = sigs })
	if r.elapsed > 60*time.Second {
		t.Errorf("took %s", r.elapsed)
	}
	// The agent withdraws the call with an MCP notifications/cancelled,
	// which kills the command's process group.
	if !strings.Contains(r.stdout, `"method":"notifications/cancelled"`) {
		t.Errorf("the agent sent no notifications/cancelled")
	}
	if r.rep.Outcome != protocol.OutcomeInterrupted {
		t.Errorf("outcome %s", r.rep.Outcome)
	}
	b, _ := os.ReadFile(pidFile)
	pid := strings.TrimSpace(string(b))
	if pid == "" {
		t.Fatal("the tool command never ran")
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the tool command's child %s outlived the interrupt", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
