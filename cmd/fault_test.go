package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/fakeagent"
	"github.com/agentjq/agentjq/internal/testkit/proctest"
)

// The front ends' section of the fault suite (internal/bridge's
// TestFaultSuite is spawn's): acp, proxy and serve under signals,
// cancels, stalled readers and half-closed input, each run as the real
// binary with this test binary as its agent. Every case must end within
// its bound (a generous deadline, never a latency measurement) and leave
// no process behind.

// faultGraceEnv is each shutdown stage's grace in these cases.
const faultGraceEnv = "AGENTJQ_GRACE=200ms"

// frontBound is the deadline of every case: far more than the stages
// (6 graces of 200 ms) take, for a loaded 2-core machine.
const frontBound = 20 * time.Second

type frontCase struct {
	section, name string
	run           func(t *testing.T, bin string)
}

// front is one agentjq process under test.
type front struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    io.ReadCloser
	log    string // the fake agent's log
	marker string
	stderr *bytes.Buffer

	mu    sync.Mutex
	lines []string
	added chan struct{}
	done  chan struct{}
}

// startFront runs agentjq args with the fake agent playing scenario.
// readOut false leaves its stdout unread: a stalled reader.
func startFront(t *testing.T, bin, scenario string, readOut bool, args ...string) *front {
	t.Helper()
	return startFrontEnv(t, bin, scenario, readOut, nil, args...)
}

// startFrontEnv is startFront with env added (a later value wins).
func startFrontEnv(t *testing.T, bin, scenario string, readOut bool, env []string, args ...string) *front {
	t.Helper()
	f := &front{t: t, log: filepath.Join(t.TempDir(), "fake.log"), marker: proctest.Marker(t),
		stderr: new(bytes.Buffer), added: make(chan struct{}, 1), done: make(chan struct{})}
	f.cmd = exec.Command(bin, args...)
	f.cmd.Env = append(os.Environ(), fakeagent.Scenario+"="+scenario, fakeagent.Log+"="+f.log,
		faultGraceEnv, "AGENTJQ_LEAK_MARKER="+f.marker, "AGENTJQ_HOME="+t.TempDir())
	f.cmd.Env = append(f.cmd.Env, env...)
	f.cmd.Stderr = &syncWriter{w: f.stderr, mu: &f.mu}
	f.stdin, _ = f.cmd.StdinPipe()
	out, _ := f.cmd.StdoutPipe()
	f.out = out
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(f.done)
		if readOut {
			sc := bufio.NewScanner(out)
			sc.Buffer(make([]byte, 1<<20), 64<<20)
			for sc.Scan() {
				f.mu.Lock()
				f.lines = append(f.lines, sc.Text())
				f.mu.Unlock()
				select {
				case f.added <- struct{}{}:
				default:
				}
			}
		}
		f.cmd.Wait()
	}()
	t.Cleanup(func() {
		f.cmd.Process.Kill()
		<-f.done
		proctest.None(t, f.marker, 5*time.Second)
	})
	return f
}

type syncWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (f *front) send(v any) {
	b, _ := json.Marshal(v)
	f.stdin.Write(append(b, '\n'))
}

func (f *front) request(id int, method string, params any) {
	f.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

// response waits for the response to id.
func (f *front) response(id int) map[string]any {
	f.t.Helper()
	deadline := time.Now().Add(frontBound)
	for seen := 0; ; {
		f.mu.Lock()
		lines := f.lines[seen:]
		seen = len(f.lines)
		f.mu.Unlock()
		for _, l := range lines {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["method"] == nil && m["id"] == float64(id) {
				return m
			}
		}
		select {
		case <-f.added:
		case <-f.done:
			f.t.Fatalf("agentjq ended without answering request %d; stderr:\n%s", id, f.stderrText())
		case <-time.After(time.Until(deadline)):
			logb, _ := os.ReadFile(f.log)
			f.t.Fatalf("no response to request %d within %s; stderr:\n%s\nthe agent's log:\n%.3000s", id, frontBound, f.stderrText(), logb)
		}
	}
}

func (f *front) stderrText() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stderr.String()
}

// waitLog waits until the fake agent's log holds s (the agent read a turn).
func (f *front) waitLog(s string) {
	f.t.Helper()
	if !waitLogged(f.log, s, frontBound) {
		f.t.Fatalf("the agent never logged %q; stderr:\n%s", s, f.stderrText())
	}
}

// waitReadingStdin waits until a thread of agentjq is blocked reading its
// stdin (read(0, ...)): it is past its start, signal handlers included,
// and waits for the client. A signal sent earlier would find the Go
// runtime's default and kill it before it could end as documented.
func (f *front) waitReadingStdin() {
	f.t.Helper()
	if readSyscall == "" {
		f.t.Skip("read(2)'s number on this architecture is not known to the test")
	}
	deadline := time.Now().Add(frontBound)
	for time.Now().Before(deadline) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", f.cmd.Process.Pid))
		for _, task := range tasks {
			b, _ := os.ReadFile(task)
			if strings.HasPrefix(string(b), readSyscall+" 0x0 ") {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.t.Fatalf("agentjq never came to read its stdin")
}

// exit waits for agentjq to end and returns its status.
func (f *front) exit() int {
	f.t.Helper()
	select {
	case <-f.done:
		return f.cmd.ProcessState.ExitCode()
	case <-time.After(frontBound):
		f.t.Fatalf("hang: agentjq still running %s later; stderr:\n%s", frontBound, f.stderrText())
		return -1
	}
}

func waitLogged(path, s string, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}

// acpOpen initializes and opens a session; it returns the session id.
func (f *front) acpOpen() string {
	f.t.Helper()
	f.request(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	f.response(1)
	f.request(2, "session/new", map[string]any{"cwd": f.t.TempDir(), "mcpServers": []any{}})
	r := f.response(2)
	res, _ := r["result"].(map[string]any)
	sid, _ := res["sessionId"].(string)
	if sid == "" {
		f.t.Fatalf("session/new: %v", r)
	}
	return sid
}

func (f *front) prompt(id int, sid, text string) {
	f.request(id, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]string{"type": "text", "text": text}}})
}

func stopReason(t *testing.T, r map[string]any) string {
	t.Helper()
	res, _ := r["result"].(map[string]any)
	s, _ := res["stopReason"].(string)
	if s == "" {
		t.Errorf("not a prompt response with a stopReason: %v", r)
	}
	return s
}

func acpSignalCase(name string, sig syscall.Signal, state string) frontCase {
	return frontCase{"acp", name, func(t *testing.T, bin string) {
		f := startFront(t, bin, "ignore-interrupt", true, "acp", "--bin", os.Args[0])
		switch state {
		case "before initialize":
			f.waitReadingStdin()
		case "idle":
			f.acpOpen()
		case "mid-turn":
			sid := f.acpOpen()
			f.prompt(3, sid, "HANG on")
			f.waitLog("HANG on")
		}
		f.cmd.Process.Signal(sig)
		code := f.exit()
		if state != "mid-turn" && code != 0 {
			t.Errorf("exit %d, want 0; stderr:\n%s", code, f.stderrText())
		}
	}}
}

func frontCases() []frontCase {
	return []frontCase{
		acpSignalCase("SIGTERM before initialize", syscall.SIGTERM, "before initialize"),
		acpSignalCase("SIGINT before initialize", syscall.SIGINT, "before initialize"),
		acpSignalCase("SIGHUP before initialize", syscall.SIGHUP, "before initialize"),
		acpSignalCase("SIGTERM idle", syscall.SIGTERM, "idle"),
		acpSignalCase("SIGINT idle", syscall.SIGINT, "idle"),
		acpSignalCase("SIGHUP idle", syscall.SIGHUP, "idle"),
		acpSignalCase("SIGTERM mid-turn, the agent ignoring interrupt and SIGTERM", syscall.SIGTERM, "mid-turn"),
		acpSignalCase("SIGINT mid-turn, the agent ignoring interrupt and SIGTERM", syscall.SIGINT, "mid-turn"),
		acpSignalCase("SIGHUP mid-turn, the agent ignoring interrupt and SIGTERM", syscall.SIGHUP, "mid-turn"),
		{"acp", "three SIGINTs mid-turn kill an agent that ignores interrupt and SIGTERM", func(t *testing.T, bin string) {
			// A grace far longer than the deadline: only the signals
			// can end it in time.
			f := startFrontEnv(t, bin, "ignore-interrupt", true, []string{"AGENTJQ_GRACE=1m"}, "acp", "--bin", os.Args[0])
			sid := f.acpOpen()
			f.prompt(3, sid, "HANG on")
			f.waitLog("HANG on")
			for range 3 {
				f.cmd.Process.Signal(syscall.SIGINT)
				time.Sleep(50 * time.Millisecond)
			}
			f.exit()
		}},
		{"acp", "SIGTERM with a stalled editor reader and a flooding agent", func(t *testing.T, bin string) {
			f := startFront(t, bin, "flood", false, "acp", "--bin", os.Args[0])
			f.request(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
			f.request(2, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
			f.waitLog("PID ")
			time.Sleep(300 * time.Millisecond) // the flood fills every pipe
			f.cmd.Process.Signal(syscall.SIGTERM)
			f.exit()
		}},
		{"acp", "a flooding agent, the editor stops reading, then closes stdin", func(t *testing.T, bin string) {
			f := startFront(t, bin, "flood", false, "acp", "--bin", os.Args[0])
			f.request(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
			f.request(2, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
			f.waitLog("PID ")
			time.Sleep(300 * time.Millisecond)
			f.stdin.Close()
			f.exit()
		}},
		{"acp", "the editor closes its end of stdout, then stdin", func(t *testing.T, bin string) {
			f := startFront(t, bin, "ignore-interrupt", true, "acp", "--bin", os.Args[0])
			sid := f.acpOpen()
			f.out.Close()
			f.prompt(3, sid, "hello") // its updates and answer meet a closed pipe
			f.waitLog("hello")
			f.stdin.Close()
			f.exit()
			if ws, ok := f.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Errorf("agentjq was killed by %v", ws.Signal())
			}
		}},
		{"acp", "session/cancel against an agent that ignores interrupt", func(t *testing.T, bin string) {
			f := startFront(t, bin, "ignore-interrupt", true, "acp", "--bin", os.Args[0])
			sid := f.acpOpen()
			f.prompt(3, sid, "HANG on")
			f.waitLog("HANG on")
			f.send(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
			if got := stopReason(t, f.response(3)); got != "cancelled" {
				t.Errorf("the cancelled prompt's stopReason is %q, want cancelled", got)
			}
			f.prompt(4, sid, "and now?")
			if got := stopReason(t, f.response(4)); got != "end_turn" {
				t.Errorf("the next prompt's stopReason is %q, want end_turn; stderr:\n%s", got, f.stderrText())
			}
			f.stdin.Close()
			if code := f.exit(); code != 0 {
				t.Errorf("exit %d after the editor closed stdin", code)
			}
		}},
		{"proxy", "a half-closed client stdin still gets the policy deny, and the CLI ends", func(t *testing.T, bin string) {
			policy := filepath.Join(t.TempDir(), "deny.json")
			os.WriteFile(policy, []byte(`{"deny":["Bash(rm -rf:*)"],"default":"ask"}`), 0o644)
			f := startFront(t, bin, "ask-deny", true, "proxy", "--bin", os.Args[0], "--policy", policy)
			f.stdin.Write([]byte("TURN\n"))
			f.stdin.Close()
			if code := f.exit(); code != 0 {
				t.Errorf("exit %d, want the CLI's 0; stderr:\n%s", code, f.stderrText())
			}
			b, _ := os.ReadFile(f.log)
			if !strings.Contains(string(b), `"request_id":"req-1"`) || !strings.Contains(string(b), `"behavior":"deny"`) {
				t.Errorf("the CLI never got the policy's deny:\n%s", b)
			}
			if strings.Contains(f.stderrText(), "could not answer") {
				t.Errorf("stderr: %s", f.stderrText())
			}
		}},
		{"proxy", "three SIGTERMs end a CLI that ignores them", func(t *testing.T, bin string) {
			f := startFront(t, bin, "ignore-interrupt", true, "proxy", "--bin", os.Args[0])
			f.stdin.Write([]byte(`{"type":"user","message":{"role":"user","content":"HANG on"}}` + "\n"))
			f.waitLog("HANG on")
			for range 3 {
				f.cmd.Process.Signal(syscall.SIGTERM)
				time.Sleep(50 * time.Millisecond)
			}
			if code := f.exit(); code != 128+int(syscall.SIGKILL) {
				t.Errorf("exit %d, want %d (the CLI killed)", code, 128+int(syscall.SIGKILL))
			}
		}},
		{"serve", "--stdio answers every request written before EOF", func(t *testing.T, bin string) {
			f := startFront(t, bin, "echo-turns", true, "serve", "--stdio")
			var b bytes.Buffer
			for i := 1; i <= 100; i++ {
				fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"system.health","params":{}}`+"\n", i)
			}
			f.stdin.Write(b.Bytes())
			f.stdin.Close()
			if code := f.exit(); code != 0 {
				t.Errorf("exit %d", code)
			}
			for i := 1; i <= 100; i++ {
				if r := f.response(i); r["result"] == nil {
					t.Fatalf("request %d: %v", i, r)
				}
			}
		}},
		{"serve", "a missing agent binary fails session.create", func(t *testing.T, bin string) {
			f := startFront(t, bin, "echo-turns", true, "serve", "--stdio", "--bin", "/nonexistent/agent")
			f.request(1, "session.create", map[string]any{"workdir": t.TempDir()})
			r := f.response(1)
			e, _ := r["error"].(map[string]any)
			if e == nil || !strings.Contains(fmt.Sprint(e["message"]), "/nonexistent/agent") {
				t.Errorf("session.create with a missing agent: %v", r)
			}
			f.request(2, "session.list", map[string]any{})
			if l := fmt.Sprint(f.response(2)["result"]); strings.Contains(l, "sessionId") {
				t.Errorf("the failed session is listed: %s", l)
			}
			f.stdin.Close()
			f.exit()
		}},
		{"serve", "three SIGTERMs mid-turn kill an agent that ignores interrupt and SIGTERM", func(t *testing.T, bin string) {
			f := startFrontEnv(t, bin, "ignore-interrupt", true, []string{"AGENTJQ_GRACE=1m"}, "serve", "--stdio", "--bin", os.Args[0])
			f.request(1, "session.create", map[string]any{"workdir": t.TempDir()})
			res, _ := f.response(1)["result"].(map[string]any)
			f.request(2, "session.prompt", map[string]any{"sessionId": res["sessionId"], "text": "HANG on"})
			f.response(2)
			f.waitLog("HANG on")
			for range 3 {
				f.cmd.Process.Signal(syscall.SIGTERM)
				time.Sleep(50 * time.Millisecond)
			}
			f.exit()
		}},
		{"serve", "SIGTERM mid-turn, the agent ignoring interrupt and SIGTERM", func(t *testing.T, bin string) {
			f := startFront(t, bin, "ignore-interrupt", true, "serve", "--stdio", "--bin", os.Args[0])
			f.request(1, "session.create", map[string]any{"workdir": t.TempDir()})
			res, _ := f.response(1)["result"].(map[string]any)
			f.request(2, "session.prompt", map[string]any{"sessionId": res["sessionId"], "text": "HANG on"})
			f.response(2)
			f.waitLog("HANG on")
			f.cmd.Process.Signal(syscall.SIGTERM)
			f.exit()
		}},
	}
}

// TestFaultSuiteFrontEnds runs the front ends' fault cases and reports,
// per front end, how many passed.
func TestFaultSuiteFrontEnds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("fault suite: builds the binary, spawns fake agents")
	}
	bin := buildAgentjq(t)
	passed, total := map[string]int{}, map[string]int{}
	var report []string
	for _, fc := range frontCases() {
		start := time.Now()
		ran := false
		ok := t.Run(fc.section+": "+fc.name, func(t *testing.T) { ran = true; fc.run(t, bin) })
		if !ran {
			continue
		}
		total[fc.section]++
		if ok {
			passed[fc.section]++
		}
		report = append(report, fmt.Sprintf("%-6s %-75s %-4v %s", fc.section, fc.name, ok, time.Since(start).Round(time.Millisecond)))
	}
	t.Logf("front-end fault suite: acp %d/%d, proxy %d/%d, serve %d/%d\n%s", passed["acp"], total["acp"],
		passed["proxy"], total["proxy"], passed["serve"], total["serve"], strings.Join(report, "\n"))
}
