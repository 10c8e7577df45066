package livetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

func TestFind(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir) // no default install there
	exe := filepath.Join(dir, "claude")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	t.Setenv("AGENTJQ_LIVE_CLAUDE", exe)
	if p, _ := find(); p != exe {
		t.Errorf("find() = %q, want %q", p, exe)
	}
	t.Setenv("AGENTJQ_LIVE_CLAUDE", plain)
	if p, why := find(); p != "" || !strings.Contains(why, "not an executable") {
		t.Errorf("non-executable: %q, %q", p, why)
	}
	t.Setenv("AGENTJQ_LIVE_CLAUDE", "")
	if p, why := find(); p != "" || !strings.Contains(why, DefaultPath()) {
		t.Errorf("nothing installed: %q, %q", p, why)
	}
	// The default install path is used when the variable is unset.
	def := DefaultPath()
	if err := os.MkdirAll(filepath.Dir(def), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, def); err != nil {
		t.Fatal(err)
	}
	if p, _ := find(); p != def {
		t.Errorf("find() = %q, want default %q", p, def)
	}
}

func TestCLIVersion(t *testing.T) {
	SkipShort(t, "runs a shell script")
	exe := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho '9.8.7 (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if v := CLIVersion(t, exe); v != "9.8.7" {
		t.Errorf("CLIVersion = %q", v)
	}
}

func TestPaths(t *testing.T) {
	t.Setenv("HOME", "/h")
	if p := PathFor("1.2.3"); p != "/h/.cache/agentjq/claude-1.2.3/node_modules/.bin/claude" {
		t.Errorf("PathFor = %q", p)
	}
	newest := protocol.CheckedVersions[len(protocol.CheckedVersions)-1]
	if DefaultPath() != PathFor(newest) {
		t.Errorf("DefaultPath %q is not the newest checked version %s", DefaultPath(), newest)
	}
}

func TestEnvIsClean(t *testing.T) {
	t.Setenv("CLAUDECODE", "1")
	t.Setenv("CLAUDE_CODE_ENTRYPOINT", "cli")
	t.Setenv("CLAUDE_CODE_SSE_PORT", "1234")
	t.Setenv("ANTHROPIC_API_KEY", "real-key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	env := Env(t, "http://127.0.0.1:1")
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s twice", k)
		}
		got[k] = v
	}
	for _, k := range []string{"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT", "AWS_SECRET_ACCESS_KEY"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s leaked into the agent's environment", k)
		}
	}
	want := map[string]string{
		"ANTHROPIC_BASE_URL":                       "http://127.0.0.1:1",
		"ANTHROPIC_API_KEY":                        "sk-ant-livetest",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"DISABLE_TELEMETRY":                        "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"PATH":                                     os.Getenv("PATH"),
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
	if h := got["HOME"]; h == "" || h == os.Getenv("HOME") {
		t.Errorf("HOME=%q is not a fresh temp dir", h)
	}
}

func TestWorkdir(t *testing.T) {
	d := Workdir(t)
	if !filepath.IsAbs(d) {
		t.Errorf("%q is not absolute", d)
	}
	entries, err := os.ReadDir(d)
	if err != nil || len(entries) != 0 {
		t.Errorf("workdir %q: %v %v", d, entries, err)
	}
	if real, _ := filepath.EvalSymlinks(d); real != d {
		t.Errorf("workdir %q resolves to %q", d, real)
	}
}
