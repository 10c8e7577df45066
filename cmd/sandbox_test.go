package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/iostreams"
)

// readTurn is the shell that reads stdin up to the user turn: an agent
// answers a turn it has read, never one still being written.
const readTurn = `while read -r l; do case $l in *'"type":"user"'*) break;; esac; done` + "\n"

// fakeClaude writes a shell script standing in for claude: it marks that
// it ran, then answers one turn.
func fakeClaude(t *testing.T) (bin, ran string) {
	t.Helper()
	dir := t.TempDir()
	ran = filepath.Join(dir, "ran")
	bin = filepath.Join(dir, "claude")
	script := "#!/bin/sh\n: > " + ran + "\n" +
		`echo '{"type":"system","subtype":"init","session_id":"s1"}'` + "\n" + readTurn +
		`echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok"}'` + "\n"
	if err := writeFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, ran
}

// TestSpawnWithoutTheSandbox: where bubblewrap cannot be found, agentjq
// starts no agent and exits 127 saying what to install; --no-sandbox
// runs it, warning once on stderr and once in the event stream.
func TestSpawnWithoutTheSandbox(t *testing.T) {
	t.Parallel()
	bin, ran := fakeClaude(t)
	ios, _, out, errb := iostreams.Test()
	ios.Environ = []string{"PATH=" + t.TempDir()} // no bwrap, no socat
	code := Main([]string{"spawn", "--bin", bin, "-C", t.TempDir(), "--no-prompt", "-p", "hi"}, ios)
	if code != protocol.ExitNotFound {
		t.Errorf("exit %d, want %d", code, protocol.ExitNotFound)
	}
	for _, want := range []string{"the sandbox cannot run", "bubblewrap (bwrap)", "apt-get install bubblewrap socat", "--no-sandbox"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the agent ran without a sandbox")
	}
	if out.Len() != 0 {
		t.Errorf("stdout: %s", out)
	}

	ios, _, out, errb = iostreams.Test()
	ios.Environ = []string{"PATH=" + t.TempDir()}
	code = Main([]string{"spawn", "--bin", bin, "-C", t.TempDir(), "--no-prompt", "--no-sandbox", "-p", "hi"}, ios)
	if code != 0 {
		t.Fatalf("--no-sandbox: exit %d\n%s", code, errb)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("--no-sandbox: the agent did not run")
	}
	if n := strings.Count(errb.String(), "the sandbox is off"); n != 1 {
		t.Errorf("--no-sandbox: %d warnings on stderr, want 1:\n%s", n, errb)
	}
	if n := strings.Count(out.String(), `"code":"`+protocol.WarnSandboxOff+`"`); n != 1 {
		t.Errorf("--no-sandbox: %d sandbox_off events, want 1:\n%s", n, out)
	}
}

// TestSpawnEndsWhenTheAgentSaysItsSandboxIsOff: an init line with
// sandbox_enabled false ends the session before any turn's work, exit 127.
func TestSpawnEndsWhenTheAgentSaysItsSandboxIsOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "claude")
	writeFile(bin, []byte("#!/bin/sh\n"+`echo '{"type":"system","subtype":"init","session_id":"s1","claude_code_version":"2.1.332","sandbox_enabled":false}'`+"\nsleep 30\n"), 0o755)
	ios, _, out, errb := iostreams.Test()
	ios.Environ = []string{"AGENTJQ_GRACE=500ms"}
	code := Main([]string{"spawn", "--bin", bin, "-C", t.TempDir(), "--no-prompt", "-p", "hi"}, ios)
	if code != protocol.ExitNotFound || !strings.Contains(errb.String(), "sandbox_enabled false") {
		t.Errorf("exit %d, stderr %s", code, errb)
	}
	if !strings.Contains(out.String(), `"outcome":"error"`) {
		t.Errorf("exit event: %s", out)
	}
}

// TestPolicyTurnsTheSandboxOff: a policy's "sandbox": {"enabled": false}
// is --no-sandbox, named in the warning.
func TestPolicyTurnsTheSandboxOff(t *testing.T) {
	t.Parallel()
	bin, ran := fakeClaude(t)
	pol := filepath.Join(t.TempDir(), "off.json")
	os.WriteFile(pol, []byte(`{"allow":["Bash"],"sandbox":{"enabled":false}}`), 0o644)
	ios, _, _, errb := iostreams.Test()
	ios.Environ = []string{"PATH=" + t.TempDir()}
	if code := Main([]string{"spawn", "--bin", bin, "-C", t.TempDir(), "--no-prompt", "--policy", pol, "-p", "hi"}, ios); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	if _, err := os.Stat(ran); err != nil || !strings.Contains(errb.String(), "off.json:1:") {
		t.Errorf("ran %v, stderr %s", err, errb)
	}
}

// TestSessionNamesControlFilesItMade: the sandbox holds the control files
// that exist when a session starts; one made during it is named on
// stderr when it ends (here the agent itself makes them: a fake agent runs
// outside any sandbox).
func TestSessionNamesControlFilesItMade(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(t.TempDir(), "claude")
	writeFile(bin, []byte("#!/bin/sh\nmkdir -p .cargo && : > .cargo/config.toml && : > .npmrc\n"+
		`echo '{"type":"system","subtype":"init","session_id":"s1"}'`+"\n"+readTurn+
		`echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok"}'`+"\n"), 0o755)
	os.WriteFile(filepath.Join(dir, ".gitignore"), nil, 0o644)
	ios, _, _, errb := iostreams.Test()
	if code := Main([]string{"spawn", "--bin", bin, "-C", dir, "--no-prompt", "-p", "hi"}, ios); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	for _, want := range []string{"the session made control files", ".cargo/config.toml", ".npmrc"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb)
		}
	}
}
