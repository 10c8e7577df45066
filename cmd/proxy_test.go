package cmd

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentjq/agentjq/iostreams"
)

func TestProxyArgsSplitsAtTheFirstAgentArgument(t *testing.T) {
	t.Parallel()
	var cli CLI
	ios, _, _, _ := iostreams.Test()
	parser, err := newParser(&cli, ios)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want []string }{
		{[]string{"proxy", "--policy", "p.json", "--output-format", "stream-json"}, []string{"proxy", "--policy", "p.json", "--", "--output-format", "stream-json"}},
		{[]string{"proxy", "--bin=/x/claude", "--events", "3", "--verbose"}, []string{"proxy", "--bin=/x/claude", "--events", "3", "--", "--verbose"}},
		{[]string{"proxy", "--no-redact", "--", "--model", "m"}, []string{"proxy", "--no-redact", "--", "--model", "m"}},
		{[]string{"proxy", "--input-format=stream-json"}, []string{"proxy", "--", "--input-format=stream-json"}},
		{[]string{"proxy", "--policy", "p.json"}, []string{"proxy", "--policy", "p.json"}},
		{[]string{"spawn", "--model", "m"}, []string{"spawn", "--model", "m"}},
	} {
		if got := proxyArgs(parser.Model, c.in); !slices.Equal(got, c.want) {
			t.Errorf("proxyArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestProxySettleFlagsEnvConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "proxy.json")
	os.WriteFile(cfg, []byte(`{"policy":"base.json","record":"rec","bin":"claude-real","events":3,"hook":["Stop=true"]}`), 0o644)
	ios, _, _, _ := iostreams.Test()
	ios.Environ = []string{"AGENTJQ_PROXY_CONFIG=" + cfg, "AGENTJQ_POLICY=a.json" + string(filepath.ListSeparator) + "b.json", "AGENTJQ_APPROVER=./ask.sh"}
	c := &ProxyCmd{Policy: []string{"flag.json"}, ApproverFormat: "control"}
	if err := c.settle(ios); err != nil {
		t.Fatal(err)
	}
	wantPolicy := []string{"flag.json", "a.json", "b.json", filepath.Join(dir, "base.json")}
	if !slices.Equal(c.Policy, wantPolicy) || c.Record != filepath.Join(dir, "rec") || c.Bin != "claude-real" ||
		c.Approver != "./ask.sh" || c.Events != 3 || !slices.Equal(c.Hook, []string{"Stop=true"}) {
		t.Fatalf("settled: %+v", c)
	}
	os.WriteFile(cfg, []byte(`{"polcy":"x"}`), 0o644)
	if err := (&ProxyCmd{}).settle(ios); err == nil || !strings.Contains(err.Error(), cfg) {
		t.Fatalf("a misspelt config key: %v", err)
	}
}

// TestProxyFindsTheRealAgent: PATH lookup skips agentjq itself and a shim
// that runs agentjq proxy; a proxy started by a proxy refuses to run.
func TestProxyFindsTheRealAgent(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a, b, real := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.Link(self, filepath.Join(a, "claude")); err != nil {
		os.Symlink(self, filepath.Join(a, "claude"))
	}
	writeFile(filepath.Join(b, "claude"), []byte("#!/bin/sh\nexec agentjq proxy -- \"$@\"\n"), 0o755)
	writeFile(filepath.Join(real, "claude"), []byte("#!/bin/sh\necho real\n"), 0o755)
	ios, _, _, _ := iostreams.Test()
	ios.Environ = []string{"PATH=" + strings.Join([]string{a, b, real}, string(filepath.ListSeparator))}
	got, err := (&ProxyCmd{}).realAgent(ios)
	if err != nil || got != filepath.Join(real, "claude") {
		t.Fatalf("realAgent = %q, %v; want %s", got, err, filepath.Join(real, "claude"))
	}
	if _, err := (&ProxyCmd{Bin: filepath.Join(a, "claude")}).realAgent(ios); err == nil {
		t.Fatal("--bin naming agentjq itself was accepted")
	}
	ios.Environ = []string{"PATH=" + a}
	if _, err := (&ProxyCmd{}).realAgent(ios); err == nil {
		t.Fatal("no real claude on PATH, yet one was found")
	}

	ios.Environ = []string{proxyMarker + "=" + strconv.Itoa(os.Getppid())}
	if err := startedByItself(ios); err == nil {
		t.Fatal("a proxy whose parent is a proxy ran")
	}
	ios.Environ = []string{proxyMarker + "=1"}
	if err := startedByItself(ios); err != nil {
		t.Fatalf("a proxy far below another refused: %v", err)
	}
}

// TestProxyPassesArgvEnvAndExitStatus: the agent gets the client's argv
// and environment as they are (an MCP permission prompt tool and the SDK's
// variables included) and one --settings that turns the sandbox on, the
// client its stdout and exit status, and
// agentjq's events go to --events, never to stdout.
func TestProxyPassesArgvEnvAndExitStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump")
	agent := filepath.Join(dir, "agent")
	writeFile(agent, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+dump+".args\nenv > "+dump+".env\ncat > "+dump+".stdin\necho '{\"type\":\"system\",\"subtype\":\"status\"}'\nexit 3\n"), 0o755)
	ios, in, out, errb := iostreams.Test()
	ios.Environ = []string{"PATH=" + os.Getenv("PATH"), "CLAUDE_CODE_ENTRYPOINT=sdk-ts", "CLAUDE_CODE_SDK_VERSION=0.3.332", "CLAUDECODE=1"}
	in.WriteString(`{"type":"user","message":{"role":"user","content":"hi"}}` + "\n" + "not json\n")
	args := []string{"--output-format", "stream-json", "--permission-prompt-tool=mcp__perm__ask", "-p", "x y"}
	code := Main(append([]string{"proxy", "--bin", agent, "--events", "2"}, args...), ios)
	if code != 3 {
		t.Fatalf("exit %d, want the agent's 3; stderr: %s", code, errb.String())
	}
	gotArgs, _ := os.ReadFile(dump + ".args")
	got := strings.Split(strings.TrimSuffix(string(gotArgs), "\n"), "\n")
	if len(got) != len(args)+2 || strings.Join(got[:len(args)], "\n") != strings.Join(args, "\n") || got[len(args)] != "--settings" {
		t.Fatalf("the agent's argv:\n%s", gotArgs)
	}
	var settings struct {
		Sandbox struct{ Enabled, FailIfUnavailable, AllowUnsandboxedCommands bool }
	}
	if err := json.Unmarshal([]byte(got[len(args)+1]), &settings); err != nil || !settings.Sandbox.Enabled || !settings.Sandbox.FailIfUnavailable || settings.Sandbox.AllowUnsandboxedCommands {
		t.Fatalf("the agent's --settings do not turn the sandbox on: %v %s", err, got[len(args)+1])
	}
	env, _ := os.ReadFile(dump + ".env")
	for _, kv := range []string{"CLAUDE_CODE_ENTRYPOINT=sdk-ts", "CLAUDE_CODE_SDK_VERSION=0.3.332", "CLAUDECODE=1", proxyMarker + "="} {
		if !strings.Contains(string(env), kv) {
			t.Fatalf("the agent's environment lacks %s:\n%s", kv, env)
		}
	}
	stdin, _ := os.ReadFile(dump + ".stdin")
	if string(stdin) != `{"type":"user","message":{"role":"user","content":"hi"}}`+"\nnot json\n" {
		t.Fatalf("the agent's stdin: %q", stdin)
	}
	if out.String() != `{"type":"system","subtype":"status"}`+"\n" {
		t.Fatalf("the client's stdout: %q", out.String())
	}
	if !strings.Contains(errb.String(), `"subtype":"exit"`) || !strings.Contains(errb.String(), `"agent_exit":3`) {
		t.Fatalf("no exit event on --events 2: %s", errb.String())
	}
}

// TestProxyForwardsSIGTERM: the client's SIGTERM goes to the agent, and
// the client reads the status the agent died with.
func TestProxyForwardsSIGTERM(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildAgentjq(t)
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	writeFile(agent, []byte("#!/bin/sh\necho '{\"type\":\"system\",\"subtype\":\"init\"}'\nwhile :; do sleep 0.05; done\n"), 0o755)
	cmd := exec.Command(bin, "proxy", "--bin", agent, "--", "--verbose")
	stdout, _ := cmd.StdoutPipe()
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if !strings.Contains(line, `"init"`) {
		t.Fatalf("first line %q", line)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the proxy did not end after SIGTERM")
	}
	if got := cmd.ProcessState.ExitCode(); got != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit %d, want %d", got, 128+int(syscall.SIGTERM))
	}
}
