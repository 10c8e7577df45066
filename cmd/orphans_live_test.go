package cmd

// Process-table tests: whatever way agentjq ends, no process it started,
// directly or not, is left running. Each test marks every process it
// causes (an environment variable the whole tree inherits, and the
// commands' own text) and scans /proc for the marker afterwards.

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/internal/testkit/proctest"
)

// orphanRun is agentjq spawn, built as a binary, driving the real claude
// with the given prompt, with every process marked.
type orphanRun struct {
	cmd    *exec.Cmd
	marker string
	stdout *bufio.Reader
	stdin  io.WriteCloser
}

// allowAll is a policy that allows every call.
func allowAll(t *testing.T) string {
	allow := filepath.Join(t.TempDir(), "allow.jq")
	if err := os.WriteFile(allow, []byte(`{behavior: "allow"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return allow
}

func startOrphanRun(t *testing.T, marker string, args ...string) *orphanRun {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the tree guarantees are Linux's")
	}
	if testing.Short() {
		t.Skip("builds the binary and runs the CLI")
	}
	bin := buildAgentjq(t)
	claude := livetest.Claude(t)
	api := apistub.Start(t)
	dir := livetest.Workdir(t)
	full := append([]string{"spawn", "--bin", claude, "-C", dir, "--no-prompt"}, args...)
	cmd := exec.Command(bin, full...)
	cmd.Env = append(livetest.Env(t, api.URL()), "AGENTJQ_TEST_MARKER="+marker, "AGENTJQ_GRACE=2s")
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &orphanRun{cmd: cmd, marker: marker, stdout: bufio.NewReader(out), stdin: stdin}
	go io.Copy(io.Discard, r.stdout)
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return r
}

// running reports whether a marked process runs exactly the command line
// cmdline (not merely mentions it, as agentjq's own argv does).
func running(marker, cmdline string) bool {
	for _, p := range proctest.Find(marker) {
		if _, cl, _ := strings.Cut(p, " "); cl == cmdline {
			return true
		}
	}
	return false
}

// waitFor waits until a marked process runs cmdline.
func waitFor(t *testing.T, marker, cmdline string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !running(marker, cmdline) {
		if time.Now().After(deadline) {
			t.Fatalf("no process running %q appeared; marked: %q", cmdline, proctest.Find(marker))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *orphanRun) wait(t *testing.T, within time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(within):
		t.Fatalf("agentjq still running %s later", within)
	}
}

// The tool command claude runs (in a session of its own) and a setsid
// grandchild of it.
const sleepingTool = `TOOL Bash {"command":"setsid sleep 3101 & sleep 3102","description":"wait"}`

// SIGKILL of agentjq while claude's Bash tool runs a command: the CLI,
// its tool command and the tool's setsid grandchild all go.
func TestLiveSIGKILLMidToolLeavesNothing(t *testing.T) {
	t.Parallel()
	marker := proctest.Marker(t)
	r := startOrphanRun(t, marker, "--policy", allowAll(t), "-p", sleepingTool)
	waitFor(t, marker, "sleep 3102")
	waitFor(t, marker, "sleep 3101")
	r.cmd.Process.Signal(syscall.SIGKILL)
	r.wait(t, 5*time.Second)
	proctest.None(t, marker, 5*time.Second)
}

// Three SIGINTs within 30 ms mid-tool: agentjq kills the session at once
// and nothing survives it.
func TestLiveThreeSIGINTsLeaveNothing(t *testing.T) {
	t.Parallel()
	marker := proctest.Marker(t)
	r := startOrphanRun(t, marker, "--policy", allowAll(t), "-p", sleepingTool)
	waitFor(t, marker, "sleep 3102")
	waitFor(t, marker, "sleep 3101")
	for i := 0; i < 3; i++ {
		r.cmd.Process.Signal(syscall.SIGINT)
		time.Sleep(10 * time.Millisecond)
	}
	r.wait(t, 10*time.Second)
	if code := r.cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130", code)
	}
	proctest.None(t, marker, 5*time.Second)
}

// A co-process approver that leaves a child in the background (and a
// setsid one): SIGKILL of agentjq takes them too.
func TestLiveApproverBackgroundChildLeavesNothing(t *testing.T) {
	t.Parallel()
	marker := proctest.Marker(t)
	approver := `sleep 3201 & setsid sleep 3202 & while IFS= read -r line; do id=$(printf '%s' "$line" | sed -n 's/.*"request_id":"\([^"]*\)".*/\1/p'); printf '{"request_id":"%s","behavior":"allow"}\n' "$id"; done`
	r := startOrphanRun(t, marker, "--approver", approver, "-p", sleepingTool)
	waitFor(t, marker, "sleep 3202")
	waitFor(t, marker, "sleep 3102")
	r.cmd.Process.Signal(syscall.SIGKILL)
	r.wait(t, 5*time.Second)
	proctest.None(t, marker, 5*time.Second)
}

// A hook-format approver's background children end with each run of the
// hook, long before the session does.
func TestLiveHookApproverChildrenEndWithIt(t *testing.T) {
	t.Parallel()
	marker := proctest.Marker(t)
	ran := filepath.Join(t.TempDir(), "ran")
	hook := `cat >/dev/null; sleep 3301 & (setsid sleep 3302 &); echo ran > ` + ran + `; printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}\n'`
	r := startOrphanRun(t, marker, "--approver", hook, "--approver-format", "hook", "-p", sleepingTool)
	waitFor(t, marker, "sleep 3102") // only the hook could allow the call
	if _, err := os.Stat(ran); err != nil {
		t.Fatalf("the hook did not run: %v", err)
	}
	for _, c := range []string{"sleep 3301", "sleep 3302"} {
		if running(marker, c) {
			t.Errorf("the hook's child %q outlived it", c)
		}
	}
	r.cmd.Process.Signal(syscall.SIGKILL)
	r.wait(t, 5*time.Second)
	proctest.None(t, marker, 5*time.Second)
}
