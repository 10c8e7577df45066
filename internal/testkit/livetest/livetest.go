// Package livetest holds the helpers every package's live tests share: they
// run the real `claude` CLI, offline, against the scripted Messages API
// stand-in of internal/testkit/apistub.
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
// `make claude` installs the newest checked version). When
// AGENTJQ_REQUIRE_LIVE=1 (CI sets it) a missing CLI fails the test instead
// of skipping it; in -short mode every live test is skipped.
package livetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
)

// DefaultPath is where `make claude` installs the newest checked CLI
// version (the last of protocol.CheckedVersions); `make test` points
// $AGENTJQ_LIVE_CLAUDE at each checked version in turn.
func DefaultPath() string {
	return PathFor(protocol.CheckedVersions[len(protocol.CheckedVersions)-1])
}

// PathFor is where `make claude` installs CLI version v.
func PathFor(v string) string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "agentjq", "claude-"+v, "node_modules", ".bin", "claude")
}

// Claude returns the path of the claude binary for a live test, or skips
// the test (fails it when AGENTJQ_REQUIRE_LIVE=1) when there is none. A
// live test is skipped in -short mode, whatever AGENTJQ_REQUIRE_LIVE says.
func Claude(tb testing.TB) string {
	tb.Helper()
	SkipShort(tb, "runs the real claude CLI")
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

// SkipShort skips a test that starts processes (the real CLI, a shell, a
// fake agent, this test binary again) in -short mode, so that go test
// -short ./... stays a quick check of the in-process code.
func SkipShort(tb testing.TB, why string) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("skipped in -short: " + why)
	}
}

// CLIVersion is the version the claude binary at bin reports (claude
// --version prints "2.1.332 (Claude Code)"), so that a test can compare
// the CLI with the fixtures recorded from the same version.
func CLIVersion(tb testing.TB, bin string) string {
	tb.Helper()
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		tb.Fatalf("%s --version: %v", bin, err)
	}
	v, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if v == "" {
		tb.Fatalf("%s --version printed %q", bin, out)
	}
	return v
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
