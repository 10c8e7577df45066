package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/iostreams"
)

func TestProxyArgsSplitsAtTheFirstAgentArgument(t *testing.T) {
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
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a, b, real := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.Link(self, filepath.Join(a, "claude")); err != nil {
		os.Symlink(self, filepath.Join(a, "claude"))
	}
	os.WriteFile(filepath.Join(b, "claude"), []byte("#!/bin/sh\nexec agentjq proxy -- \"$@\"\n"), 0o755)
	os.WriteFile(filepath.Join(real, "claude"), []byte("#!/bin/sh\necho real\n"), 0o755)
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
