package cmd

// Live tests: agentjq spawn driving the real claude CLI, offline, against
// the scripted Messages API (internal/testkit/apistub). They skip when the CLI is
// not installed, and fail instead when AGENTJQ_REQUIRE_LIVE=1 (CI).

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/agentjq/agentjq/approve"
	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/apistub"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/iostreams"
)

type liveRun struct {
	code        int
	stdout      string
	stderr      string
	api         *apistub.Server
	dir         string
	lines       []map[string]any
	rawLines    []string
	exit        protocol.Exit
	decisions   []protocol.Decision
	resultTexts []string
	home        string // the agent's HOME
}

// spawnLive runs cmd.Main("spawn", args...) in-process against the real CLI.
func spawnLive(t *testing.T, stdin string, args ...string) liveRun {
	t.Helper()
	return spawnLiveIn(t, nil, stdin, args...)
}

// spawnLiveIn is spawnLive with setup run on the project directory first.
func spawnLiveIn(t *testing.T, setup func(dir string), stdin string, args ...string) liveRun {
	t.Helper()
	bin := livetest.Claude(t)
	api := apistub.Start(t)
	dir := livetest.Workdir(t)
	if setup != nil {
		setup(dir)
	}
	ios, in, out, errb := iostreams.Test()
	in.WriteString(stdin)
	ios.Environ = livetest.Env(t, api.URL())
	full := append([]string{"spawn", "--bin", bin, "-C", dir, "--timeout", "90s"}, args...)
	code := Main(full, ios)
	r := liveRun{code: code, stdout: out.String(), stderr: errb.String(), api: api, dir: dir, home: ios.Getenv("HOME")}
	for _, l := range strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %.200s", l)
		}
		r.lines = append(r.lines, m)
		r.rawLines = append(r.rawLines, l)
		switch {
		case m["type"] == "agentjq" && m["subtype"] == "exit":
			json.Unmarshal([]byte(l), &r.exit)
		case m["type"] == "agentjq" && m["subtype"] == "decision":
			var d protocol.Decision
			json.Unmarshal([]byte(l), &d)
			r.decisions = append(r.decisions, d)
		case m["type"] == "result":
			s, _ := m["result"].(string)
			r.resultTexts = append(r.resultTexts, s)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("exit %d\nstderr:\n%s", code, r.stderr)
	}
	return r
}

func (r liveRun) count(typ string) int {
	n := 0
	for _, m := range r.lines {
		if m["type"] == typ {
			n++
		}
	}
	return n
}

func TestLiveOneShotHello(t *testing.T) {
	t.Parallel()
	r := spawnLive(t, "", "-p", "HELLO there")
	if r.code != 0 || r.exit.Outcome != protocol.OutcomeSuccess {
		t.Fatalf("exit %d, outcome %s", r.code, r.exit.Outcome)
	}
	if r.count("result") != 1 || len(r.resultTexts) != 1 || r.resultTexts[0] != "Hello from the scripted model." {
		t.Errorf("results %q", r.resultTexts)
	}
	if first := r.lines[0]; first["type"] != "system" || first["subtype"] != "init" {
		t.Errorf("first line %v, want system/init", first)
	}
	if strings.Contains(r.stderr, "agentjq:") {
		t.Errorf("stderr on success: %s", r.stderr)
	}
}

func TestLiveMultiTurnPlainText(t *testing.T) {
	t.Parallel()
	r := spawnLive(t, "HELLO one\nHELLO two\n")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	var prompts []string
	for _, req := range r.api.MessagesRequests() {
		prompts = append(prompts, string(req.Body))
	}
	all := strings.Join(prompts, "\n")
	if !strings.Contains(all, "HELLO one") || !strings.Contains(all, "HELLO two") {
		t.Errorf("the model did not see both turns")
	}
	if r.exit.Turns != 2 || r.count("result") < 1 {
		t.Errorf("turns %d, results %d", r.exit.Turns, r.count("result"))
	}
}

func TestLiveWriteDeniedWithoutApprover(t *testing.T) {
	t.Parallel()
	r := spawnLive(t, "", "-p", "please WRITE banana")
	if r.code != protocol.ExitDenied || r.exit.Outcome != protocol.OutcomeDenied {
		t.Fatalf("exit %d outcome %s, want denied", r.code, r.exit.Outcome)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "banana.txt")); !os.IsNotExist(err) {
		t.Errorf("banana.txt exists after a denial (stat: %v)", err)
	}
	if len(r.decisions) != 1 || r.decisions[0].Behavior != "deny" || r.decisions[0].DecidedBy != protocol.ByDefault || r.decisions[0].Tool != "Write" {
		t.Errorf("decisions %+v", r.decisions)
	}
	found := false
	for _, tr := range r.api.ToolResults() {
		if tr.IsError && strings.Contains(tr.Text, approve.NoApprover) {
			found = true
		}
	}
	if !found {
		t.Errorf("the model never saw the deny message: %+v", r.api.ToolResults())
	}
}

func TestLiveMaxTurnsAndAPIError(t *testing.T) {
	t.Parallel()
	r := spawnLive(t, "", "-p", "LOOP", "--max-turns", "1", "--allowed-tools", "Bash(echo:*)")
	if r.code != protocol.ExitError || r.exit.Outcome != protocol.OutcomeError {
		t.Errorf("max-turns: exit %d outcome %s", r.code, r.exit.Outcome)
	}
	if !strings.Contains(r.stderr, "maximum number of turns") {
		t.Errorf("max-turns: stderr lacks the reason: %q", r.stderr)
	}
	r = spawnLive(t, "", "-p", "FAIL400")
	if r.code != protocol.ExitError || r.exit.Outcome != protocol.OutcomeError {
		t.Errorf("api error: exit %d outcome %s", r.code, r.exit.Outcome)
	}
}

func TestLiveBigToolInputPassesUnchanged(t *testing.T) {
	t.Parallel()
	r := spawnLive(t, "", "-p", "BIGWRITE 3", "--allowed-tools", "Write")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	var toolLine string
	for i, m := range r.lines {
		if m["type"] == "assistant" && strings.Contains(r.rawLines[i], `"tool_use"`) {
			toolLine = r.rawLines[i]
		}
	}
	if len(toolLine) < 3<<20 {
		t.Fatalf("no 3 MiB tool_use line (longest tool line %d bytes)", len(toolLine))
	}
	want := `"content":"` + strings.Repeat("x", 3<<20)
	if !strings.Contains(toolLine, want) {
		t.Errorf("the 3 MiB input was altered on the way")
	}
	b, err := os.ReadFile(filepath.Join(r.dir, "big.txt"))
	if err != nil || len(b) != 3<<20 {
		t.Errorf("big.txt: %d bytes, %v", len(b), err)
	}
}

func TestLiveEOFMidTurnWaitsForResult(t *testing.T) {
	t.Parallel()
	// stdin ends at once; the turn runs a 2 s command and must finish.
	turn := string(protocol.UserTurn("TOOL Bash {\"command\":\"sleep 2\",\"description\":\"wait\"}\nSAY slept"))
	r := spawnLive(t, turn+"\n", "--allowed-tools", "Bash(sleep:*)")
	if r.code != 0 || r.count("result") != 1 {
		t.Fatalf("exit %d, %d results", r.code, r.count("result"))
	}
	if !strings.HasPrefix(r.resultTexts[0], "slept") {
		t.Errorf("result %q", r.resultTexts[0])
	}
}

// liveProcess prepares a live test that runs agentjq as a process: the
// claude CLI, the scripted API, a project directory and the binary.
func liveProcess(t *testing.T) (claude string, api *apistub.Server, dir, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	return livetest.Claude(t), apistub.Start(t), livetest.Workdir(t), buildAgentjq(t)
}

// TestLiveSIGINTDuringSleep sends SIGINT to a real agentjq process while
// the agent runs a long command: the interrupted outcome comes within
// seconds and no process is left behind.
func TestLiveSIGINTDuringSleep(t *testing.T) {
	t.Parallel()
	claude, api, dir, bin := liveProcess(t)
	// A duration no other test uses, to find leftovers in the process table.
	marker := "sleep 23.4567"
	cmd := exec.Command(bin, "spawn", "--bin", claude, "-C", dir, "--allowed-tools", "Bash(sleep:*)",
		"-p", `TOOL Bash {"command":"`+marker+`","description":"wait"}`)
	cmd.Env = livetest.Env(t, api.URL())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !processRunning(marker) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the sleep never started; stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("agentjq did not stop within 20s of SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != protocol.ExitInterrupted {
		t.Errorf("exit %d, want 130; stderr %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `"outcome":"interrupted"`) {
		t.Errorf("no interrupted exit event")
	}
	// The kill of its group takes a moment to land.
	for deadline := time.Now().Add(2 * time.Second); processRunning(marker); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("%q is still running after agentjq exited", marker)
			break
		}
	}
}

// processRunning reports whether a live process runs the command line s
// exactly (argv joined by spaces), so that the agentjq and shell processes
// whose arguments merely mention s do not count.
func processRunning(s string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")) != s {
			continue
		}
		st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if i := bytes.LastIndexByte(st, ')'); i > 0 && len(st) > i+2 && st[i+2] == 'Z' {
			continue
		}
		return true
	}
	return false
}

// TestLiveWriteAllowedAtTTY: a person at the terminal allows the Write.
// agentjq runs with a pseudo-terminal as its controlling terminal (stdin
// and stdout stay pipes, as in a pipeline) and prompts there.
func TestLiveWriteAllowedAtTTY(t *testing.T) {
	t.Parallel()
	claude, api, dir, bin := liveProcess(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(bin, "spawn", "--bin", claude, "-C", dir, "-p", "please WRITE banana")
	cmd.Env = livetest.Env(t, api.URL())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.ExtraFiles = []*os.File{tty}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	screen := make(chan string, 1)
	go func() {
		var seen bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			seen.Write(buf[:n])
			if strings.Contains(seen.String(), "[y]es once") {
				screen <- seen.String()
				ptmx.Write([]byte("y\n"))
				return
			}
			if err != nil {
				screen <- seen.String()
				return
			}
		}
	}()
	var shown string
	select {
	case shown = <-screen:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no prompt on the terminal; stderr:\n%s", errb.String())
	}
	if !strings.Contains(shown, "Write") || !strings.Contains(shown, "banana.txt") {
		t.Errorf("the prompt does not show the tool and its file: %q", shown)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("agentjq did not finish after the answer")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d; stderr %s", code, errb.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "banana.txt")); err != nil || string(b) != "banana\n" {
		t.Errorf("banana.txt = %q, %v", b, err)
	}
	if !strings.Contains(out.String(), `"decided_by":"tty"`) {
		t.Errorf("no tty decision event in stdout")
	}
	if strings.Contains(out.String(), "[y]es") {
		t.Errorf("the prompt leaked into stdout")
	}
}

// TestLiveContextProfile: the context profile's argv (-p, stream-json both
// ways, session_id in the envelope), exercised against claude, which
// accepts the same flags.
func TestLiveContextProfile(t *testing.T) {
	t.Parallel()
	r := spawnLive(t, "HELLO one\n", "--agent", "context")
	if r.code != 0 || len(r.resultTexts) != 1 || r.resultTexts[0] != "Hello from the scripted model." {
		t.Fatalf("exit %d, results %q", r.code, r.resultTexts)
	}
}
