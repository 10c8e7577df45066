package cmd

// Live tests of agentjq acp with acpx 0.19.1 (openclaw's headless ACP
// client, npm, pinned in the Makefile's NODE_CLIENTS) as the editor: its
// CLI runs agentjq acp as a custom agent (--agent), each acpx command a
// process of its own, as a script or an orchestrator uses it; acpx keeps
// its session records under $HOME/.acpx and reconnects to a session with
// session/resume (or session/load) from a new agent process. claude is
// the real CLI offline against the scripted Messages API. Every JSON-RPC
// message acpx prints (--format json prints both directions) is validated
// against ACP's schema (testdata/acp/validate.mjs); acpx itself refuses an
// invalid one with "Invalid params".

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

type acpxWorld struct {
	*acpWorld
	cli  string // acpx's cli.js
	home string // $HOME of acpx, agentjq and claude
	rec  string // --record-dir
	// acpArgs are more agentjq acp flags.
	acpArgs []string
}

func newACPXWorld(t *testing.T) *acpxWorld {
	t.Helper()
	w := &acpxWorld{acpWorld: newACPWorld(t), rec: filepath.Join(t.TempDir(), "rec")}
	w.cli = filepath.Join(w.nm, "acpx", "dist", "cli.js")
	if _, err := os.Stat(w.cli); err != nil {
		msg := "acpx 0.19.1 is not installed (make node-clients): " + err.Error()
		if os.Getenv("AGENTJQ_REQUIRE_LIVE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, kv := range w.env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			w.home = v
		}
	}
	t.Cleanup(func() { w.noneLeft(t) })
	return w
}

// agent is the agentjq acp command line acpx runs (acpx splits it as a
// shell does).
func (w *acpxWorld) agent() string {
	args := []string{w.bin, "acp", "--bin", w.claude, "--timeout", "90s"}
	if w.rec != "" {
		args = append(args, "--record-dir", w.rec)
	}
	args = append(args, w.acpArgs...)
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shQuote(a)
	}
	return strings.Join(q, " ")
}

type acpxRun struct {
	args   []string
	stdout string
	stderr string
	code   int
	msgs   []map[string]any // the JSON-RPC messages, with --format json
}

// acpx runs one acpx command: the agent, the cwd and a short queue-owner
// TTL (acpx keeps the agent of a session alive between prompts in a
// background process; the test's cleanup waits for it to end).
func (w *acpxWorld) acpx(args ...string) acpxRun {
	t := w.t
	t.Helper()
	argv := append([]string{w.cli, "--agent", w.agent(), "--cwd", w.dir, "--ttl", "3", "--timeout", "100"}, args...)
	c := exec.Command("node", argv...)
	c.Env = w.env
	c.Dir = w.dir
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(150 * time.Second):
		c.Process.Kill()
		<-done
		t.Fatalf("acpx %v hung\nstderr:\n%s", args, errb.String())
	}
	r := acpxRun{args: args, stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["jsonrpc"] == "2.0" {
			r.msgs = append(r.msgs, m)
		}
	}
	t.Logf("acpx %s: exit %d, %d messages; stderr:\n%s", strings.Join(args, " "), r.code, len(r.msgs), r.stderr)
	if len(r.msgs) > 0 {
		w.validate(r)
	}
	return r
}

// ok fails the test unless acpx exited 0.
func (r acpxRun) ok(t *testing.T) acpxRun {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("acpx %v: exit %d\nstdout:\n%.3000s\nstderr:\n%.3000s", r.args, r.code, r.stdout, r.stderr)
	}
	return r
}

// validate checks every message of r against ACP's schema.
func (w *acpxWorld) validate(r acpxRun) {
	t := w.t
	t.Helper()
	c := exec.Command("node", filepath.Join("testdata", "acp", "validate.mjs"))
	c.Env = append(os.Environ(), "AGENTJQ_NODE_MODULES="+w.nm)
	c.Stdin = strings.NewReader(r.stdout)
	out, err := c.Output()
	if err != nil {
		t.Fatalf("validate.mjs: %v", err)
	}
	var v struct {
		Messages int              `json:"messages"`
		Invalid  []map[string]any `json:"invalid"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("validate.mjs: %v: %s", err, out)
	}
	if v.Messages != len(r.msgs) {
		t.Errorf("validated %d messages of %d", v.Messages, len(r.msgs))
	}
	for _, bad := range v.Invalid {
		t.Errorf("acpx %v: a message does not validate against ACP's schema: %v", r.args, bad)
	}
}

// result is the result of the (last) request of method, or nil; its
// error, if it failed.
func (r acpxRun) result(method string) (res map[string]any, rpcErr map[string]any) {
	ids := map[string]bool{}
	for _, m := range r.msgs {
		if m["method"] == method && m["id"] != nil {
			ids[fmt.Sprint(m["id"])] = true
		}
	}
	for _, m := range r.msgs {
		if m["method"] != nil || !ids[fmt.Sprint(m["id"])] {
			continue
		}
		res, _ = m["result"].(map[string]any)
		rpcErr, _ = m["error"].(map[string]any)
	}
	return res, rpcErr
}

// updates are the session/update notifications' update members.
func (r acpxRun) updates(kind string) []map[string]any {
	var out []map[string]any
	for _, m := range r.msgs {
		if m["method"] != "session/update" {
			continue
		}
		u, _ := m["params"].(map[string]any)["update"].(map[string]any)
		if kind == "" || u["sessionUpdate"] == kind {
			out = append(out, u)
		}
	}
	return out
}

// joined is the agent's message text, its chunks joined.
func (r acpxRun) joined() string {
	var b strings.Builder
	for _, u := range r.updates("agent_message_chunk") {
		if c, ok := u["content"].(map[string]any); ok {
			s, _ := c["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// stopReason is the last session/prompt's stop reason.
func (r acpxRun) stopReason(t *testing.T) string {
	t.Helper()
	res, rpcErr := r.result("session/prompt")
	if res == nil {
		t.Errorf("acpx %v: session/prompt answered no result (error %v)", r.args, rpcErr)
		return ""
	}
	s, _ := res["stopReason"].(string)
	return s
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// newSession runs acpx sessions new and returns the session id it printed.
func (w *acpxWorld) newSession() string {
	w.t.Helper()
	r := w.acpx("sessions", "new").ok(w.t)
	id := uuidRE.FindString(r.stdout)
	if id == "" {
		w.t.Fatalf("sessions new printed no session id: %q", r.stdout)
	}
	return id
}

// homeProcs are the processes running with the test's HOME: acpx's queue
// owners, agentjq and claude.
func (w *acpxWorld) homeProcs() []int {
	want := []byte("HOME=" + w.home + "\x00")
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, want) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// noneLeft: once acpx's queue owner has idled out (--ttl), nothing the
// test started runs on: no agentjq, no claude. What is left is reported
// and killed.
func (w *acpxWorld) noneLeft(t *testing.T) {
	deadline := time.Now().Add(30 * time.Second)
	for len(w.homeProcs()) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	for _, pid := range w.homeProcs() {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		t.Errorf("still running 30s after acpx's queue owner's TTL: pid %d %q", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// TestACPXLiveExec: acpx's one-shot exec against agentjq acp: a session,
// a turn streamed as chunks, end_turn, every message valid.
func TestACPXLiveExec(t *testing.T) {
	w := newACPXWorld(t)
	r := w.acpx("--format", "json", "--approve-all", "exec", "HELLO").ok(t)
	if got := r.stopReason(t); got != "end_turn" {
		t.Errorf("stopReason %q", got)
	}
	if got := r.joined(); got != "Hello from the scripted model." {
		t.Errorf("the answer %q", got)
	}
}

// TestACPXLiveNewThenPrompt: acpx's normal flow: sessions new in one
// process, then prompts from the next ones, each a new agentjq acp that
// takes the session up by its id (session/resume); the second prompt has
// the first in claude's history.
func TestACPXLiveNewThenPrompt(t *testing.T) {
	w := newACPXWorld(t)
	id := w.newSession()
	r := w.acpx("--format", "json", "--approve-all", "prompt", "HELLO").ok(t)
	if got := r.stopReason(t); got != "end_turn" {
		t.Errorf("stopReason %q", got)
	}
	if got := r.joined(); got != "Hello from the scripted model." {
		t.Errorf("the answer %q", got)
	}
	for _, m := range r.msgs {
		if m["method"] == "session/prompt" {
			if got := m["params"].(map[string]any)["sessionId"]; got != id {
				t.Errorf("prompted session %v, want %s (the one sessions new made)", got, id)
			}
		}
	}
	// The queue owner's agent may still be up (TTL): the next prompt
	// goes either to it or to a new agentjq; both must know the turn.
	r = w.acpx("--format", "json", "--approve-all", "prompt", "HELLO again").ok(t)
	if got := r.stopReason(t); got != "end_turn" {
		t.Errorf("second prompt: stopReason %q", got)
	}
	reqs := w.api.MessagesRequests()
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "Hello from the scripted model.") || !strings.Contains(last, "HELLO again") {
		t.Errorf("the second prompt's request lacks the first turn: %.600s", last)
	}
}
