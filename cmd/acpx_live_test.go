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
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentjq/agentjq/internal/testkit/livetest"
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

// TestLiveACPXExec: acpx's one-shot exec against agentjq acp: a session,
// a turn streamed as chunks, end_turn, every message valid.
func TestLiveACPXExec(t *testing.T) {
	t.Parallel()
	w := newACPXWorld(t)
	r := w.acpx("--format", "json", "--approve-all", "exec", "HELLO").ok(t)
	if got := r.stopReason(t); got != "end_turn" {
		t.Errorf("stopReason %q", got)
	}
	if got := r.joined(); got != "Hello from the scripted model." {
		t.Errorf("the answer %q", got)
	}
	res, _ := r.result("session/new")
	id, _ := res["sessionId"].(string)
	if got, want := headerVersion(t, filepath.Join(w.rec, id+".ndjson")), livetest.CLIVersion(t, w.claude); got != want {
		t.Errorf("the recording's header says agent_version %q, want %q", got, want)
	}
	// usage_update: numbers acpx accepts (it answered the prompt).
	usage := r.updates("usage_update")
	if len(usage) != 1 {
		t.Fatalf("%d usage_update, want 1 at the end of the turn", len(usage))
	}
	used, _ := usage[0]["used"].(float64)
	size, _ := usage[0]["size"].(float64)
	if used <= 0 || size < used {
		t.Errorf("usage_update %v: want used > 0 tokens of a larger window", usage[0])
	}
	// Slash commands carry claude's descriptions, not their own names.
	described := 0
	cmds := r.updates("available_commands_update")
	if len(cmds) == 0 {
		t.Fatalf("no available_commands_update")
	}
	all, _ := cmds[len(cmds)-1]["availableCommands"].([]any)
	for _, c := range all {
		c := c.(map[string]any)
		if d, _ := c["description"].(string); d != "" && d != "/"+c["name"].(string) {
			described++
		}
	}
	if len(all) == 0 || described < len(all)/2 {
		t.Errorf("%d of %d slash commands described: %v", described, len(all), all)
	}
}

// TestLiveACPXRecordDirMade: a --record-dir that does not exist yet is
// made.
func TestLiveACPXRecordDirMade(t *testing.T) {
	t.Parallel()
	w := newACPXWorld(t)
	w.rec = filepath.Join(t.TempDir(), "state", "agentjq", "acp")
	r := w.acpx("--format", "json", "--approve-all", "exec", "HELLO").ok(t)
	res, _ := r.result("session/new")
	id, _ := res["sessionId"].(string)
	if _, err := os.Stat(filepath.Join(w.rec, id+".ndjson")); err != nil {
		t.Errorf("no recording in the new record dir: %v", err)
	}
}

// TestLiveACPXNoClaude: without the agent, agentjq acp still answers
// initialize; session/new fails saying what is missing, and acpx shows it.
func TestLiveACPXNoClaude(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, bin, want, shown string }{
		{"bin", "/nonexistent/claude", "/nonexistent/claude", "/nonexistent/claude"},
		{"path", "", `"claude" not found on PATH`, "not found on PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newACPXWorld(t)
			w.claude = tc.bin
			if tc.bin == "" {
				// agent() passes --bin ""; the PATH has no claude.
				w.env = append(w.env, "PATH=/usr/bin:/bin")
			}
			r := w.acpx("--format", "json", "--approve-all", "exec", "HELLO")
			if r.code == 0 {
				t.Fatalf("acpx exec without claude exited 0")
			}
			if res, _ := r.result("initialize"); res == nil {
				t.Errorf("initialize not answered")
			}
			_, rpcErr := r.result("session/new")
			if msg, _ := rpcErr["message"].(string); !strings.Contains(msg, tc.want) {
				t.Errorf("session/new error %v, want it to name %s", rpcErr, tc.want)
			}
			if !strings.Contains(r.stderr+r.stdout, tc.shown) {
				t.Errorf("acpx does not show %q:\n%s", tc.shown, r.stderr)
			}
		})
	}
}

// TestLiveACPXNewThenPrompt: acpx's normal flow: sessions new in one
// process, then prompts from the next ones, each a new agentjq acp that
// takes the session up by its id (session/resume); the second prompt has
// the first in claude's history.
func TestLiveACPXNewThenPrompt(t *testing.T) {
	t.Parallel()
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

// exitEvent is the exit event a recording ends with (nil: none).
func exitEvent(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	for _, line := range bytes.Split(b, []byte("\n")) {
		var e struct {
			Dir string         `json:"dir"`
			Msg map[string]any `json:"msg"`
		}
		if json.Unmarshal(line, &e) == nil && e.Dir == "event" && e.Msg["subtype"] == "exit" {
			ev = e.Msg
		}
	}
	return ev
}

// initModes are the permission modes of the init lines in a recording.
func initModes(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var modes []string
	for _, line := range bytes.Split(b, []byte("\n")) {
		var e struct {
			Dir string `json:"dir"`
			Msg struct {
				Type, Subtype  string
				PermissionMode string `json:"permissionMode"`
			} `json:"msg"`
		}
		if json.Unmarshal(line, &e) == nil && e.Dir == "out" && e.Msg.Type == "system" && e.Msg.Subtype == "init" {
			modes = append(modes, e.Msg.PermissionMode)
		}
	}
	return modes
}

// TestLiveACPXCreatedOnlyNotCrashed: acpx ends the agent of sessions new
// (no prompt sent) by closing its stdin and, 100ms later, signalling it
// and its descendants, claude included. The recording says the session
// ended with no turn, not that it crashed with a turn in flight. (Which
// of agentjq and claude sees the signal first is a race; the bridge's
// TestIdleAgentSignalledAtEndIsNoCrash plays the losing order
// deterministically. On a loaded machine acpx's SIGKILL, 1.5s after its
// SIGTERM, may also come before agentjq has written the exit event: the
// recording then just ends, claiming nothing.)
func TestLiveACPXCreatedOnlyNotCrashed(t *testing.T) {
	t.Parallel()
	w := newACPXWorld(t)
	id := w.newSession()
	ev := exitEvent(t, filepath.Join(w.rec, id+".ndjson"))
	if ev == nil {
		t.Logf("agentjq was killed before its exit event")
		return
	}
	t.Logf("exit event: %v", ev)
	if ev["outcome"] == "crashed" || strings.Contains(fmt.Sprint(ev["error"]), "in flight") || ev["turns"] != float64(0) {
		t.Errorf("sessions new recorded as %v", ev)
	}
}

// TestLiveACPXModeAcrossProcesses: set-mode plan from one acpx process,
// the prompt from the next: the new agentjq acp resumes the session in
// plan (the mode claude was left in), says so in session/resume's modes,
// and claude runs the turn in it.
func TestLiveACPXModeAcrossProcesses(t *testing.T) {
	t.Parallel()
	w := newACPXWorld(t)
	id := w.newSession()
	w.acpx("set-mode", "plan").ok(t)
	// The queue owner of set-mode idles out before the prompt, so the
	// prompt's is a new agentjq acp.
	for deadline := time.Now().Add(30 * time.Second); len(w.homeProcs()) > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("set-mode's queue owner still runs 30s after its TTL: %v", w.homeProcs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	r := w.acpx("--format", "json", "--approve-all", "prompt", "HELLO").ok(t)
	res, rpcErr := r.result("session/resume")
	if res == nil {
		t.Fatalf("session/resume: no result (error %v)", rpcErr)
	}
	if got := res["modes"].(map[string]any)["currentModeId"]; got != "plan" {
		t.Errorf("session/resume answered currentModeId %v, want plan", got)
	}
	if got := r.stopReason(t); got != "end_turn" {
		t.Errorf("stopReason %q", got)
	}
	segs := segmentsOf(t, w.rec, id)
	if modes := initModes(t, segs[len(segs)-1]); len(modes) == 0 || modes[0] != "plan" {
		t.Errorf("claude's init modes in the resumed session: %v, want plan", modes)
	}
}

// segmentsOf are the recording files of session id, in order.
func segmentsOf(t *testing.T, dir, id string) []string {
	t.Helper()
	segs := []string{filepath.Join(dir, id+".ndjson")}
	for i := 2; ; i++ {
		p := filepath.Join(dir, fmt.Sprintf("%s.%d.ndjson", id, i))
		if _, err := os.Stat(p); err != nil {
			return segs
		}
		segs = append(segs, p)
	}
}

// TestLiveACPXList: acpx's sessions list shows agentjq's recorded
// sessions (session/list) with the first prompt as the title; a cwd
// filter that matches none shows none.
func TestLiveACPXList(t *testing.T) {
	t.Parallel()
	w := newACPXWorld(t)
	id := w.newSession()
	w.acpx("--approve-all", "prompt", "HELLO").ok(t)
	r := w.acpx("--format", "json", "sessions", "list").ok(t)
	var list struct {
		Sessions []struct {
			SessionID, Cwd, Title, UpdatedAt string
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &list); err != nil {
		t.Fatalf("sessions list: %v: %s", err, r.stdout)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != id || list.Sessions[0].Title != "HELLO" ||
		list.Sessions[0].Cwd != w.dir || list.Sessions[0].UpdatedAt == "" {
		t.Errorf("sessions list %+v, want %s titled HELLO in %s", list.Sessions, id, w.dir)
	}
	other := t.TempDir()
	r = w.acpx("--format", "json", "sessions", "list", "--filter-cwd", other).ok(t)
	if strings.Contains(r.stdout, id) {
		t.Errorf("sessions list --filter-cwd %s lists %s: %s", other, id, r.stdout)
	}
}

// onePixelPNG is a 1x1 PNG.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// TestLiveACPXImage: an image in the prompt (acpx sends it only to an
// agent whose promptCapabilities.image is true) reaches the model as an
// image block.
func TestLiveACPXImage(t *testing.T) {
	t.Parallel()
	w := newACPXWorld(t)
	prompt := filepath.Join(t.TempDir(), "prompt.json")
	b, _ := json.Marshal([]map[string]string{{"type": "text", "text": "HELLO"}, {"type": "image", "mimeType": "image/png", "data": onePixelPNG}})
	os.WriteFile(prompt, b, 0o644)
	r := w.acpx("--format", "json", "--approve-all", "exec", "--file", prompt).ok(t)
	if got := r.stopReason(t); got != "end_turn" {
		t.Errorf("stopReason %q", got)
	}
	found := false
	for _, req := range w.api.MessagesRequests() {
		found = found || bytes.Contains(req.Body, []byte(`"type":"image"`)) && bytes.Contains(req.Body, []byte(onePixelPNG[:40]))
	}
	if !found {
		t.Errorf("no request to the model carries the image")
	}
}

// httpMCP is a minimal MCP server over streamable HTTP (JSON responses):
// one tool, ping, that answers pong-from-web. It notes the Authorization
// header of each request.
type httpMCP struct {
	mu    sync.Mutex
	auth  []string
	calls int
}

func (m *httpMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	resp, status := m.answer(r)
	if resp == nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(resp)
}

// answer is the JSON-RPC response to a request (nil for a notification,
// with the HTTP status to answer).
func (m *httpMCP) answer(r *http.Request) ([]byte, int) {
	m.mu.Lock()
	m.auth = append(m.auth, r.Header.Get("Authorization"))
	m.mu.Unlock()
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		return nil, http.StatusBadRequest
	}
	if req.ID == nil {
		return nil, http.StatusAccepted // a notification
	}
	var result any
	switch req.Method {
	case "initialize":
		result = map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]string{"name": "web", "version": "1"}}
	case "tools/list":
		result = map[string]any{"tools": []any{map[string]any{"name": "ping", "description": "Answers pong.",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"note": map[string]string{"type": "string"}}}}}}
	case "tools/call":
		m.mu.Lock()
		m.calls++
		m.mu.Unlock()
		result = map[string]any{"content": []any{map[string]string{"type": "text", "text": "pong-from-web"}}}
	default:
		result = map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	return b, http.StatusOK
}

// sseMCP is httpMCP over MCP's HTTP+SSE transport: GET /sse is the event
// stream, whose first event names the endpoint the client POSTs to; the
// responses come as message events on the stream.
type sseMCP struct {
	httpMCP
	out chan []byte
}

func (m *sseMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/sse":
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		fmt.Fprintf(w, "event: endpoint\ndata: /messages\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case b := <-m.out:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case r.Method == http.MethodPost && r.URL.Path == "/messages":
		resp, _ := m.answer(r)
		w.WriteHeader(http.StatusAccepted)
		if resp != nil {
			m.out <- resp
		}
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// TestLiveACPXHTTPMCP: an http or sse MCP server of acpx's --mcp-config
// goes to claude through session/new (mcpCapabilities), headers
// included; claude calls its tool.
func TestLiveACPXHTTPMCP(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"http", "sse"} {
		t.Run(typ, func(t *testing.T) {
			w := newACPXWorld(t)
			srv := &sseMCP{out: make(chan []byte, 16)}
			var h http.Handler = &srv.httpMCP
			url := "/mcp"
			if typ == "sse" {
				h, url = srv, "/sse"
			}
			hs := httptest.NewServer(h)
			defer hs.Close()
			cfg := filepath.Join(t.TempDir(), "mcp.json")
			b, _ := json.Marshal(map[string]any{"mcpServers": []any{map[string]any{"type": typ, "name": "web", "url": hs.URL + url,
				"headers": []any{map[string]string{"name": "Authorization", "value": "Bearer web-token"}}}}})
			os.WriteFile(cfg, b, 0o644)
			r := w.acpx("--format", "json", "--approve-all", "--mcp-config", cfg, "exec", "TOOL mcp__web__ping {\"note\":\"hi\"}\nSAY done").ok(t)
			if got := r.stopReason(t); got != "end_turn" {
				t.Errorf("stopReason %q", got)
			}
			if got := r.joined(); !strings.Contains(got, "mcp__web__ping ok: pong-from-web") {
				t.Errorf("the answer %q lacks the server's result", got)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if srv.calls != 1 {
				t.Errorf("the tool was called %d times, want 1", srv.calls)
			}
			for _, a := range srv.auth {
				if a != "Bearer web-token" {
					t.Errorf("a request with Authorization %q", a)
				}
			}
		})
	}
}
