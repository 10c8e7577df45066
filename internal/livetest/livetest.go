// Package livetest holds the helpers every package's live tests share: they
// run the real `claude` CLI, offline, against the scripted Messages API
// stand-in of internal/apistub.
//
// A live test looks like:
//
//	bin := livetest.Claude(t)              // skips when the CLI is absent
//	api := apistub.Start(t)
//	cmd := exec.CommandContext(ctx, bin, livetest.StreamArgs()...)
//	cmd.Env = livetest.Env(t, api.URL())
//	cmd.Dir = livetest.Workdir(t)
//
// The CLI is looked up in $AGENTJQ_LIVE_CLAUDE, then at DefaultPath (where
// `make claude` installs it). When AGENTJQ_REQUIRE_LIVE=1 (CI sets it) a
// missing CLI fails the test instead of skipping it.
package livetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Version is the claude CLI version the live tests are pinned to (the
// Makefile's CLAUDE_VERSION).
const Version = "2.1.328"

// DefaultPath is where `make claude` installs the pinned CLI.
func DefaultPath() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "agentjq", "claude-"+Version, "node_modules", ".bin", "claude")
}

// Claude returns the path of the claude binary for a live test, or skips
// the test (fails it when AGENTJQ_REQUIRE_LIVE=1) when there is none.
func Claude(tb testing.TB) string {
	tb.Helper()
	path, why := find()
	if path != "" {
		return path
	}
	msg := "live test skipped: claude CLI not found; run make claude (" + why + ")"
	if os.Getenv("AGENTJQ_REQUIRE_LIVE") == "1" {
		tb.Fatal(strings.Replace(msg, "live test skipped", "live test required (AGENTJQ_REQUIRE_LIVE=1)", 1))
	}
	tb.Skip(msg)
	return ""
}

func find() (path, why string) {
	if p := os.Getenv("AGENTJQ_LIVE_CLAUDE"); p != "" {
		if isExec(p) {
			return p, ""
		}
		why = "AGENTJQ_LIVE_CLAUDE=" + p + " is not an executable file; "
	}
	if p := DefaultPath(); p != "" && isExec(p) {
		return p, ""
	}
	return "", why + "not at " + DefaultPath()
}

func isExec(p string) bool {
	if !strings.ContainsRune(p, os.PathSeparator) {
		if lp, err := exec.LookPath(p); err == nil {
			p = lp
		}
	}
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// StreamArgs are the flags an SDK-style client gives the CLI: stream-json
// both ways, with permission prompts sent to the client as can_use_tool.
// Extra flags are appended.
func StreamArgs(extra ...string) []string {
	args := []string{"--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--permission-prompt-tool", "stdio"}
	return append(args, extra...)
}

// Env is a clean environment for the CLI talking to the stand-in at apiURL:
// a temporary HOME (so no user settings, sessions or credentials leak in),
// the variables that keep it offline, and PATH, TMPDIR, LANG and TERM of
// the test process. Everything else is left out, in particular CLAUDECODE
// and the session-scoped CLAUDE_CODE_* variables of an enclosing Claude
// Code session, which would make the child refuse to start or change its
// behaviour.
func Env(tb testing.TB, apiURL string) []string {
	tb.Helper()
	env := []string{
		"HOME=" + tb.TempDir(),
		"ANTHROPIC_BASE_URL=" + apiURL,
		"ANTHROPIC_API_KEY=sk-ant-livetest",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
	}
	for _, k := range []string{"PATH", "TMPDIR", "LANG", "LC_ALL", "TERM", "SYSTEMROOT"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Workdir makes an empty project directory for the CLI's cwd, removed when
// the test ends. Symlinks are resolved so that paths the CLI reports (it
// resolves them) compare equal to paths built from it.
func Workdir(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "project")
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir
}
