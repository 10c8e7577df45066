package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/protocol"
	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
	"github.com/agentjq/agentjq/internal/testkit/livetest"
	"github.com/agentjq/agentjq/iostreams"
	"github.com/agentjq/agentjq/recording"
)

func TestMain(m *testing.M) {
	if sc := os.Getenv(fakeagent.Scenario); sc != "" {
		os.Exit(fakeagent.Main(sc))
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// fakeIO is an IO whose agent is this test binary playing scenario.
func fakeIO(t *testing.T, scenario, stdin string) (*iostreams.IO, *bytes.Buffer, *bytes.Buffer) {
	ios, in, out, errb := iostreams.Test()
	in.WriteString(stdin)
	ios.Environ = append(os.Environ(), fakeagent.Scenario+"="+scenario,
		fakeagent.Log+"="+filepath.Join(t.TempDir(), "fake.log"), "AGENTJQ_GRACE=500ms")
	return ios, out, errb
}

// TestSpawnExitTable drives one session per row of the documented exit
// status table and checks the status and the exit event agree.
func TestSpawnExitTable(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	self := os.Args[0]
	cases := []struct {
		code     int
		scenario string
		args     []string
	}{
		{0, "capture:hello", nil},
		{1, "capture:max-turns", nil},
		{2, "capture:hello", []string{"--", "--output-format", "json"}},
		{3, "capture:write-deny", nil},
		{4, "crash", nil},
		{124, "ignore-everything", []string{"--timeout", "300ms"}},
		{125, "ignore-everything", []string{"--idle-timeout", "300ms"}},
		{127, "capture:hello", []string{"--bin", "no-such-agent-anywhere"}},
	}
	covered := map[int]bool{130: true, 141: true} // by TestSpawnSignals and TestSpawnClosedStdout
	for _, c := range cases {
		covered[c.code] = true
		ios, out, errb := fakeIO(t, c.scenario, "go\n")
		args := append([]string{"spawn", "--bin", self}, c.args...)
		if c.code == 127 {
			args = append([]string{"spawn"}, c.args...)
		}
		got := Main(args, ios)
		if got != c.code {
			t.Errorf("%s %v: exit %d, want %d\nstderr: %s", c.scenario, c.args, got, c.code, errb)
			continue
		}
		if c.code == 2 || c.code == 127 {
			if !strings.Contains(errb.String(), "agentjq: ") {
				t.Errorf("exit %d without an error message", c.code)
			}
			continue
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var ev protocol.Exit
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil || ev.Subtype != "exit" {
			t.Errorf("%s: last line is not the exit event: %s", c.scenario, lines[len(lines)-1])
			continue
		}
		if ev.Code != c.code || ev.Outcome.ExitCode() != c.code {
			t.Errorf("%s: exit event %+v, want code %d", c.scenario, ev, c.code)
		}
	}
	for _, row := range protocol.SpawnExitTable {
		if !covered[row.Code] {
			t.Errorf("exit status %d (%s) has no test", row.Code, row.Meaning)
		}
	}
}

func TestSpawnHelpShowsExitTable(t *testing.T) {
	t.Parallel()
	ios, _, out, _ := iostreams.Test()
	if code := Main([]string{"spawn", "--help"}, ios); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, row := range protocol.SpawnExitTable {
		if !strings.Contains(out.String(), row.Meaning) {
			t.Errorf("--help lacks exit status %d", row.Code)
		}
	}
}

// buildAgentjq builds the real binary, once per test run, for the tests
// that run it as a process (to signal it, or give it a terminal).
func buildAgentjq(t *testing.T) string {
	t.Helper()
	built.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "agentjq-bin-")
		if built.err != nil {
			return
		}
		bin := filepath.Join(built.dir, "agentjq")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/agentjq/agentjq").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
		built.bin = bin
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

var built struct {
	sync.Once
	dir, bin string
	err      error
}

// TestSpawnSignals sends real SIGINTs to a running agentjq: the first
// interrupts the turn (exit 130 once the agent gives the aborted result);
// with an agent that ignores everything, a second and third escalate.
func TestSpawnSignals(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildAgentjq(t)
	for _, c := range []struct {
		scenario string
		sigints  int
	}{{"interruptible", 1}, {"ignore-everything", 3}} {
		logPath := filepath.Join(t.TempDir(), "fake.log")
		cmd := exec.Command(bin, "spawn", "--bin", os.Args[0])
		cmd.Env = append(os.Environ(), fakeagent.Scenario+"="+c.scenario, fakeagent.Log+"="+logPath, "AGENTJQ_GRACE=10s")
		stdin, _ := cmd.StdinPipe()
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stdin.Write([]byte("please SLEEP\n"))
		// The signals are about a turn in flight: the agent has it.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if b, _ := os.ReadFile(logPath); strings.Contains(string(b), "please SLEEP") {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("%s: the agent never read the turn", c.scenario)
			}
		}
		for i := 0; i < c.sigints; i++ {
			cmd.Process.Signal(syscall.SIGINT)
			// Presses of Ctrl-C, a person's pace apart: the spacing is
			// the behaviour (orphans_live_test.go's
			// TestLiveThreeSIGINTsLeaveNothing sends them within 30 ms).
			time.Sleep(200 * time.Millisecond)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(8 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%s: agentjq still running 8s after %d SIGINTs", c.scenario, c.sigints)
		}
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Errorf("%s: exit %d, want 130; stderr %s", c.scenario, code, errb.String())
		}
		if strings.Contains(out.String(), `"outcome":"interrupted"`) == false {
			t.Errorf("%s: no interrupted exit event: %s", c.scenario, out.String())
		}
		stdin.Close()
	}
}

// TestSpawnClosedStdout: `agentjq spawn | head -1` ends quietly.
func TestSpawnClosedStdout(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildAgentjq(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "-c", `set -o pipefail; printf 'hi\n' | "$0" spawn --bin "$1" | head -c 10 >/dev/null; echo "status=${PIPESTATUS[1]}"`, bin, os.Args[0])
	sh.Env = append(os.Environ(), fakeagent.Scenario+"=bigline:8388608", "AGENTJQ_GRACE=1s")
	out, _ := sh.CombinedOutput()
	if !strings.Contains(string(out), "status=141") {
		t.Errorf("want status 141 after head closed stdout, got: %s", out)
	}
	if strings.Count(string(out), "\n") > 3 {
		t.Errorf("error flood: %s", out)
	}
}

// TestSpawnRecord: spawn --record writes a recording whose agent output is
// what spawn wrote, byte for byte.
func TestSpawnRecord(t *testing.T) {
	t.Parallel()
	livetest.SkipShort(t, "runs this test binary as the agent")
	ios, out, errb := fakeIO(t, "capture:write-deny", "please WRITE banana\n")
	path := filepath.Join(t.TempDir(), "s.rec")
	if code := Main([]string{"spawn", "--bin", os.Args[0], "--record", path}, ios); code != protocol.ExitDenied {
		t.Fatalf("exit %d: %s", code, errb)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, _, err := recording.NewReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var shown, dirs []string
	for {
		e, err := rd.Next()
		if err != nil {
			break
		}
		dirs = append(dirs, string(e.Dir))
		if e.Dir == protocol.DirOut || e.Dir == protocol.DirEvent {
			shown = append(shown, string(e.Msg))
		}
	}
	if got := strings.Join(shown, "\n") + "\n"; got != out.String() {
		t.Errorf("the recording's out and event lines differ from spawn's stdout")
	}
	joined := strings.Join(dirs, " ")
	if !strings.Contains(joined, "in") || !strings.Contains(joined, "event") {
		t.Errorf("directions recorded: %s", joined)
	}
}

func TestSpawnAgentArgs(t *testing.T) {
	t.Parallel()
	got, err := splitAgentArgs([]string{"--", "--add-dir", "x", "--"})
	if err != nil || strings.Join(got, " ") != "--add-dir x --" {
		t.Errorf("split = %q, %v", got, err)
	}
	for _, args := range [][]string{{"spawn", "--no-such-flag"}, {"spawn", "write a poem"}} {
		ios, _, errb := fakeIO(t, "capture:hello", "")
		if code := Main(append(args[:1:1], append([]string{"--bin", os.Args[0]}, args[1:]...)...), ios); code != protocol.ExitUsage {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		if !strings.Contains(errb.String(), "after --") {
			t.Errorf("%q: %s", args, errb)
		}
	}
}
